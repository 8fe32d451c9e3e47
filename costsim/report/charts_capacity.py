"""Charts of capacity: how well reservations are used, when reserving or buying pays off, and
how large the serving fleet is over the day and the year."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes

from costsim.domain.breakeven import BreakEven
from costsim.domain.calendar import add_months
from costsim.domain.currency import USD, Currency
from costsim.domain.pricing import PurchaseOption
from costsim.report.chart_style import (
    Chart,
    month_ticks,
    names_width_in,
    new_figure,
    percent_axis,
    plan_colors,
    plan_label,
    ranked,
    subplots,
    usd_axis,
)
from costsim.sim.montecarlo import PlanResult
from costsim.sim.results import FleetBands
from costsim.sim.run_result import RunResult
from costsim.units import HOURS_PER_DAY

HOURS = int(HOURS_PER_DAY)  # the hours of a day, as an index range
OPTION_COLORS = {PurchaseOption.ON_DEMAND: "#0072B2", PurchaseOption.SPOT: "#009E73"}
RESERVED_COLORS = {1: "#E69F00", 3: "#D55E00"}
# Rates per used hour explode as use falls (r_c / u): the axis stops at this multiple of the
# highest flat rate so the crossings stay readable.
Y_LIMIT_FACTOR = 3.0


def reserved_utilization(run: RunResult) -> Chart | None:
    """Share of the committed GPU-hours that work used, month by month, per reserving plan
    (legend cheapest first, the recommended plan starred)."""
    plans = [p for p in _ranked(run) if any(committed > 0 for _, committed, _ in
                                            p.reserved_by_month)]
    if not plans:
        return None
    chosen = run.recommendation.plan
    colors = plan_colors([p.name for p in run.plans])
    figure = new_figure(names_width_in(p.name for p in plans))
    (axes,) = subplots(figure)
    labels = [month for month, _, _ in plans[0].reserved_by_month]
    for plan in plans:
        share = [used / committed if committed > 0 else np.nan
                 for _, committed, used in plan.reserved_by_month]
        axes.plot(np.arange(len(share)), share, color=colors[plan.name], marker="o",
                  markersize=3, linewidth=2.8 if plan.name == chosen else 1.4,
                  label=plan_label(plan.name, chosen))
    month_ticks(axes, labels)
    percent_axis(axes)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("Month (months without a commitment are left out)")
    axes.set_ylabel("Committed GPU-hours used")
    figure.suptitle("Reserved capacity utilization over time", fontweight="bold")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                title="cheapest first", title_fontsize=8)
    return Chart("reserved_utilization", "Reserved capacity utilization over time", figure)


def _ranked(run: RunResult) -> list[PlanResult]:
    """Every plan, cheapest first (mean economic cost), infeasible ones last."""
    return ranked(run.plans, lambda p: None if p.cost_usd is None else p.cost_usd.mean)


def break_even(breakevens: Sequence[BreakEven], currency: Currency = USD) -> Chart | None:
    """Cost per used GPU-hour against utilization: owning each server vs renting its GPUs
    on demand, on spot, or reserved (the cheapest reservation of each term), with the
    crossings marked on the curves and stated in the legend."""
    if not breakevens:
        return None
    figure = new_figure(9.0, 1.0 + 4.6 * len(breakevens))
    panels = subplots(figure, len(breakevens), 1)
    grid = np.linspace(0.05, 1.0, 96)
    for axes, result in zip(panels, breakevens, strict=True):
        _break_even_panel(axes, result, grid, currency)
    title = "Break-even of reserving and of buying vs utilization"
    figure.suptitle(title, fontweight="bold")
    return Chart("break_even", title, figure)


def _break_even_panel(axes: Axes, result: BreakEven, grid: np.ndarray,
                      money: Currency = USD) -> None:
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
                        f"{money.symbol}{money.rate(rental.price_usd_per_gpu_hour):.2f} per "
                        "GPU-hour")
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
    usd_axis(axes, currency=money)
    axes.set_xlabel("Utilization (share of the hours the GPUs do work)")
    axes.set_ylabel(f"{money.code} per GPU-hour used")
    axes.set_title(f"Owning {server.name} ({server.gpu_count}× {server.gpu}) vs renting its "
                   "GPUs", fontsize=10)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize=7, ncols=1,
                frameon=False)


@dataclass(frozen=True, slots=True)
class _Fleet:
    """One line of the fleet chart: plans whose fleets are identical share it (a line drawn
    over another would hide it)."""

    color: str
    label: str
    bands: FleetBands
    recommended: bool


def _fleets(run: RunResult) -> list[_Fleet]:
    chosen = run.recommendation.plan
    colors = plan_colors([p.name for p in run.plans])
    groups: dict[tuple[object, ...], list[tuple[PlanResult, FleetBands]]] = {}
    for plan in _ranked(run):
        for bands in plan.serving_fleet:
            key = (bands.phase, bands.by_clock_hour, bands.first_day, bands.daily_peak)
            groups.setdefault(key, []).append((plan, bands))
    multi_phase = len({b.phase for members in groups.values() for _, b in members}) > 1
    fleets = []
    for members in groups.values():
        names = "\n= ".join(plan_label(plan.name, chosen) for plan, _ in members)
        phase = members[0][1].phase
        fleets.append(_Fleet(color=colors[members[0][0].name],
                             label=f"{names} · {phase}" if multi_phase else names,
                             bands=members[0][1],
                             recommended=any(plan.name == chosen for plan, _ in members)))
    return fleets


def serving_fleet(run: RunResult) -> Chart | None:
    """Serving replicas per clock hour (mean over the phase) and per day (peak), per plan and
    serving phase: the median over the replications as a line, P10–P90 as a band. Plans with
    identical fleets share one line (named together); legends ranked, cheapest first."""
    fleets = _fleets(run)
    if not fleets:
        return None
    longest = max(len(line) for fleet in fleets for line in fleet.label.splitlines())
    figure = new_figure(max(10.0, 7.0 + 0.07 * longest), 7.6)
    day_axes, year_axes = subplots(figure, 2, 1)
    for fleet in fleets:
        width = 2.6 if fleet.recommended else 1.3
        clock = np.array(fleet.bands.by_clock_hour)
        day_axes.fill_between(range(HOURS), clock[:, 0], clock[:, 2], color=fleet.color,
                              alpha=0.2, linewidth=0)
        day_axes.plot(range(HOURS), clock[:, 1], color=fleet.color, linewidth=width,
                      label=fleet.label)
        peak = np.array(fleet.bands.daily_peak)
        days = fleet.bands.first_day + np.arange(len(peak))
        year_axes.fill_between(days, peak[:, 0], peak[:, 2], color=fleet.color, alpha=0.2,
                               linewidth=0)
        year_axes.plot(days, peak[:, 1], color=fleet.color, linewidth=width * 0.6,
                       label=fleet.label)
    day_axes.set_xticks(range(0, HOURS + 1, 2))
    day_axes.set_xlim(0, HOURS - 1)
    day_axes.set_ylim(bottom=0)
    day_axes.set_xlabel("Hour of the day")
    day_axes.set_ylabel("Replicas (mean over the phase)")
    day_axes.set_title("Over the day: line the median replication, band P10–P90", fontsize=10,
                       loc="left")
    start = run.scenario.calendar.start
    labels = run.scenario.calendar.month_labels()
    step = max(1, -(-len(labels) // 12))
    first_days = [(add_months(start, m) - start).days for m in range(0, len(labels), step)]
    year_axes.set_xticks(first_days, labels[::step], rotation=45, ha="right")
    year_axes.set_ylim(bottom=0)
    year_axes.set_xlabel("Day (peak replicas of the day; a future not yet serving counts 0)")
    year_axes.set_ylabel("Replicas (daily peak)")
    year_axes.set_title("Over the year: line the median replication, band P10–P90",
                        fontsize=10, loc="left")
    for axes in (day_axes, year_axes):
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                    title="cheapest first", title_fontsize=8)
    replications = max(p.replications for p in run.plans)
    title = f"Serving fleet size over the day and the year ({replications} replications)"
    figure.suptitle(title, fontweight="bold")
    return Chart("serving_fleet", "Serving fleet size over the day and the year", figure)
