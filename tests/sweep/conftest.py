"""Small sweeps for the engine tests: two variants of the inference-growth scenario, two plans,
12 replications in blocks of 5 (3 tasks per variant), and an engine that runs in-process."""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from costsim.cli.scenario_names import load_scenario_file, load_variant_file
from costsim.scenario.overrides import cartesian, parse_set
from costsim.sweep.tasks import SweepSettings, SweepVariant

SCENARIOS = Path(__file__).parents[2] / "scenarios"
SCENARIO = SCENARIOS / "inference-growth.yaml"
PLANS = ("h100-on-demand", "reserve-2-quoted")


def sweep_variant(path: Path, *sets: str) -> list[SweepVariant]:
    """The variants of ``path`` under ``--set`` flags (none: the file as written)."""
    if not sets:
        loaded = [load_scenario_file(path)]
    else:
        loaded = [load_variant_file(path, v) for v in cartesian([parse_set(s) for s in sets])]
    return [SweepVariant(label=x.variant.label if x.variant else "as written",
                         overrides=x.variant.as_dict() if x.variant else {},
                         scenario=x.scenario, resolved=x.resolved,
                         referenced_sha256=dict(x.referenced_sha256)) for x in loaded]


@pytest.fixture(scope="session")
def variants() -> list[SweepVariant]:
    """H100 prices 10 % and 40 % below the book."""
    return sweep_variant(SCENARIO, "prices.gpu_price_change_pct.H100=-10,-40")


@pytest.fixture
def settings() -> SweepSettings:
    return SweepSettings(seed=7, replications=12, block_size=5, plans=PLANS,
                         costsim_version="test", price_book="test-book")


class InProcessEngine:
    """Runs each task at once in this process, counting them (what ran, in which order)."""

    name = "in-process"
    workers = 1

    def __init__(self, order: Callable[[list[Any]], list[Any]] | None = None) -> None:
        self.calls: list[str] = []
        self._order = order

    def submit(self, fn: Callable[..., Any], *args: Any, label: str) -> cf.Future[Any]:
        self.calls.append(label)
        values = [a.result() if isinstance(a, cf.Future) else a for a in args]
        future: cf.Future[Any] = cf.Future()
        future.set_result(fn(*values))
        return future

    def done(self, pending: Iterable[Any]) -> set[Any]:
        handles = list(pending)
        return set(self._order(handles)[:1] if self._order else handles)

    def result(self, handle: Any) -> Any:
        return handle.result()

    def release(self, handle: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def blocks_run(self) -> int:
        return sum(label.startswith("block-") for label in self.calls)
