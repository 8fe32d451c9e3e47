"""``report.html``: one self-contained page for a finance review (issue 10 item 7).

Everything shown is read from the summary document and the comparison (so the page agrees with
``summary.json``); this module only chooses what to show and formats it. The Jinja2 template
escapes every value (autoescape), so scenario text such as a plan named ``<script>`` stays text;
charts are embedded as base64 SVG images, so the file needs nothing beside it. A scenario
with a display currency gets the page in that currency (:mod:`costsim.report.currency_view`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jinja2

from costsim.domain import display
from costsim.domain.breakeven import BreakEven
from costsim.domain.currency import USD, Currency, currency_of
from costsim.report.api_compare import api_comparison_rows
from costsim.report.basis_text import basis_rows
from costsim.report.chart_files import RenderedChart
from costsim.report.compare import cells_by_phase_category, phase_category_order
from costsim.report.currency_view import displayed
from costsim.report.glossary import GLOSSARY
from costsim.units import SECONDS_PER_HOUR

TEMPLATE = "report.html.j2"


def report_html(summary: Mapping[str, Any], comparison: Mapping[str, Any],
                charts: Sequence[RenderedChart], missing_charts: Sequence[str],
                breakevens: Sequence[BreakEven] = ()) -> str:
    """The page of a run, in the summary's display currency (``comparison``: of the plans
    as converted)."""
    currency = currency_of(summary)
    api_rows = api_comparison_rows(summary["plans"], currency)  # from the USD figures
    summary = displayed(summary)
    environment = template_environment(currency)
    plans = {plan["name"]: plan for plan in summary["plans"]}
    phase_order = [p["name"] for p in summary["inputs"].get("phases", [])
                   if isinstance(p, Mapping) and isinstance(p.get("name"), str)]
    return environment.get_template(TEMPLATE).render(
        s=summary, executive=executive_summary(summary, currency), ranked=ranked(summary),
        currency=None if currency.is_usd else currency,
        charts=charts, missing_charts=missing_charts,
        comparison=[row for row in comparison["plans"] if row["name"] != comparison["baseline"]],
        baseline=comparison["baseline"],
        details=[plan_details(plans[name], phase_order, currency) for name in plans],
        breakevens=breakeven_rows(breakevens, currency), glossary=GLOSSARY,
        api_rows=api_rows, basis_rows=basis_rows(summary["plans"]))


def template_environment(currency: Currency = USD, *, convert: bool = False
                         ) -> jinja2.Environment:
    """The report templates, every value escaped (autoescape), with the number filters:
    amounts shown in ``currency`` with its symbol; ``convert``: the values given are USD and
    each is converted as it is shown (else they are in ``currency`` already)."""
    def amount(value: float | None) -> float | None:
        return value if value is None or not convert else currency.amount(value)

    def per_unit(value: float | None) -> float | None:
        return value if value is None or not convert else currency.rate(value)

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("costsim.report", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True)
    environment.filters.update(
        usd=lambda value: money(amount(value), currency),
        estimate=lambda value: estimate(amount(value), currency),
        rate=lambda value: rate(per_unit(value), currency), pct=percent,
        delta=lambda change, old: delta(amount(change), amount(old), currency),
        hours=_hours)
    return environment


def executive_summary(summary: Mapping[str, Any], currency: Currency = USD) -> dict[str, Any]:
    """The recommendation, why, what it saves against the baseline and what it risks
    (``summary``'s amounts in ``currency``)."""

    def shown(amount: float | None) -> str:
        return money(amount, currency)

    plans = {plan["name"]: plan for plan in summary["plans"]}
    chosen = summary["recommended"]["plan"]
    baseline = plans.get(summary["baseline"])
    result: dict[str, Any] = {"plan": chosen, "reason": summary["recommended"]["reason"],
                              "passed_over": summary["recommended"]["passed_over"],
                              "savings": None, "risks": []}
    if chosen is None:
        return result
    plan = plans[chosen]
    cost = plan["cost_usd"]
    if chosen == summary["baseline"]:
        result["savings"] = "The recommended plan is the baseline."
    elif baseline is not None and not baseline["cost_usd"]:
        result["savings"] = (f"The baseline ‘{baseline['name']}’ is infeasible, so there is no "
                             "saving to state against it.")
    elif baseline is not None:
        saved = baseline["cost_usd"]["mean"] - cost["mean"]
        base_cost = baseline["cost_usd"]["mean"]
        result["savings"] = (
            f"Saves {shown(saved)} ({percent(saved / base_cost)}) of mean cost against the "
            f"baseline ‘{baseline['name']}’ ({shown(base_cost)})."
            if saved >= 0 else f"Costs {shown(-saved)} more than the baseline "
            f"‘{baseline['name']}’, which is outside the risk limits or infeasible.")
    risks = [f"Cost between {shown(cost['p10'])} (P10) and {shown(cost['p90'])} (P90), "
             f"mean {shown(cost['mean'])}."]
    if plan["p_over_budget"] is not None:
        risks.append(f"P(cost over the budget of {shown(summary['budget_usd'])}): "
                     f"{percent(plan['p_over_budget'])}.")
    if plan["p_deadline_missed"] is not None:
        risks.append(f"P(a deadline missed): {percent(plan['p_deadline_missed'])}.")
    metrics = plan["metrics"] or {}
    if metrics.get("slo_attainment") is not None:
        risks.append(f"Requests served within the SLO: {percent(metrics['slo_attainment'])}.")
    if metrics.get("stranded_commitment_usd"):
        risks.append(f"Commitments running past the horizon (stranded): "
                     f"{shown(metrics['stranded_commitment_usd'])}.")
    result["risks"] = risks
    result["npv"] = plan["npv_usd"]["mean"] if plan["npv_usd"] else None
    return result


def ranked(summary: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Plans by mean cost, infeasible plans last (in the scenario's order)."""
    def key(indexed: tuple[int, Mapping[str, Any]]) -> tuple[int, float, int]:
        index, plan = indexed
        cost = plan["cost_usd"]
        return (0, cost["mean"], index) if cost else (1, 0.0, index)
    return [plan for _, plan in sorted(enumerate(summary["plans"]), key=key)]


def plan_details(plan: Mapping[str, Any], phase_order: Sequence[str],
                 currency: Currency = USD) -> dict[str, Any]:
    """One plan's section: cost by phase and category, ledger, months, metrics."""
    cells = cells_by_phase_category(plan["ledger"])
    keys = sorted(cells, key=lambda k: phase_category_order(k, phase_order))
    metrics = plan["metrics"] or {}
    return {
        "plan": plan,
        "by_phase_category": [{"phase": phase or "plan-wide", "category": category,
                               "amount_usd": cells[(phase, category)] / 100}
                              for phase, category in keys],
        "metrics": [
            ("GPU-hours used", _hours(metrics.get("gpu_hours_used"))),
            ("GPU-hours paid", _hours(metrics.get("gpu_hours_paid"))),
            ("Reserved utilization", percent(metrics.get("reserved_utilization"))),
            ("Stranded commitment", money(metrics.get("stranded_commitment_usd"), currency)),
            ("Experiment queue wait, P95",
             "—" if metrics.get("queue_wait_p95_s") is None
             else f"{display.hours(metrics['queue_wait_p95_s'] / SECONDS_PER_HOUR)} h"),
            ("SLO attainment", percent(metrics.get("slo_attainment"))),
            ("Finish (days from the start, mean)",
             "—" if not plan["finish_days"] else f"{plan['finish_days']['mean']:,.1f}"),
        ] if metrics else [],
    }


def breakeven_rows(breakevens: Sequence[BreakEven],
                   currency: Currency = USD) -> list[dict[str, str]]:
    """Per server and rental: the rate, and the utilization above which owning (or, for a
    reservation, reserving rather than renting on demand) costs less per used GPU-hour."""
    rows = []
    for result in breakevens:
        server = result.server
        for rental in result.rentals:
            owning = result.owning_break_even_utilization(rental)
            reserving = result.reserving_break_even_utilization(rental)
            rows.append({
                "server": (f"{server.name} ({server.gpu_count}× {server.gpu}, capex "
                           f"{money(currency.rate(server.capex_usd), currency)})"),
                "option": rental.option.value,
                "offering": f"{rental.cloud} {rental.region} {rental.instance_type}",
                "rate": rate(currency.rate(rental.price_usd_per_gpu_hour), currency),
                "owning": "never" if owning is None else percent(owning),
                "reserving": ("—" if not rental.committed else
                              "never" if reserving is None else percent(reserving)),
                "source": f"{rental.source}, {rental.effective_date}",
                "estimate": "yes" if rental.estimate else "",  # owned costs: said above
            })
    return rows


def money(amount: float | None, currency: Currency = USD) -> str:
    """An amount to the cent (``display.usd_amount``; in ``currency``, to its minor unit with
    its symbol); a dash for no value."""
    return "—" if amount is None else display.money_amount(amount, currency)


def estimate(amount: float | None, currency: Currency = USD) -> str:
    """A simulated cost in a ranking, to the dollar as the terminal's ranked table
    (``display.usd_estimate``); a dash for no value."""
    return "—" if amount is None else display.money_estimate(amount, currency)


def rate(amount: float | None, currency: Currency = USD) -> str:
    """A rate (per GPU-hour, per million tokens) to the tenth of a cent
    (``display.usd_rate``); a dash for none."""
    return "—" if amount is None else f"{currency.symbol}{display.money_rate(amount, currency)}"


def percent(share: float | None) -> str:
    """A computed share to 0.1 % (``display.percent``: P(over budget) 14.5%, as the terminal
    and the workbook show it); a dash for no value."""
    return "—" if share is None else display.percent(share)


def delta(delta_usd: float | None, old_usd: float | None, currency: Currency = USD) -> str:
    """A change as ``+$1,234.00, +3.1%`` (``display.usd_change``, as ``compare`` prints it)."""
    return "—" if delta_usd is None else display.money_change(delta_usd, old_usd, currency)


def _hours(value: float | None) -> str:
    return "—" if value is None else display.hours(value)
