"""Charts of capacity: how well reservations are used, when reserving or buying pays off, and
how large the serving fleet is over the day and the year."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from costsim.domain.breakeven import BreakEven
from costsim.domain.calendar import add_months
from costsim.domain.pricing import PurchaseOption
from costsim.report.chart_style import (
    Chart,
    month_ticks,
    new_figure,
    percent_axis,
    plan_colors,
    subplots,
    usd_axis,
)
from costsim.sim.run_result import RunResult
from costsim.units import HOURS_PER_DAY, SECONDS_PER_HOUR

HOURS = int(HOURS_PER_DAY)  # the hours of a day, as an index range
OPTION_COLORS = {PurchaseOption.ON_DEMAND: "#0072B2", PurchaseOption.SPOT: "#009E73"}
RESERVED_COLORS = {1: "#E69F00", 3: "#D55E00"}
# Rates per used hour explode as use falls (r_c / u): the axis stops at this multiple of the
# highest flat rate so the crossings stay readable.
Y_LIMIT_FACTOR = 3.0


def reserved_utilization(run: RunResult) -> Chart | None:
    """Share of the committed GPU-hours that work used, month by month, per reserving plan."""
    plans = [p for p in run.plans if any(committed > 0 for _, committed, _ in
                                         p.reserved_by_month)]
    if not plans:
        return None
    colors = plan_colors([p.name for p in run.plans])
    figure = new_figure()
    (axes,) = subplots(figure)
    labels = [month for month, _, _ in plans[0].reserved_by_month]
    for plan in plans:
        share = [used / committed if committed > 0 else np.nan
                 for _, committed, used in plan.reserved_by_month]
        axes.plot(np.arange(len(share)), share, color=colors[plan.name], marker="o",
                  markersize=3, label=plan.name)
    month_ticks(axes, labels)
    percent_axis(axes)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("Month (months without a commitment are left out)")
    axes.set_ylabel("Committed GPU-hours used")
    axes.set_title("Reserved capacity utilization over time")
    axes.legend(loc="lower right", fontsize=8)
    return Chart("reserved_utilization", "Reserved capacity utilization over time", figure)


def break_even(breakevens: Sequence[BreakEven]) -> Chart | None:
    """Cost per used GPU-hour against utilization: owning each server vs renting its GPUs
    on demand, on spot, or reserved (the cheapest reservation of each term), with the
    crossings marked on the curves and stated in the legend."""
    if not breakevens:
        return None
    figure = new_figure(9.0, 1.0 + 4.6 * len(breakevens))
    panels = subplots(figure, len(breakevens), 1)
    grid = np.linspace(0.05, 1.0, 96)
    for axes, result in zip(panels, breakevens, strict=True):
        _break_even_panel(axes, result, grid)
    title = "Break-even of reserving and of buying vs utilization"
    figure.suptitle(title, fontweight="bold")
    return Chart("break_even", title, figure)


def _break_even_panel(axes: Axes, result: BreakEven, grid: np.ndarray) -> None:
    server = result.server
    owned = [server.cost_usd_per_delivered_gpu_hour(u) for u in grid]
    flat = [r for r in result.rentals if not r.committed]
    crossings = []
    for rental in flat:
        u_star = result.owning_break_even_utilization(rental)
        crossings.append(f"beats {rental.option.value} above {u_star:.0%}" if u_star is not None
                         else f"never beats {rental.option.value}")
        if u_star is not None:
            axes.plot([u_star], [rental.price_usd_per_gpu_hour], "o", color="#000000")
    estimate = " (estimate)" if result.owned_cost_estimate else ""
    axes.plot(grid, owned, color="#000000", linewidth=2,
              label=f"own {server.name}{estimate}: " + ", ".join(crossings))
    for rental in flat:
        color = OPTION_COLORS.get(rental.option, "#0072B2")
        axes.plot(grid, [rental.price_usd_per_gpu_hour] * len(grid), color=color,
                  label=f"{rental.option.value} ({rental.cloud} {rental.instance_type}): "
                        f"${rental.price_usd_per_gpu_hour:.2f} per GPU-hour")
    for term, style in ((1, "--"), (3, "-.")):
        reservations = [r for r in result.rentals if r.option.term_years == term]
        if not reservations:
            continue
        rental = min(reservations, key=lambda r: r.price_usd_per_gpu_hour)
        color = RESERVED_COLORS[term]
        u_star = result.reserving_break_even_utilization(rental)
        note_text = (f"beats on-demand above {u_star:.0%}" if u_star is not None
                     else "never beats on-demand")
        axes.plot(grid, [rental.cost_usd_per_used_gpu_hour(u) for u in grid], color=color,
                  linestyle=style, label=f"{rental.option.value} ({rental.cloud} "
                  f"{rental.instance_type}), paid whether used or not: {note_text}")
        if u_star is not None:
            axes.plot([u_star], [rental.cost_usd_per_used_gpu_hour(u_star)], "o", color=color)
    ceiling = max([r.price_usd_per_gpu_hour for r in flat] + [min(owned)]) * Y_LIMIT_FACTOR
    axes.set_ylim(0, ceiling)
    axes.set_xlim(grid[0], 1.0)
    percent_axis(axes, "x")
    usd_axis(axes)
    axes.set_xlabel("Utilization (share of the hours the GPUs do work)")
    axes.set_ylabel("USD per GPU-hour used")
    axes.set_title(f"Owning {server.name} ({server.gpu_count}× {server.gpu}) vs renting its "
                   "GPUs", fontsize=10)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize=7, ncols=1,
                frameon=False)


def serving_fleet(run: RunResult) -> Chart | None:
    """Serving replicas per hour of the day (mean over the phase) and per day (peak), per plan
    and serving phase, from the first replication."""
    series = []
    for plan in run.plans:
        starts = {t.phase: t.start_s for t in plan.timelines}
        for phase, hourly in plan.serving_replicas_by_hour:
            start_s = starts.get(phase)
            if hourly and start_s is not None:
                label = plan.name if len(plan.serving_replicas_by_hour) == 1 else (
                    f"{plan.name} · {phase}")
                series.append((plan.name, label, int(start_s // SECONDS_PER_HOUR), hourly))
    if not series:
        return None
    colors = plan_colors([p.name for p in run.plans])
    figure = new_figure(10.0, 4.6)
    day_axes, year_axes = subplots(figure, 1, 2, width_ratios=[1, 2])
    start = run.scenario.calendar.start
    for plan_name, label, first_hour, fleet in series:
        replicas = np.asarray(fleet, dtype=np.float64)
        hours = first_hour + np.arange(len(replicas))
        by_hour = [replicas[hours % HOURS == h].mean() for h in range(HOURS)]
        day_axes.plot(range(HOURS), by_hour, color=colors[plan_name], label=label)
        days = hours // HOURS
        peak = np.zeros(days[-1] - days[0] + 1)
        np.maximum.at(peak, days - days[0], replicas)
        year_axes.plot(np.arange(len(peak)) + days[0], peak, color=colors[plan_name],
                       linewidth=1, label=label)
    day_axes.set_xticks(range(0, HOURS + 1, 4))
    day_axes.set_xlim(0, HOURS - 1)
    day_axes.set_xlabel("Hour of the day")
    day_axes.set_ylabel("Replicas (mean over the phase)")
    day_axes.set_title("Over the day", fontsize=10)
    labels = run.scenario.calendar.month_labels()
    step = max(1, -(-len(labels) // 12))
    first_days = [(add_months(start, m) - start).days for m in range(0, len(labels), step)]
    year_axes.set_xticks(first_days, labels[::step], rotation=45, ha="right")
    year_axes.set_xlabel("Day (peak replicas of the day)")
    year_axes.set_ylabel("Replicas (daily peak)")
    year_axes.set_title("Over the year", fontsize=10)
    year_axes.legend(loc="upper left", fontsize=8)
    title = "Serving fleet size over the day and the year (replication 1)"
    figure.suptitle(title, fontweight="bold")
    return Chart("serving_fleet", title, figure)
