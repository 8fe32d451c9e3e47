"""The terminal view of a run: plans ranked by mean cost, infeasible plans with their reasons,
and the recommendation with its savings against the baseline.

Numbers are written by :mod:`costsim.cli.numbers`: simulated costs in whole dollars, rates to 3
decimals, shares to 0.1 %, savings to the cent; a column no plan has a value for (no training
phase: no cost per training run) is left out. Plan names are never cut. A scenario with a
display currency gets its figures in it (costsim.domain.currency: the mean is the sum of the
ledger's lines each converted, as the report's ledger adds up).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from costsim.cli.common import format_table
from costsim.cli.numbers import percent
from costsim.domain.currency import Currency
from costsim.domain.display import money_amount, money_estimate, money_rate

if TYPE_CHECKING:
    from costsim.sim.montecarlo import PlanResult
    from costsim.sim.run_result import RunResult

TABLE_WIDTH = 120

_Cell = Callable[["PlanResult", Currency], str | None]


def _optional(value: float | None, render: Callable[[float], str]) -> str | None:
    return None if value is None else render(value)


def _slo(result: PlanResult, currency: Currency) -> str | None:
    attainment = result.metrics.slo_attainment if result.metrics else None
    return _optional(attainment, percent)


def _cost(result: PlanResult, part: str, currency: Currency) -> str | None:
    from costsim.sim.run_result import mean_cost_in

    cost = result.cost_usd
    if cost is None:
        return None

    def shown(usd: float) -> str:
        return money_estimate(currency.amount(usd), currency)

    if part == "range":
        return f"{shown(cost.p10)}–{shown(cost.p90)}"
    if part == "mean":
        return money_estimate(mean_cost_in(result, currency) or 0.0, currency)
    return shown(float(getattr(cost, part)))


# (header, cell); the legend under the table says what each header means; "$" in a header is
# the display currency's symbol or code
PLAN_COLUMNS: tuple[tuple[str, _Cell], ...] = (
    ("mean", lambda r, c: _cost(r, "mean", c)),
    ("P50", lambda r, c: _cost(r, "p50", c)),
    ("P10–P90", lambda r, c: _cost(r, "range", c)),
    ("$/train run", lambda r, c: _optional(r.cost_per_training_run_usd,
                                           lambda v: money_estimate(c.amount(v), c))),
    ("$/1M tok", lambda r, c: _optional(r.cost_per_million_tokens_usd,
                                        lambda v: money_rate(c.rate(v), c))),
    ("P(late)", lambda r, c: _optional(r.p_deadline_missed, percent)),
    ("P(>budget)", lambda r, c: _optional(r.p_over_budget, percent)),
    ("SLO met", _slo),
)
# columns holding money: a plan resting on an estimated price has them marked ESTIMATE_MARK
MONEY_COLUMNS = frozenset({"mean", "P50", "P10–P90", "$/train run", "$/1M tok"})
# the mark `costsim prices` puts on an estimated rate, here on the figures that rest on one
ESTIMATE_MARK = "~"
ESTIMATE_LEGEND = (f"'{ESTIMATE_MARK}' the plan rests on an estimated price (a reserved "
                   "discount costsim assumes, an owned-server cost model: summary.json "
                   "estimated_inputs): ask for a quote.")
COLUMN_LEGEND = (
    "Costs: the economic cost over the horizon (commitments in full, owned hardware net of its "
    "residual value) in $, mean and P10/P50/P90 over the replications. $/train run: cost of a "
    "training phase; $/1M tok: serving cost per million tokens (prompt + output); P(late): "
    "probability a deadline is missed; P(>budget): probability the cost exceeds the budget; "
    "SLO met: share of requests served within the SLO.")
LEGEND = COLUMN_LEGEND + (
    " '*' recommended (the cheapest feasible "
    "plan within the risk limits), 'b' baseline. Ledger, monthly cash flow, prices with their "
    "sources: the report folder or --json.")


def ranked(results: Sequence[PlanResult]) -> list[PlanResult]:
    """Feasible plans by mean cost (then name), infeasible ones left out."""
    feasible = [r for r in results if r.feasible and r.cost_usd is not None]
    return sorted(feasible, key=lambda r: (r.cost_usd.mean if r.cost_usd else 0.0, r.name))


def plan_table(run: RunResult) -> str:
    """The ranked table of the feasible plans (recommended '*', baseline 'b')."""
    rows_of = ranked(run.plans)
    currency = run.scenario.currency
    columns = [(h, cell) for h, cell in PLAN_COLUMNS
               if any(cell(r, currency) is not None for r in rows_of)]
    rows = []
    for rank, result in enumerate(rows_of, start=1):
        marks = ("*" if result.name == run.recommendation.plan else "") + (
            "b" if result.name == run.baseline else "")
        mark = ESTIMATE_MARK if result.estimated_inputs else ""
        rows.append((rank, marks, result.name,
                     *("-" if (text := cell(result, currency)) is None
                       else text + mark if header in MONEY_COLUMNS else text
                       for header, cell in columns)))
    header = ("#", "", "plan", *(currency_text(h, currency) for h, _ in columns))
    right = [0, *range(3, 3 + len(columns))]
    return format_table(rows, header, right_align=right)


def currency_text(text: str, currency: Currency) -> str:
    """A header or legend with "$" as the display currency's symbol (or code)."""
    return text if currency.is_usd else text.replace("$", currency.symbol.strip())


def infeasible_lines(run: RunResult) -> list[str]:
    """One line per infeasible plan with its reasons."""
    return [f"infeasible: {r.name}: " + "; ".join(r.infeasible_reasons or ("no reason given",))
            for r in run.plans if not r.feasible]


def recommendation_lines(run: RunResult) -> list[str]:
    """The recommended plan and why, its savings against the baseline, and the plans passed
    over for risk."""
    rec = run.recommendation
    if rec.plan is None:
        lines = [f"No recommendation: {rec.reason}."]
    else:
        lines = [f"Recommended: {rec.plan} — {rec.reason}."]
        lines.append(savings_line(run, rec.plan))
    lines += [f"passed over: {name}: {why}" for name, why in rec.passed_over
              if not why.startswith("infeasible")]
    return lines


def savings_line(run: RunResult, plan: str) -> str:
    """``plan``'s mean cost against the baseline's: saving in $ and %."""
    if plan == run.baseline:
        return f"It is the baseline ({run.baseline})."
    chosen, base = run.plan(plan).cost_usd, run.plan(run.baseline).cost_usd
    if chosen is None or base is None:
        return f"The baseline ({run.baseline}) is infeasible: no saving to state."
    from costsim.sim.run_result import mean_cost_in

    currency = run.scenario.currency
    base_mean = mean_cost_in(run.plan(run.baseline), currency) or 0.0
    chosen_mean = mean_cost_in(run.plan(plan), currency) or 0.0
    saving = base_mean - chosen_mean
    share = f" ({abs(saving) / base_mean:.1%})" if base_mean > 0 else ""
    verb = "Saves" if saving >= 0 else "Costs"
    chosen_mark = ESTIMATE_MARK if run.plan(plan).estimated_inputs else ""
    base_mark = ESTIMATE_MARK if run.plan(run.baseline).estimated_inputs else ""
    saving_mark = ESTIMATE_MARK if chosen_mark or base_mark else ""
    return (f"{verb} {money_amount(abs(saving), currency)}{saving_mark}{share} against the "
            f"baseline {run.baseline} (mean cost {money_estimate(base_mean, currency)}"
            f"{base_mark} → {money_estimate(chosen_mean, currency)}{chosen_mark}).")


def measured_line(run: RunResult) -> str:
    """One line naming the measurement files the run read and how many figures they replaced
    (empty when the scenario names none)."""
    m = run.scenario.measurements
    files = [*m.serving_files, *m.training_files]
    if not files:
        return ""
    figures = sum(len(plan.measured) for plan in run.plans)
    names = ", ".join(Path(f).name for f in files)
    return (f"Measured inputs: {names} replaced {figures} model figure(s) across the plans "
            "(report: Assumptions, summary.json inputs.measured_inputs).")


def api_lines(run: RunResult) -> list[str]:
    """Self-host vs API per serving phase of the feasible plans (empty without serving)."""
    from costsim.report.api_compare import api_comparison_rows
    from costsim.report.summary import api_comparison_json

    plans = ({"name": plan.name,
              "api_comparison": [api_comparison_json(c) for c in plan.api_comparison]}
             for plan in ranked(run.plans))
    rows = api_comparison_rows(plans, run.scenario.currency)
    if not rows:
        return []
    sym = run.scenario.currency.symbol
    table = format_table([(r["plan"], r["phase"], r["serves_on"], r["self_host"], r["api"],
                           r["breakeven"]) for r in rows],
                         ("plan", "phase", "on", f"self-host {sym}/1M tok", f"API {sym}/1M tok",
                          "self-hosting wins"), right_align=(3, 4), max_width=TABLE_WIDTH,
                         shrink=(5,))
    return ["Self-host or call an API (per serving phase; ~ an estimated price):", table]


def render_run(run: RunResult, report_dir: str | None) -> str:
    """The whole text output of ``costsim run``."""
    scenario = run.scenario
    head = (f"{scenario.name}: {len(run.plans)} plans, {run.replications:,} replications, "
            f"seed {run.seed} ({run.wall_s:.1f} s)")
    parts = [head, ""]
    if ranked(run.plans):
        parts += [plan_table(run), ""]
    if api := api_lines(run):
        parts += [*api, ""]
    if infeasible := infeasible_lines(run):
        parts += [*infeasible, ""]
    parts += recommendation_lines(run)
    parts.append("")
    if measured := measured_line(run):
        parts += [measured, ""]
    legend = currency_text(LEGEND, scenario.currency) + (
        " " + ESTIMATE_LEGEND if any(r.estimated_inputs for r in run.plans) else "")
    if not scenario.currency.is_usd:
        legend += (f" Amounts in {scenario.currency.code} at {scenario.currency.fx_rate_per_usd:g}"
                   f" per USD (summary.json and --json keep USD).")
    parts.append(textwrap.fill(legend, width=TABLE_WIDTH))
    if report_dir is not None:
        parts.append(f"Report: {report_dir}/report.html")
    return "\n".join(parts)
