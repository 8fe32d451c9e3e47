"""Charts of what each plan costs: per plan, per training run, over the calendar, per month,
and per phase and category. Each returns ``None`` when the run has nothing for it to show.

Plans are ranked cheapest first (mean economic cost, the run table's order; a bar chart of
another figure ranks by that figure) and the recommended plan is starred
(:func:`~costsim.report.plot.style.plan_label`)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from costsim.domain.currency import USD, Currency
from costsim.report.plot.figure import Entry, Marker, Panel, Place
from costsim.report.plot.style import (
    Chart,
    budget_line,
    month_ticks,
    names_width_in,
    new_figure,
    plan_bars,
    plan_colors,
    plan_label,
    plan_ticks,
    ranked,
    recommended_entry,
    usd,
    usd_axis,
    usd_log_axis,
)
from costsim.report.plot.ticks import nice_ticks
from costsim.sim.ledger import Category
from costsim.sim.montecarlo import PlanResult
from costsim.sim.run_result import RunResult

# Ledger categories: capacity paid for (blues), waste (oranges), running costs (greens), credit.
CATEGORY_COLORS: dict[Category, str] = {
    Category.COMPUTE: "#0072B2", Category.RESERVED_IDLE: "#E69F00",
    Category.SPOT_LOST_WORK: "#D55E00", Category.STORAGE: "#56B4E9",
    Category.DATA_TRANSFER: "#CC79A7", Category.CAPEX: "#000000",
    Category.RESIDUAL_VALUE: "#999999", Category.POWER_COLOCATION: "#009E73",
    Category.MAINTENANCE_STAFF: "#8FBC8F", Category.STRANDED_COMMITMENT: "#F0E442",
    Category.API_USAGE: "#004D80",
}
# Cumulative cash is drawn on a log scale when the dearest plan ends above this multiple of
# the cheapest: on a linear scale one owned plan's capex (or one plan 5× the others) squeezes
# the rest into a band at the bottom, while on a log scale equal gaps are equal ratios, so a
# 10 % difference reads the same at $40k and at $900k.
LOG_SCALE_SPREAD = 5.0
# A month whose cash exceeds this multiple of the largest opex month of any plan (a purchase)
# is cut at the shared scale and its amount written on it, so one capex month does not flatten
# every rented plan's bars.
CAPEX_CUT_FACTOR = 3.0
CAPEX_COLOR, OPEX_COLOR = "#000000", "#56B4E9"
BAR_HALF_WIDTH = 0.4  # half of a bar's default thickness, 0.8 (months here)
HEADROOM = 1.15  # room above the tallest bar or line for its label
# Ticks on each monthly cash flow panel (one y scale for all): a panel of the figure's 1.9 in
# a plan has about 1.3 in of plot, room for 5 labels 2 em apart (matplotlib's tick density,
# $0 to $15k by $5k), where the toolkit's automatic ticks (2.6 em apart) leave two.
SHARED_Y_TICKS = 5


def _feasible(run: RunResult) -> list[PlanResult]:
    return [plan for plan in run.plans if plan.feasible and plan.cost_usd is not None]


def _mean_cost(plan: PlanResult) -> float | None:
    return None if plan.cost_usd is None else plan.cost_usd.mean


def ranked_plans(run: RunResult) -> list[PlanResult]:
    """The feasible plans cheapest first (mean economic cost, the run table's order)."""
    return ranked(_feasible(run), _mean_cost)


def _recommended(run: RunResult, recommended: str | None) -> str | None:
    return run.recommendation.plan if recommended is None else recommended


def cost_by_plan(run: RunResult, recommended: str | None = None,
                 why: str = "the lowest mean cost within the risk limits") -> Chart | None:
    """Mean cost of each feasible plan with its P10–P90 range, cheapest first, the recommended
    plan (default: the run's) starred and outlined, the budget as a line."""
    plans = ranked_plans(run)
    if not plans:
        return None
    chosen = _recommended(run, recommended)
    colors = plan_colors([p.name for p in run.plans])
    names = [p.name for p in plans]
    figure = new_figure(names_width_in(names), 1.9 + 0.5 * len(plans))
    (panel,) = figure.add_panels()
    stats = [p.cost_usd for p in plans if p.cost_usd is not None]
    means = [s.mean for s in stats]
    highs = [max(s.mean, s.p90) for s in stats]
    plan_bars(panel, names, means, colors, chosen,
              errors=[(min(s.p10, s.mean), max(s.p90, s.mean)) for s in stats])
    money = run.scenario.currency  # labels in the display currency (the data stay USD)
    for y, mean, right in zip(range(len(plans)), means, highs, strict=True):
        panel.label(right, y, usd(mean, money), dx_pt=6)
    budget = run.scenario.budget_usd
    budget_line(panel, budget, vertical=True, currency=money)
    panel.x.limits(0, HEADROOM * max(*highs, *means, budget or 0.0))
    usd_axis(panel.x, money)
    panel.x.label = (f"Economic cost over the horizon ({money.code}, mean; whiskers P10–P90)\n"
                     "cheapest first")
    panel.title = "Cost of each plan over the horizon"
    entries = recommended_entry(chosen, why)
    entries += [e for e in panel.entries() if e.label.startswith("budget")]
    if entries:
        panel.add_legend(entries, place=Place.BELOW, frame=False)
    return Chart("cost_by_plan", "Cost of each plan over the horizon", figure)


def cost_per_training_run(run: RunResult) -> Chart | None:
    """Cost per training run of each plan (plans that train), cheapest first."""
    plans = ranked([p for p in _feasible(run) if p.cost_per_training_run_usd is not None],
                   lambda p: p.cost_per_training_run_usd)
    if not plans:
        return None
    chosen = run.recommendation.plan
    colors = plan_colors([p.name for p in run.plans])
    names = [p.name for p in plans]
    figure = new_figure(names_width_in(names), 1.9 + 0.5 * len(plans))
    (panel,) = figure.add_panels()
    values = [p.cost_per_training_run_usd or 0.0 for p in plans]
    plan_bars(panel, names, values, colors, chosen)
    money = run.scenario.currency  # labels in the display currency (the data stay USD)
    for y, value in enumerate(values):
        label = usd(value, money) if value > 0 else (
            f"{usd(0.0, money)}: runs on capacity the plan pays for plan-wide")
        panel.label(value, y, label, dx_pt=6)
    panel.x.limits(0, HEADROOM * max(max(values), 1.0))
    usd_axis(panel.x, money)
    panel.x.label = (f"Cost per training run ({money.code}, mean), cheapest first\nthe training "
                     "phases' ledger lines and their use-share of owned servers")
    panel.title = "Cost per training run by plan"
    entries = recommended_entry(chosen, "on the whole horizon's cost, bold")
    if entries:
        panel.add_legend(entries, place=Place.BELOW, frame=False)
    return Chart("cost_per_training_run", "Cost per training run by plan", figure)


def cumulative_cost(run: RunResult) -> Chart | None:
    """Cash paid to date over the calendar, mean line and P10–P90 band per plan (legend ranked,
    the recommended plan starred and drawn thicker), with the budget line; a log scale when
    the plans' totals lie far apart (:data:`LOG_SCALE_SPREAD`)."""
    plans = [p for p in ranked_plans(run) if p.cumulative_cash_usd_by_month]
    if not plans:
        return None
    chosen = run.recommendation.plan
    colors = plan_colors([p.name for p in run.plans])
    # a figure title: centred on the figure, it cannot run off the edge when the legend beside
    # the plot is wide
    figure = new_figure(names_width_in((p.name for p in plans), 10.0), 5.2,
                        "Cumulative cost over the calendar: cash paid to date (mean, band "
                        "P10–P90)")
    (panel,) = figure.add_panels()
    labels = [month for month, _ in plans[0].cumulative_cash_usd_by_month]
    months = range(len(labels))
    finals = [p.cumulative_cash_usd_by_month[-1][1].mean for p in plans]
    log = min(finals) > 0 and max(finals) > LOG_SCALE_SPREAD * min(finals)
    lowest = math.inf
    for plan in plans:
        stats = [s for _, s in plan.cumulative_cash_usd_by_month]
        color = colors[plan.name]
        panel.band(months, [s.p10 for s in stats], [s.p90 for s in stats], color, alpha=0.18)
        mine = plan.name == chosen
        panel.line(months, [s.mean for s in stats], color, marker=Marker.DISC, marker_pt=3.0,
                   width_pt=2.8 if mine else 1.4, z=3.0 if mine else 2.0,
                   label=plan_label(plan.name, chosen))
        lowest = min(lowest, *(v for s in stats for v in (s.mean, s.p10) if v > 0))
    money = run.scenario.currency  # labels in the display currency (the data stay USD)
    budget_line(panel, run.scenario.budget_usd, currency=money)
    month_ticks(panel.x, labels)
    if log:
        usd_log_axis(panel.y, money)
        panel.y.limits(low=lowest / 1.5)
        scale = "log scale: equal gaps are equal ratios"
    else:
        usd_axis(panel.y, money)
        panel.y.limits(low=0)
        scale = "linear scale"
    panel.x.label = "Month (cash counted to the month's end)"
    panel.y.label = f"Cash paid to date ({money.code}, {scale})"
    panel.add_legend(place=Place.RIGHT, title="cheapest first")
    return Chart("cumulative_cost", "Cumulative cost over the calendar: cash paid to date",
                 figure)


def monthly_cash_flow(run: RunResult) -> Chart | None:
    """Each plan's monthly cash, stacked capex and opex, one panel per plan (cheapest first),
    every panel on the same y scale; a purchase month far above every opex month is cut at
    that scale with its amount written on it (:data:`CAPEX_CUT_FACTOR`)."""
    plans = [p for p in ranked_plans(run) if p.ledger is not None and p.ledger.months]
    if not plans:
        return None
    chosen = run.recommendation.plan
    money = run.scenario.currency  # labels in the display currency (the data stay USD)
    figure = new_figure(9.0, 1.2 + 1.9 * len(plans),
                        "Monthly cash flow by plan: capex and opex (cheapest first, one y scale)")
    panels = figure.add_panels(len(plans), share_x=True)
    rows_by_plan = [p.ledger.months for p in plans if p.ledger is not None]
    top_opex = max(max(row.opex_usd for row in rows) for rows in rows_by_plan)
    top_cash = max(max(row.capex_usd + row.opex_usd for row in rows) for rows in rows_by_plan)
    floor = min(0.0, min(min(row.capex_usd + row.opex_usd for row in rows)
                         for rows in rows_by_plan))
    cut = top_cash > CAPEX_CUT_FACTOR * top_opex > 0
    ceiling = HEADROOM * (top_opex if cut else top_cash)
    months = [row.month for row in rows_by_plan[-1]]
    # one tick list for the shared scale, as dense as matplotlib's (2 em apart on a panel)
    rate = 1.0 if money.is_usd else money.fx_rate_per_usd
    ticks = [t / rate for t in nice_ticks(HEADROOM * floor * rate, ceiling * rate,
                                          SHARED_Y_TICKS)]
    for panel, plan, rows in zip(panels, plans, rows_by_plan, strict=True):
        capex = [row.capex_usd for row in rows]
        opex = [row.opex_usd for row in rows]
        bought = [m for m, value in enumerate(capex) if value != 0]
        if bought:  # a month without a purchase draws no (zero-height) capex bar
            panel.vbars(bought, [capex[m] for m in bought], CAPEX_COLOR)
        panel.vbars(range(len(rows)), opex, OPEX_COLOR, base=capex)
        for month, (spent, paid) in enumerate(zip(capex, opex, strict=True)):
            if spent + paid > ceiling:
                panel.label(month + BAR_HALF_WIDTH, ceiling,
                            f"{usd(spent + paid, money)} (bar cut at the shared scale)",
                            dx_pt=4, dy_pt=-4, ha="left", va="top")
        panel.y.limits(HEADROOM * floor, ceiling)  # the same limits on every panel
        panel.title = plan_label(plan.name, chosen)
        panel.title_left, panel.title_pt = True, 9.0
        panel.title_bold = plan.name == chosen
        panel.y.label = f"{money.code} per month"
        usd_axis(panel.y, money)
        panel.y.set_ticks(ticks)
        # one x axis for every panel, its tick labels drawn under the bottom one only
        month_ticks(panel.x, months)
    panels[-1].x.label = "Month"
    figure.add_legend([Entry("capex (purchases)", CAPEX_COLOR), Entry("opex", OPEX_COLOR)],
                      columns=2)
    return Chart("monthly_cash_flow", "Monthly cash flow by plan: capex and opex", figure)


def _phase_cells(run: RunResult, plans: Sequence[PlanResult]
                 ) -> dict[str, dict[str, dict[Category, float]]]:
    """Per phase ("" for plan-wide lines), per plan, per category: the mean ledger amount."""
    cells: dict[str, dict[str, dict[Category, float]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(float)))
    for plan in plans:
        assert plan.ledger is not None
        for line in plan.ledger.lines:
            cells[line.key.phase][plan.name][line.key.category] += line.amount_usd
    order = [phase.name for phase in run.scenario.phases] + [""]
    return dict(sorted(cells.items(), key=lambda item: order.index(item[0])
                       if item[0] in order else len(order)))


def cost_by_phase_category(run: RunResult) -> Chart | None:
    """One panel per phase (and one for plan-wide lines: capex, residual value, power, staff),
    each on its own x scale so a purchase does not flatten a fine-tune; one bar per plan,
    cheapest first, stacked by ledger category (credits to the left of 0)."""
    plans = [p for p in ranked_plans(run) if p.ledger is not None]
    cells = _phase_cells(run, plans)
    if not cells:
        return None
    chosen = run.recommendation.plan
    figure = new_figure(names_width_in(p.name for p in plans),
                        1.6 + (0.32 * len(plans) + 0.75) * len(cells),
                        "Cost by phase and category (each panel on its own scale)")
    panels = figure.add_panels(len(cells))
    used = [c for c in Category
            if any(abs(by_cat.get(c, 0.0)) > 0 for phase in cells.values()
                   for by_cat in phase.values())]
    for panel, (phase, by_plan) in zip(panels, cells.items(), strict=True):
        _phase_panel(panel, phase, [by_plan.get(p.name, {}) for p in plans],
                     [p.name for p in plans], used, chosen, run.scenario.currency)
    entries = [Entry(str(c), CATEGORY_COLORS[c]) for c in used]
    entries += recommended_entry(chosen, "bold")
    figure.add_legend(entries, columns=min(5, len(used)))
    return Chart("cost_by_phase_category", "Cost by phase and category", figure)


def _phase_panel(panel: Panel, phase: str, rows: Sequence[dict[Category, float]],
                 names: Sequence[str], used: Sequence[Category], chosen: str | None,
                 money: Currency = USD) -> None:
    count = len(rows)
    right, left = [0.0] * count, [0.0] * count
    for category in used:
        values = [row.get(category, 0.0) for row in rows]
        drawn = [y for y, value in enumerate(values) if value != 0]  # no zero-width segment
        if drawn:
            panel.hbars(drawn, [values[y] for y in drawn], CATEGORY_COLORS[category],
                        base=[right[y] if values[y] >= 0 else left[y] for y in drawn])
        for y, value in enumerate(values):
            if value >= 0:
                right[y] += value
            else:
                left[y] += value
    for y, (gain, credit) in enumerate(zip(right, left, strict=True)):
        net = gain + credit
        panel.label(gain, y, usd(net, money) if credit == 0 else f"net {usd(net, money)}",
                    dx_pt=4, size_pt=7.0)
    panel.vline(0, "#333333", width_pt=0.8)
    span = (max(right) - min(left)) or 1.0
    panel.x.limits(min(left) - 0.02 * span, max(right) + 0.22 * span)
    plan_ticks(panel.y, names, chosen)
    panel.y.tick_pt = 8.0
    # every plan's row in view, first at the top, whichever segments were drawn (a bar's
    # extent with a 5 % margin)
    panel.y.limits(-0.4 - 0.05 * (count - 0.2), count - 0.6 + 0.05 * (count - 0.2))
    panel.y.inverted = True
    usd_axis(panel.x, money)
    what = f"phase {phase}" if phase else "plan-wide (owned hardware, commitments, storage)"
    panel.title = f"{what}: {money.code}, mean"
    panel.title_left, panel.title_pt, panel.title_bold = True, 9.0, False
