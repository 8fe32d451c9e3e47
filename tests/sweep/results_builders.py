"""Sweep results of known costs, for the effect and report tests."""

from __future__ import annotations

from costsim.sim.montecarlo import PlanResult, Stats
from costsim.sweep.results import SweepResult, SweepRow
from costsim.sweep.tasks import SweepSettings


def plan_row(variant: int, overrides: dict[str, object], cost: float, plan: str = "p",
         name: str = "") -> SweepRow:
    result = PlanResult(name=plan, feasible=True, infeasible_reasons=(), replications=1,
                        cost_usd=Stats(mean=cost, p10=cost, p50=cost, p90=cost))
    return SweepRow(variant=variant, label=str(overrides), overrides=overrides, result=result,
                    name=name)


def sweep_of(rows: list[SweepRow]) -> SweepResult:
    return SweepResult(settings=SweepSettings(seed=0, replications=1), rows=tuple(rows),
                       variants=len(rows), tasks=len(rows), tasks_computed=len(rows),
                       tasks_from_cache=0, engine="dask", workers=1)


def factorial() -> SweepResult:
    """cost = 100 + 50 if a = 2 + 10 if b = 'y'."""
    rows = []
    for a in (1, 2):
        for b in ("x", "y"):
            rows.append(plan_row(len(rows), {"a": a, "b": b},
                             100 + 50 * (a == 2) + 10 * (b == "y")))
    return sweep_of(rows)
