"""Charts of what each plan costs: per plan, per training run, over the calendar, per month,
and per phase and category. Each returns ``None`` when the run has nothing for it to show."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from costsim.report.chart_style import (
    Chart,
    month_ticks,
    new_figure,
    plan_colors,
    subplots,
    usd,
    usd_axis,
)
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
}


def _feasible(run: RunResult) -> list[PlanResult]:
    return [plan for plan in run.plans if plan.feasible and plan.cost_usd is not None]


def cost_by_plan(run: RunResult) -> Chart | None:
    """Mean cost of each feasible plan with its P10–P90 range."""
    plans = _feasible(run)
    if not plans:
        return None
    colors = plan_colors([p.name for p in run.plans])
    figure = new_figure(9.0, 1.2 + 0.55 * len(plans))
    (axes,) = subplots(figure)
    names = [p.name for p in plans]
    means = [p.cost_usd.mean for p in plans if p.cost_usd]
    low = [p.cost_usd.mean - p.cost_usd.p10 for p in plans if p.cost_usd]
    high = [p.cost_usd.p90 - p.cost_usd.mean for p in plans if p.cost_usd]
    positions = np.arange(len(plans))
    axes.barh(positions, means, color=[colors[n] for n in names],
              xerr=np.clip([low, high], 0, None), capsize=4)
    axes.set_yticks(positions, names)
    axes.invert_yaxis()
    for y, mean in zip(positions, means, strict=True):
        axes.annotate(usd(mean), (mean, y), xytext=(6, -10), textcoords="offset points",
                      fontsize=8)
    usd_axis(axes, "x")
    axes.set_xlabel("Economic cost over the horizon (USD, mean; whiskers P10–P90)")
    axes.set_title("Cost of each plan over the horizon")
    return Chart("cost_by_plan", "Cost of each plan over the horizon", figure)


def cost_per_training_run(run: RunResult) -> Chart | None:
    """Cost per training run of each plan (plans that train)."""
    plans = [p for p in _feasible(run) if p.cost_per_training_run_usd is not None]
    if not plans:
        return None
    colors = plan_colors([p.name for p in run.plans])
    figure = new_figure(9.0, 1.4 + 0.55 * len(plans))
    (axes,) = subplots(figure)
    values = [p.cost_per_training_run_usd or 0.0 for p in plans]
    positions = np.arange(len(plans))
    axes.barh(positions, values, color=[colors[p.name] for p in plans])
    axes.set_yticks(positions, [p.name for p in plans])
    axes.invert_yaxis()
    for y, value in zip(positions, values, strict=True):
        label = usd(value) if value > 0 else "$0: runs on capacity the plan pays for plan-wide"
        axes.annotate(label, (value, y), xytext=(6, -3), textcoords="offset points",
                      fontsize=8)
    usd_axis(axes, "x")
    axes.set_xlabel("Cost per training run (USD, mean: the training phases' ledger lines and "
                    "their use-share of owned servers)")
    axes.set_title("Cost per training run by plan")
    return Chart("cost_per_training_run", "Cost per training run by plan", figure)


def cumulative_cost(run: RunResult) -> Chart | None:
    """Cash paid to date over the calendar, mean line and P10–P90 band per plan."""
    plans = [p for p in _feasible(run) if p.cumulative_cash_usd_by_month]
    if not plans:
        return None
    colors = plan_colors([p.name for p in run.plans])
    figure = new_figure()
    (axes,) = subplots(figure)
    labels = [month for month, _ in plans[0].cumulative_cash_usd_by_month]
    months = np.arange(len(labels))
    for plan in plans:
        stats = [s for _, s in plan.cumulative_cash_usd_by_month]
        color = colors[plan.name]
        axes.fill_between(months, [s.p10 for s in stats], [s.p90 for s in stats], color=color,
                          alpha=0.18, linewidth=0)
        axes.plot(months, [s.mean for s in stats], color=color, marker="o", markersize=3,
                  label=plan.name)
    month_ticks(axes, labels)
    usd_axis(axes)
    axes.set_xlabel("Month (cash counted to the month's end)")
    axes.set_ylabel("Cash paid to date (USD)")
    axes.set_title("Cumulative cost over the calendar: cash paid to date (mean, band P10–P90)")
    axes.legend(loc="upper left", fontsize=8)
    return Chart("cumulative_cost", "Cumulative cost over the calendar: cash paid to date",
                 figure)


def monthly_cash_flow(run: RunResult) -> Chart | None:
    """Each plan's monthly cash, stacked capex and opex, one panel per plan."""
    plans = [p for p in _feasible(run) if p.ledger is not None and p.ledger.months]
    if not plans:
        return None
    figure = new_figure(9.0, 0.6 + 2.0 * len(plans))
    panels = subplots(figure, len(plans), 1, sharex=True)  # own y scale: a capex month
    # would flatten every rented plan's bars
    for axes, plan in zip(panels, plans, strict=True):
        assert plan.ledger is not None
        rows = plan.ledger.months
        months = np.arange(len(rows))
        capex = [row.capex_usd for row in rows]
        axes.bar(months, capex, color="#000000", label="capex")
        axes.bar(months, [row.opex_usd for row in rows], bottom=capex, color="#56B4E9",
                 label="opex")
        axes.set_title(plan.name, fontsize=9, loc="left")
        axes.set_ylabel("USD per month")
        usd_axis(axes)
        month_ticks(axes, [row.month for row in rows])
    panels[0].legend(loc="upper right", fontsize=8)
    panels[-1].set_xlabel("Month")
    figure.suptitle("Monthly cash flow by plan: capex and opex", fontweight="bold")
    return Chart("monthly_cash_flow", "Monthly cash flow by plan: capex and opex", figure)


def cost_by_phase_category(run: RunResult) -> Chart | None:
    """One bar per plan and phase, stacked by ledger category (credits to the left of 0)."""
    order = [phase.name for phase in run.scenario.phases] + [""]
    bars: list[tuple[str, dict[Category, float]]] = []
    for plan in _feasible(run):
        assert plan.ledger is not None
        cells: dict[str, dict[Category, float]] = defaultdict(lambda: defaultdict(float))
        for line in plan.ledger.lines:
            cells[line.key.phase][line.key.category] += line.amount_usd
        for phase in sorted(cells, key=lambda p: order.index(p) if p in order else len(order)):
            bars.append((f"{plan.name} · {phase or 'plan-wide'}", cells[phase]))
    if not bars:
        return None
    figure = new_figure(9.0, 1.6 + 0.38 * len(bars))
    (axes,) = subplots(figure)
    positions = np.arange(len(bars))
    used = [c for c in Category if any(abs(cells.get(c, 0.0)) > 0 for _, cells in bars)]
    right = np.zeros(len(bars))
    left = np.zeros(len(bars))
    for category in used:
        values = np.array([cells.get(category, 0.0) for _, cells in bars])
        base = np.where(values >= 0, right, left)
        axes.barh(positions, values, left=base, color=CATEGORY_COLORS[category],
                  label=str(category))
        right += np.where(values >= 0, values, 0)
        left += np.where(values < 0, values, 0)
    axes.axvline(0, color="#333333", linewidth=0.8)
    axes.set_yticks(positions, [label for label, _ in bars])
    axes.invert_yaxis()
    usd_axis(axes, "x")
    axes.set_xlabel("Economic cost (USD, mean; residual value of owned hardware is a credit)")
    axes.set_title("Cost by phase and category")
    axes.legend(loc="lower right", fontsize=7, ncols=2)
    return Chart("cost_by_phase_category", "Cost by phase and category", figure)
