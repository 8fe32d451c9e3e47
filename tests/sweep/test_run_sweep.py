"""run_sweep: a variant equal to the scenario gives `run`'s figures; results do not depend on
the order tasks finish in; an interrupted sweep resumes without recomputing a finished task;
an edited input recomputes exactly the tasks it affects."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from costsim.sim.run_result import simulate_scenario
from costsim.sweep.cache import TaskCache
from costsim.sweep.run import run_sweep
from costsim.sweep.tasks import SweepSettings, SweepVariant

from .conftest import PLANS, SCENARIO, InProcessEngine, sweep_variant


def test_the_scenario_as_written_gives_runs_figures_bit_for_bit(settings: SweepSettings
                                                                ) -> None:
    (variant,) = sweep_variant(SCENARIO)
    swept = run_sweep([variant], settings, InProcessEngine())
    run = simulate_scenario(variant.scenario, seed=settings.seed,
                            replications=settings.replications, plans=list(PLANS))
    assert [row.result for row in swept.rows] == list(run.plans)
    assert swept.tasks == 3  # 12 replications in blocks of 5: 5 + 5 + 2


def test_results_do_not_depend_on_the_order_tasks_finish(variants: list[SweepVariant],
                                                         settings: SweepSettings) -> None:
    in_order = run_sweep(variants, settings, InProcessEngine())
    shuffled = run_sweep(variants, settings, InProcessEngine(
        order=lambda handles: random.Random(3).sample(handles, len(handles))))
    assert in_order.rows == shuffled.rows
    assert [r.label for r in in_order.rows] == ["H100=-10", "H100=-10", "H100=-40", "H100=-40"]
    cheaper = [r.result.cost_usd.mean for r in in_order.rows
               if r.result.name == "h100-on-demand" and r.result.cost_usd]
    assert cheaper[1] < cheaper[0]  # H100s 40 % off cost less than 10 % off


class KilledError(Exception):
    """Stands in for a kill midway."""


def test_an_interrupted_sweep_resumes_without_recomputing_finished_tasks(
        variants: list[SweepVariant], settings: SweepSettings, tmp_path: Path) -> None:
    whole = run_sweep(variants, settings, InProcessEngine())
    finished = []

    def stop_after_four(task: object) -> None:
        finished.append(task)
        if len(finished) == 4:
            raise KilledError

    with pytest.raises(KilledError):
        run_sweep(variants, settings, InProcessEngine(), cache=TaskCache(tmp_path),
                  task_done=stop_after_four)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "cache").glob("block-*")}
    assert len(stamps) == 4
    engine = InProcessEngine()
    resumed = run_sweep(variants, settings, engine, cache=TaskCache(tmp_path))
    assert (resumed.tasks_from_cache, resumed.tasks_computed) == (4, 2)
    assert engine.blocks_run() == 2
    assert resumed.rows == whole.rows
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())  # nothing rewritten
    again = InProcessEngine()
    assert run_sweep(variants, settings, again, cache=TaskCache(tmp_path)).rows == whole.rows
    assert again.calls == []  # finished: nothing runs, not even a preparation


def test_an_edited_input_recomputes_what_it_affects_and_nothing_else(
        variants: list[SweepVariant], settings: SweepSettings, tmp_path: Path) -> None:
    run_sweep(variants, settings, InProcessEngine(), cache=TaskCache(tmp_path))
    # the second variant's price file changed (its referenced file's hash)
    edited = [variants[0], dataclasses.replace(variants[1],
                                               referenced_sha256={"prices.csv": "0" * 64})]
    engine = InProcessEngine()
    result = run_sweep(edited, settings, engine, cache=TaskCache(tmp_path))
    assert (result.tasks_from_cache, result.tasks_computed) == (3, 3)
    assert all(label.startswith(("prep-1-", "block-1-")) for label in engine.calls)
    for changed in (dataclasses.replace(settings, seed=8),
                    dataclasses.replace(settings, costsim_version="other"),
                    dataclasses.replace(settings, price_book="other-book")):
        assert run_sweep(variants, changed, InProcessEngine(),
                         cache=TaskCache(tmp_path)).tasks_from_cache == 0


def test_an_infeasible_plan_is_a_row_with_its_reasons(settings: SweepSettings) -> None:
    (variant,) = sweep_variant(SCENARIO, "phases.serve.slo.ttft_p95_s=0.0001")
    result = run_sweep([variant], settings, InProcessEngine())
    assert [r.result.feasible for r in result.rows] == [False, False]
    assert all(r.result.infeasible_reasons for r in result.rows)
