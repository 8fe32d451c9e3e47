"""Charts of what each plan costs: per plan, per training run, over the calendar, per month,
and per phase and category. Each returns ``None`` when the run has nothing for it to show.

Plans are ranked cheapest first (mean economic cost, the run table's order; a bar chart of
another figure ranks by that figure) and the recommended plan is starred
(:func:`~costsim.report.chart_style.plan_label`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from costsim.domain.currency import USD, Currency
from costsim.report.chart_style import (
    RECOMMENDED_EDGE,
    bold_recommended,
    budget_line,
    month_ticks,
    names_width_in,
    new_figure,
    plan_colors,
    plan_label,
    ranked,
    recommended_handle,
    subplots,
    tick_label,
    usd,
    usd_axis,
    usd_log_axis,
)
from costsim.report.plot.figure import Place
from costsim.report.plot.style import (
    RECOMMENDED_EDGE_PT,
    Chart,
    plan_ticks,
    recommended_entry,
)
from costsim.report.plot.style import budget_line as plot_budget_line
from costsim.report.plot.style import new_figure as plot_figure
from costsim.report.plot.style import usd_axis as plot_usd_axis
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
BAR_HALF_WIDTH = 0.4  # matplotlib's default bar width is 0.8 (months here)
HEADROOM = 1.15  # room above the tallest bar or line for its label


def _feasible(run: RunResult) -> list[PlanResult]:
    return [plan for plan in run.plans if plan.feasible and plan.cost_usd is not None]


def _mean_cost(plan: PlanResult) -> float | None:
    return None if plan.cost_usd is None else plan.cost_usd.mean


def ranked_plans(run: RunResult) -> list[PlanResult]:
    """The feasible plans cheapest first (mean economic cost, the run table's order)."""
    return ranked(_feasible(run), _mean_cost)


def _recommended(run: RunResult, recommended: str | None) -> str | None:
    return run.recommendation.plan if recommended is None else recommended


def _outline(bars: Sequence[Patch], names: Sequence[str], recommended: str | None) -> None:
    for bar, name in zip(bars, names, strict=True):
        if name == recommended:
            bar.set_edgecolor(RECOMMENDED_EDGE)
            bar.set_linewidth(1.8)


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
    figure = plot_figure(names_width_in(names), 1.9 + 0.5 * len(plans))
    (panel,) = figure.add_panels()
    stats = [p.cost_usd for p in plans if p.cost_usd is not None]
    means = [s.mean for s in stats]
    highs = [max(s.mean, s.p90) for s in stats]
    panel.hbars(range(len(plans)), means, [colors[n] for n in names],
                edges=[RECOMMENDED_EDGE if n == chosen else None for n in names],
                edge_width_pt=RECOMMENDED_EDGE_PT,
                errors=[(min(s.p10, s.mean), max(s.p90, s.mean)) for s in stats])
    plan_ticks(panel.y, names, chosen)
    panel.y.inverted = True
    money = run.scenario.currency  # labels in the display currency (the data stay USD)
    for y, mean, right in zip(range(len(plans)), means, highs, strict=True):
        panel.label(right, y, usd(mean, money), dx_pt=6)
    budget = run.scenario.budget_usd
    plot_budget_line(panel, budget, vertical=True, currency=money)
    panel.x.limits(0, HEADROOM * max(*highs, *means, budget or 0.0))
    plot_usd_axis(panel.x, money)
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
    figure = plot_figure(names_width_in(names), 1.9 + 0.5 * len(plans))
    (panel,) = figure.add_panels()
    values = [p.cost_per_training_run_usd or 0.0 for p in plans]
    panel.hbars(range(len(plans)), values, [colors[n] for n in names],
                edges=[RECOMMENDED_EDGE if n == chosen else None for n in names],
                edge_width_pt=RECOMMENDED_EDGE_PT)
    plan_ticks(panel.y, names, chosen)
    panel.y.inverted = True
    money = run.scenario.currency  # labels in the display currency (the data stay USD)
    for y, value in enumerate(values):
        label = usd(value, money) if value > 0 else (
            f"{usd(0.0, money)}: runs on capacity the plan pays for plan-wide")
        panel.label(value, y, label, dx_pt=6)
    panel.x.limits(0, HEADROOM * max(max(values), 1.0))
    plot_usd_axis(panel.x, money)
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
    figure = new_figure(names_width_in((p.name for p in plans), 10.0), 5.2)
    (axes,) = subplots(figure)
    labels = [month for month, _ in plans[0].cumulative_cash_usd_by_month]
    months = np.arange(len(labels))
    finals = [p.cumulative_cash_usd_by_month[-1][1].mean for p in plans]
    log = min(finals) > 0 and max(finals) > LOG_SCALE_SPREAD * min(finals)
    lowest = np.inf
    for plan in plans:
        stats = [s for _, s in plan.cumulative_cash_usd_by_month]
        color = colors[plan.name]
        axes.fill_between(months, [s.p10 for s in stats], [s.p90 for s in stats], color=color,
                          alpha=0.18, linewidth=0)
        mine = plan.name == chosen
        axes.plot(months, [s.mean for s in stats], color=color, marker="o", markersize=3,
                  linewidth=2.8 if mine else 1.4, zorder=3 if mine else 2,
                  label=plan_label(plan.name, chosen))
        lowest = min(lowest, *(v for s in stats for v in (s.mean, s.p10) if v > 0))
    money = run.scenario.currency  # labels in the display currency (the data stay USD)
    budget_line(axes, run.scenario.budget_usd, currency=money)
    month_ticks(axes, labels)
    if log:
        usd_log_axis(axes, currency=money)
        axes.set_ylim(bottom=lowest / 1.5)
        scale = "log scale: equal gaps are equal ratios"
    else:
        usd_axis(axes, currency=money)
        axes.set_ylim(bottom=0)
        scale = "linear scale"
    axes.set_xlabel("Month (cash counted to the month's end)")
    axes.set_ylabel(f"Cash paid to date ({money.code}, {scale})")
    # a figure title: centred on the figure, it cannot run off the edge when the legend beside
    # the plot is wide
    figure.suptitle("Cumulative cost over the calendar: cash paid to date (mean, band P10–P90)",
                    fontweight="bold")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                title="cheapest first", title_fontsize=8)
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
    figure = new_figure(9.0, 1.2 + 1.9 * len(plans))
    panels = subplots(figure, len(plans), 1, sharex=True)
    rows_by_plan = [p.ledger.months for p in plans if p.ledger is not None]
    top_opex = max(max(row.opex_usd for row in rows) for rows in rows_by_plan)
    top_cash = max(max(row.capex_usd + row.opex_usd for row in rows) for rows in rows_by_plan)
    floor = min(0.0, min(min(row.capex_usd + row.opex_usd for row in rows)
                         for rows in rows_by_plan))
    cut = top_cash > CAPEX_CUT_FACTOR * top_opex > 0
    ceiling = HEADROOM * (top_opex if cut else top_cash)
    for axes, plan, rows in zip(panels, plans, rows_by_plan, strict=True):
        months = np.arange(len(rows))
        capex = np.array([row.capex_usd for row in rows])
        opex = np.array([row.opex_usd for row in rows])
        bought = capex != 0  # a month without a purchase draws no (zero-height) capex bar
        axes.bar(months[bought], capex[bought], color=CAPEX_COLOR)
        axes.bar(months, opex, bottom=capex, color=OPEX_COLOR)
        for month, total in zip(months, capex + opex, strict=True):
            if total > ceiling:
                axes.annotate(f"{usd(total, run.scenario.currency)} (bar cut at the shared "
                              "scale)",
                              (month + BAR_HALF_WIDTH, ceiling), xytext=(4, -4),
                              textcoords="offset points",
                              ha="left", va="top", fontsize=8)
        axes.set_ylim(HEADROOM * floor, ceiling)  # the same limits on every panel
        axes.set_title(plan_label(plan.name, chosen), fontsize=9, loc="left",
                       fontweight="bold" if plan.name == chosen else "normal")
        axes.set_ylabel(f"{run.scenario.currency.code} per month")
        usd_axis(axes, currency=run.scenario.currency)
    # the panels share one x axis (one locator and formatter): set on the bottom panel, the
    # only one that shows its tick labels (set on each, it re-made every panel's ticks 6 times)
    month_ticks(panels[-1], [row.month for row in rows_by_plan[-1]])
    panels[-1].set_xlabel("Month")
    handles = [Patch(color=CAPEX_COLOR, label="capex (purchases)"),
               Patch(color=OPEX_COLOR, label="opex")]
    figure.legend(handles=handles, loc="lower center", ncols=2, fontsize=8)
    title = "Monthly cash flow by plan: capex and opex (cheapest first, one y scale)"
    figure.suptitle(title, fontweight="bold")
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
                        1.6 + (0.32 * len(plans) + 0.75) * len(cells))
    panels = subplots(figure, len(cells), 1)
    used = [c for c in Category
            if any(abs(by_cat.get(c, 0.0)) > 0 for phase in cells.values()
                   for by_cat in phase.values())]
    for axes, (phase, by_plan) in zip(panels, cells.items(), strict=True):
        _phase_panel(axes, phase, [by_plan.get(p.name, {}) for p in plans],
                     [p.name for p in plans], used, chosen, run.scenario.currency)
    handles = [Patch(color=CATEGORY_COLORS[c], label=str(c)) for c in used]
    handles += recommended_handle(chosen, "bold")
    figure.legend(handles=handles, loc="lower center", ncols=min(5, len(used)),
                  fontsize=8)
    title = "Cost by phase and category (each panel on its own scale)"
    figure.suptitle(title, fontweight="bold")
    return Chart("cost_by_phase_category", "Cost by phase and category", figure)


def _phase_panel(axes: Axes, phase: str, rows: Sequence[dict[Category, float]],
                 names: Sequence[str], used: Sequence[Category], chosen: str | None,
                 money: Currency = USD) -> None:
    positions = np.arange(len(rows))
    right, left = np.zeros(len(rows)), np.zeros(len(rows))
    for category in used:
        values = np.array([row.get(category, 0.0) for row in rows])
        base = np.where(values >= 0, right, left)
        drawn = values != 0  # zero-width segments draw nothing: no patch for them
        if drawn.any():
            axes.barh(positions[drawn], values[drawn], left=base[drawn],
                      color=CATEGORY_COLORS[category])
        right += np.where(values >= 0, values, 0)
        left += np.where(values < 0, values, 0)
    for y, net, end in zip(positions, right + left, right, strict=True):
        axes.annotate(usd(net, money) if left[y] == 0 else f"net {usd(net, money)}", (end, y),
                      xytext=(4, 0), textcoords="offset points", va="center", fontsize=7)
    axes.axvline(0, color="#333333", linewidth=0.8)
    span = float(right.max() - left.min()) or 1.0
    axes.set_xlim(left.min() - 0.02 * span, right.max() + 0.22 * span)
    axes.set_yticks(positions, [tick_label(n, chosen) for n in names], fontsize=8)
    bold_recommended(axes.get_yticklabels(), chosen)
    # every plan's row in view, first at the top, whichever segments were drawn (barh's
    # extent with matplotlib's 5 % margin)
    axes.set_ylim(len(rows) - 0.6 + 0.05 * (len(rows) - 0.2), -0.4 - 0.05 * (len(rows) - 0.2))
    usd_axis(axes, "x", money)
    what = f"phase {phase}" if phase else "plan-wide (owned hardware, commitments, storage)"
    axes.set_title(f"{what}: {money.code}, mean", fontsize=9, loc="left")

