"""Infracost-style text of cost changes: ``$old → $new (+Δ, +%)`` per plan and per phase and
category, for ``compare`` (each plan against the baseline) and ``diff`` (two saved runs).

Both read the JSON documents of DESIGN §7 (costsim.report.compare_json / diff_json), so the
terminal shows exactly what ``--json`` holds; a scenario with a display currency gets the same
documents built from its plans as converted (costsim.report.currency_view), shown with its
symbol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from costsim.cli.common import format_table
from costsim.cli.numbers import hours, number, usd_amount, usd_rate
from costsim.domain.currency import USD, Currency
from costsim.domain.display import money_amount, money_change

TABLE_WIDTH = 120


def change(old: float | None, new: float | None, currency: Currency = USD) -> str:
    """``$old → $new (+$Δ, +x.x%)``; a side that is missing reads ``-``."""
    def amount(value: float) -> str:
        return money_amount(value, currency)

    if old is None and new is None:
        return "-"
    if old is None:
        return f"- → {amount(new or 0.0)} (added)"
    if new is None:
        return f"{amount(old)} → - (removed)"
    return f"{amount(old)} → {amount(new)} ({money_change(new - old, old, currency)})"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def rows_table(rows: Sequence[Mapping[str, Any]], old_key: str, new_key: str,
               currency: Currency = USD) -> str:
    """Per phase and category (in the document's order: phases as the scenario lists them),
    the rows that changed."""
    body = [(r.get("phase") or "(plan-wide)", r.get("category", ""),
             change(_number(r.get(old_key)), _number(r.get(new_key)), currency))
            for r in rows if _number(r.get(old_key)) != _number(r.get(new_key))]
    if not body:
        return "  no change in any phase or category"
    table = format_table(body, ("phase", "category", "change"), max_width=TABLE_WIDTH - 2,
                         shrink=(0,))
    return "\n".join("  " + line for line in table.splitlines())


def mean_of(cost: Any) -> float | None:
    """The mean of a ``cost_usd`` object (None when the plan is infeasible)."""
    return _number(cost.get("mean")) if isinstance(cost, Mapping) else None


def render_compare(document: Mapping[str, Any], currency: Currency = USD) -> str:
    """The text of ``costsim compare``: every plan against the baseline (``document``'s
    amounts in ``currency``)."""
    baseline = str(document.get("baseline"))
    plans = document.get("plans", [])
    base_mean = next((mean_of(p.get("cost_usd")) for p in plans if p.get("name") == baseline),
                     None)
    parts = [f"Baseline: {baseline} (mean cost "
             f"{'-' if base_mean is None else money_amount(base_mean, currency)})"]
    for plan in plans:
        if plan.get("name") != baseline:
            parts += ["", *_plan_change(plan, base_mean, currency)]
    parts += ["", "Mean economic cost over the horizon, against the baseline (--baseline); "
                  "plan-wide lines are commitments and owned hardware. --json has every row.",
              *currency_note(currency)]
    return "\n".join(parts)


def currency_note(currency: Currency) -> list[str]:
    """The line saying the text is in a display currency (none for USD)."""
    if currency.is_usd:
        return []
    return [f"Amounts in {currency.code} at {currency.fx_rate_per_usd:g} per USD, each ledger "
            "line converted and rounded on its own (--json keeps USD)."]


def _plan_change(plan: Mapping[str, Any], old_mean: float | None,
                 currency: Currency = USD) -> list[str]:
    """A plan's total change, then its rows (or why it has none)."""
    new_mean = mean_of(plan.get("cost_usd"))
    lines = [f"{plan.get('name')}: {change(old_mean, new_mean, currency)}"]
    rows = plan.get("by_phase_category") or []
    if rows:
        lines.append(rows_table(rows, "baseline_usd", "plan_usd", currency))
    elif old_mean is None or new_mean is None:
        lines.append("  no per-phase change: a side is infeasible (no cost)")
    return lines


def render_diff(document: Mapping[str, Any], shown_plans: Sequence[Mapping[str, Any]] | None = None,
                currency: Currency = USD) -> str:
    """The text of ``costsim diff``: each plan in both runs OLD → NEW, plans added or removed,
    and the inputs that changed (``shown_plans``: the plans' rows in ``currency``, both runs
    converted at the later run's rate; default the document's, in USD)."""
    parts: list[str] = []
    for plan in document.get("plans", []) if shown_plans is None else shown_plans:
        parts += [*_plan_change(plan, mean_of(plan.get("baseline_cost_usd")), currency), ""]
    parts += [f"+ {name}: added (only in NEW)" for name in document.get("added") or ()]
    parts += [f"- {name}: removed (only in OLD)" for name in document.get("removed") or ()]
    if document.get("added") or document.get("removed"):
        parts.append("")
    changed = [*_provenance_changed(document), *(document.get("inputs_changed") or [])]
    parts.append(f"Inputs that changed: {len(changed)}" if changed
                 else "Inputs that changed: none")
    for item in changed:
        path = str(item.get("path"))
        parts.append(f"  {path}{_item(item)}: {value_text(path, item.get('old'))} → "
                     f"{value_text(path, item.get('new'))}")
    if not currency.is_usd:
        parts += ["", *currency_note(currency), "Inputs that changed are as the files give "
                  "them (USD)."]
    return "\n".join(parts)


def _item(change: Mapping[str, Any]) -> str:
    """`` (cloud aws)``: what identifies an unnamed list item the change is in."""
    return f" ({change['item']})" if change.get("item") else ""


def _provenance_changed(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The run settings and provenance that differ (seed, replications, price-book date,
    costsim version, scenario file), as ``run.<key>`` changes; not the time each ran."""
    old, new = document.get("old") or {}, document.get("new") or {}
    return [{"path": f"run.{key}", "old": old.get(key), "new": new.get(key)}
            for key in dict.fromkeys([*old, *new])
            if key != "generated_at" and old.get(key) != new.get(key)]


def value_text(path: str, value: Any, limit: int = 80) -> str:
    """An input value on one line, rounded as the rest of the text output by the kind its key
    names (``_usd``: to the cent; ``_usd_per_…``: a rate to 3 decimals; GPU-hours; any other
    number to 6 significant digits, so float noise reads as the number it is); text quoted and,
    past ``limit`` characters, cut inside its quotes; ``-`` for none."""
    import json

    key = path.rsplit(".", 1)[-1].split("[", 1)[0]
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        if "_usd_per_" in key:
            return f"${usd_rate(value)}"
        if key.endswith("_usd"):
            return usd_amount(value)
        if key.endswith("gpu_hours"):
            return hours(value)
        return number(value)
    if isinstance(value, str):
        return json.dumps(value if len(value) + 2 <= limit else value[: limit - 3] + "…",
                          ensure_ascii=False)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
