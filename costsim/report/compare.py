"""Plan against baseline, per phase and category (docs/report.md, ``compare --json``).

The deltas are computed from summary plans (the dicts of :mod:`costsim.report.summary`), so
``compare`` (plans of one run against its baseline) and ``diff`` (one plan in two saved runs)
share one computation. Money is summed in integer cents, so a row's Δ is exact to the cent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from costsim.domain.currency import currency_json
from costsim.report.summary import JsonDict, plan_json
from costsim.sim.ledger import Category
from costsim.sim.run_result import RunResult

CATEGORY_ORDER: tuple[str, ...] = tuple(str(c) for c in Category)


def compare_json(run: RunResult) -> JsonDict:
    """Every plan of ``run`` against its baseline (the baseline itself with zero deltas)."""
    return {**currency_json(run.scenario.currency),
            **compare_plans([plan_json(plan) for plan in run.plans], run.baseline,
                            [phase.name for phase in run.scenario.phases])}


def compare_plans(plans: Sequence[Mapping[str, Any]], baseline: str,
                  phase_order: Sequence[str] = ()) -> JsonDict:
    """Summary plans against the one named ``baseline`` (``compare --json``'s document)."""
    base = next(plan for plan in plans if plan["name"] == baseline)
    return {"baseline": baseline,
            "plans": [plan_delta(base, plan, phase_order) for plan in plans]}


def plan_delta(old: Mapping[str, Any], new: Mapping[str, Any],
               phase_order: Sequence[str] = ()) -> JsonDict:
    """``new`` against ``old`` (two summary plans): total and per (phase, category) Δ.

    A plan with no cost (infeasible) has null deltas and no rows; a (phase, category) that only
    one side has counts as $0 on the other.
    """
    old_cost, new_cost = old.get("cost_usd"), new.get("cost_usd")
    row: JsonDict = {"name": new["name"], "cost_usd": new_cost,
                     "baseline_cost_usd": old_cost, "delta_usd": None, "delta_pct": None,
                     "by_phase_category": []}
    if not old_cost or not new_cost:
        return row
    row.update(_delta(old_cost["mean"], new_cost["mean"]))
    old_cells = cells_by_phase_category(old.get("ledger", ()))
    new_cells = cells_by_phase_category(new.get("ledger", ()))
    keys = sorted(old_cells.keys() | new_cells.keys(),
                  key=lambda k: phase_category_order(k, phase_order))
    row["by_phase_category"] = [
        {"phase": phase, "category": category,
         "baseline_usd": old_cells.get((phase, category), 0) / 100,
         "plan_usd": new_cells.get((phase, category), 0) / 100,
         **_delta(old_cells.get((phase, category), 0) / 100,
                  new_cells.get((phase, category), 0) / 100)}
        for phase, category in keys]
    return row


def cents(amount: float) -> int:
    """An amount already rounded to the cent, as integer cents (no float drift in sums)."""
    return round(amount * 100)


def _delta(old_usd: float, new_usd: float) -> JsonDict:
    delta_cents = cents(new_usd) - cents(old_usd)
    pct = None if cents(old_usd) == 0 else round(delta_cents / cents(old_usd) * 100, 2)
    return {"delta_usd": delta_cents / 100, "delta_pct": pct}


def cells_by_phase_category(lines: Iterable[Mapping[str, Any]]
                            ) -> dict[tuple[str, str], int]:
    """Summary ledger lines summed per (phase, category), in integer cents."""
    cells: dict[tuple[str, str], int] = {}
    for line in lines:
        key = (str(line["phase"]), str(line["category"]))
        cells[key] = cells.get(key, 0) + cents(float(line["amount_usd"]))
    return cells


def phase_category_order(key: tuple[str, str], phase_order: Sequence[str]
                         ) -> tuple[int, str, int, str]:
    """Sort key of a (phase, category) cell: phases in the scenario's order (plan-wide lines,
    phase "", last), categories in the ledger's order."""
    phase, category = key
    phase_rank = (phase_order.index(phase) if phase in phase_order
                  else len(phase_order) + (1 if phase == "" else 0))
    category_rank = (CATEGORY_ORDER.index(category) if category in CATEGORY_ORDER
                     else len(CATEGORY_ORDER))
    return (phase_rank, phase, category_rank, category)
