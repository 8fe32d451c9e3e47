"""A sweep's results: one row per variant × plan, and the table written to ``--out``.

The row carries the plan's full :class:`~costsim.sim.montecarlo.PlanResult` (the figures of
``run``), so the report draws from the same numbers the table holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costsim.sim.montecarlo import PlanResult
from costsim.sweep.tasks import SweepSettings


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepRow:
    """One plan of one variant."""

    variant: int  # the variant's position in the sweep
    label: str  # e.g. "phases.train.tokens=2e12, prices.gpu_price_change_pct.H100=-10"
    overrides: Mapping[str, Any]
    result: PlanResult
    name: str = ""  # a sweep file's name for the variant
    limit_breaches: tuple[str, ...] = ()  # why the plan is outside the scenario's risk limits


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepResult:
    """What a sweep computed, and how."""

    settings: SweepSettings
    rows: tuple[SweepRow, ...]
    variants: int
    tasks: int
    tasks_computed: int  # run by the engine this time
    tasks_from_cache: int  # finished by an earlier run (--resume)
    engine: str  # "dask" | "process-pool"
    workers: int
    wall_s: float = 0.0

    @property
    def swept_keys(self) -> tuple[str, ...]:
        """Every key path some variant overrides, in the order first met."""
        keys: dict[str, None] = {}
        for row in self.rows:
            keys.update(dict.fromkeys(row.overrides))
        return tuple(keys)


def _stat(row: SweepRow, name: str) -> float | None:
    stats = row.result.cost_usd
    return None if stats is None else float(getattr(stats, name))


# The results table's columns after the variant's: (column, value of a row).
PLAN_COLUMNS: tuple[tuple[str, Any], ...] = (
    ("plan", lambda r: r.result.name),
    ("feasible", lambda r: r.result.feasible),
    ("within_limits", lambda r: r.result.feasible and not r.limit_breaches),
    ("replications", lambda r: r.result.replications),
    ("cost_usd_mean", lambda r: _stat(r, "mean")),
    ("cost_usd_p10", lambda r: _stat(r, "p10")),
    ("cost_usd_p50", lambda r: _stat(r, "p50")),
    ("cost_usd_p90", lambda r: _stat(r, "p90")),
    ("cash_usd_mean", lambda r: r.result.cash_usd_mean),
    ("npv_usd_mean", lambda r: r.result.npv_usd_mean),
    ("p_over_budget", lambda r: r.result.p_over_budget),
    ("p_deadline_missed", lambda r: r.result.p_deadline_missed),
    ("slo_attainment", lambda r: r.result.metrics.slo_attainment if r.result.metrics else None),
    ("cost_per_training_run_usd", lambda r: r.result.cost_per_training_run_usd),
    ("cost_per_million_tokens_usd", lambda r: r.result.cost_per_million_tokens_usd),
    ("cost_per_million_output_tokens_usd",
     lambda r: r.result.cost_per_million_output_tokens_usd),
    ("infeasible_reasons", lambda r: "; ".join(r.result.infeasible_reasons)),
    ("limit_breaches", lambda r: "; ".join(r.limit_breaches)),
)


def table_columns(result: SweepResult) -> dict[str, list[Any]]:
    """The results table column by column: the variant, each swept key path's value (None where
    the variant leaves it alone), then the plan's figures."""
    keys = result.swept_keys
    columns: dict[str, list[Any]] = {"variant": [r.variant for r in result.rows],
                                     "variant_label": [r.label for r in result.rows],
                                     "variant_name": [r.name for r in result.rows]}
    for key in keys:
        columns[f"set:{key}"] = [r.overrides.get(key) for r in result.rows]
    for name, value in PLAN_COLUMNS:
        columns[name] = [value(r) for r in result.rows]
    return columns
