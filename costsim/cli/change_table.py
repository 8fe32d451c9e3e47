"""Infracost-style text of cost changes: ``$old → $new (+Δ, +%)`` per plan and per phase and
category, for ``compare`` (each plan against the baseline) and ``diff`` (two saved runs).

Both read the JSON documents of DESIGN §7 (costsim.report.compare_json / diff_json), so the
terminal shows exactly what ``--json`` holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from costsim.cli.common import format_table
from costsim.cli.numbers import usd_amount

TABLE_WIDTH = 120


def change(old: float | None, new: float | None) -> str:
    """``$old → $new (+$Δ, +x.x%)``; a side that is missing reads ``-``."""
    if old is None and new is None:
        return "-"
    if old is None:
        return f"- → {usd_amount(new or 0.0)} (added)"
    if new is None:
        return f"{usd_amount(old)} → - (removed)"
    delta = new - old
    sign = "+" if delta > 0 else "-" if delta < 0 else "±"
    pct = f", {sign}{abs(delta) / abs(old):.1%}" if old else ""
    return f"{usd_amount(old)} → {usd_amount(new)} ({sign}{usd_amount(abs(delta))}{pct})"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def rows_table(rows: Sequence[Mapping[str, Any]], old_key: str, new_key: str) -> str:
    """Per phase and category: the change, largest absolute change first; unchanged rows out."""
    changed = [r for r in rows if _number(r.get(old_key)) != _number(r.get(new_key))]
    changed.sort(key=lambda r: (-abs((_number(r.get(new_key)) or 0.0)
                                     - (_number(r.get(old_key)) or 0.0)),
                                str(r.get("phase")), str(r.get("category"))))
    body = [(r.get("phase") or "(plan-wide)", r.get("category", ""),
             change(_number(r.get(old_key)), _number(r.get(new_key)))) for r in changed]
    if not body:
        return "  no change in any phase or category"
    table = format_table(body, ("phase", "category", "change"), max_width=TABLE_WIDTH - 2,
                         shrink=(0,))
    return "\n".join("  " + line for line in table.splitlines())


def mean_of(cost: Any) -> float | None:
    """The mean of a ``cost_usd`` object (None when the plan is infeasible)."""
    return _number(cost.get("mean")) if isinstance(cost, Mapping) else None


def render_compare(document: Mapping[str, Any]) -> str:
    """The text of ``costsim compare``: every plan against the baseline."""
    baseline = str(document.get("baseline"))
    plans = document.get("plans", [])
    base_mean = next((mean_of(p.get("cost_usd")) for p in plans if p.get("name") == baseline),
                     None)
    parts = [f"Baseline: {baseline} (mean cost "
             f"{'-' if base_mean is None else usd_amount(base_mean)})"]
    for plan in plans:
        if plan.get("name") == baseline:
            continue
        parts += ["", f"{plan.get('name')}: {change(base_mean, mean_of(plan.get('cost_usd')))}"]
        rows = plan.get("by_phase_category") or []
        if rows:
            parts.append(rows_table(rows, "baseline_usd", "plan_usd"))
        elif mean_of(plan.get("cost_usd")) is None:
            parts.append("  infeasible: " + "; ".join(plan.get("infeasible_reasons") or ()))
    parts += ["", "Mean economic cost over the horizon; Δ and % against the baseline "
                  "(--baseline). The same in --json and in the report."]
    return "\n".join(parts)
