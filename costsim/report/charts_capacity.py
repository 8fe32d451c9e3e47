"""Charts of capacity: how well reservations are used, when reserving or buying pays off, and
how large the serving fleet is over the day and the year."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costsim.domain.breakeven import BreakEven
from costsim.domain.calendar import add_months
from costsim.domain.currency import USD, Currency
from costsim.domain.pricing import PurchaseOption
from costsim.report.plot.figure import Marker, Panel, Place
from costsim.report.plot.style import (
    Chart,
    month_ticks,
    names_width_in,
    new_figure,
    percent_axis,
    plan_colors,
    plan_label,
    ranked,
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
# Reservation curves dashed like matplotlib's "--" and "-." (its dash patterns in multiples of the
# line width, points), which the legend's readers know from the charts drawn before.
LINE_PT = 1.5
TERM_DASHES = {1: (3.7 * LINE_PT, 1.6 * LINE_PT),
               3: (6.4 * LINE_PT, 1.6 * LINE_PT, 1.0 * LINE_PT, 1.6 * LINE_PT)}
UTILIZATION_POINTS = 96  # the break-even grid, 5 % to 100 %


def reserved_utilization(run: RunResult) -> Chart | None:
    """Share of the committed GPU-hours that work used, month by month, per reserving plan
    (legend cheapest first, the recommended plan starred)."""
    plans = [p for p in _ranked(run) if any(committed > 0 for _, committed, _ in
                                            p.reserved_by_month)]
    if not plans:
        return None
    chosen = run.recommendation.plan
    colors = plan_colors([p.name for p in run.plans])
    title = "Reserved capacity utilization over time"
    # wide enough for the legend's entries (the starred label and its line's key) beside the
    # plot, not only for the names
    figure = new_figure(names_width_in(f"--- {plan_label(p.name, chosen)}" for p in plans),
                        title=title)
    (panel,) = figure.add_panels()
    labels = [month for month, _, _ in plans[0].reserved_by_month]
    for plan in plans:
        share = [used / committed if committed > 0 else math.nan
                 for _, committed, used in plan.reserved_by_month]
        panel.line(range(len(share)), share, colors[plan.name], marker=Marker.DISC,
                   marker_pt=3.0, width_pt=2.8 if plan.name == chosen else 1.4,
                   label=plan_label(plan.name, chosen))
    month_ticks(panel.x, labels)
    percent_axis(panel.y)
    panel.y.limits(0, 1.05)
    panel.x.label = "Month (months without a commitment are left out)"
    panel.y.label = "Committed GPU-hours used"
    panel.add_legend(place=Place.RIGHT, title="cheapest first")
    return Chart("reserved_utilization", title, figure)


def _ranked(run: RunResult) -> list[PlanResult]:
    """Every plan, cheapest first (mean economic cost), infeasible ones last."""
    return ranked(run.plans, lambda p: None if p.cost_usd is None else p.cost_usd.mean)


def break_even(breakevens: Sequence[BreakEven], currency: Currency = USD) -> Chart | None:
    """Cost per used GPU-hour against utilization: owning each server vs renting its GPUs
    on demand, on spot, or reserved (the cheapest reservation of each term), with the
    crossings marked on the curves and stated in the legend."""
    if not breakevens:
        return None
    title = "Break-even of reserving and of buying vs utilization"
    figure = new_figure(9.0, 1.0 + 4.6 * len(breakevens), title=title)
    panels = figure.add_panels(len(breakevens))
    grid = [0.05 + 0.95 * i / (UTILIZATION_POINTS - 1) for i in range(UTILIZATION_POINTS)]
    for panel, result in zip(panels, breakevens, strict=True):
        _break_even_panel(panel, result, grid, currency)
    return Chart("break_even", title, figure)


def _break_even_panel(panel: Panel, result: BreakEven, grid: list[float],
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
            panel.points([u_star], [rental.price_usd_per_gpu_hour], Marker.DISC,
                         face="#000000")
    estimate = " (estimate)" if result.owned_cost_estimate else ""
    panel.line(grid, owned, "#000000", width_pt=2.0,
               label=f"own {server.name}{estimate}: " + ", ".join(crossings))
    for rental in flat:
        color = OPTION_COLORS.get(rental.option, "#0072B2")
        panel.line(grid, [rental.price_usd_per_gpu_hour] * len(grid), color, width_pt=LINE_PT,
                   label=f"{rental.option.value} ({rental.cloud} {rental.instance_type}): "
                         f"{money.symbol}{money.rate(rental.price_usd_per_gpu_hour):.2f} per "
                         "GPU-hour")
    for term, dash in TERM_DASHES.items():
        reservations = [r for r in result.rentals if r.option.term_years == term]
        if not reservations:
            continue
        rental = min(reservations, key=lambda r: r.price_usd_per_gpu_hour)
        color = RESERVED_COLORS[term]
        u_star = result.reserving_break_even_utilization(rental)
        note_text = (f"beats on-demand above {u_star:.0%}" if u_star is not None
                     else "never beats on-demand")
        panel.line(grid, [rental.cost_usd_per_used_gpu_hour(u) for u in grid], color,
                   width_pt=LINE_PT, dash=dash, label=f"{rental.option.value} ({rental.cloud} "
                   f"{rental.instance_type}), paid whether used or not: {note_text}")
        if u_star is not None:
            panel.points([u_star], [rental.cost_usd_per_used_gpu_hour(u_star)], Marker.DISC,
                         face=color)
    ceiling = max([r.price_usd_per_gpu_hour for r in flat] + [min(owned)]) * Y_LIMIT_FACTOR
    panel.y.limits(0, ceiling)
    panel.x.limits(grid[0], 1.0)
    percent_axis(panel.x)
    usd_axis(panel.y, money)
    panel.x.label = "Utilization (share of the hours the GPUs do work)"
    panel.y.label = f"{money.code} per GPU-hour used"
    panel.title = f"Owning {server.name} ({server.gpu_count}× {server.gpu}) vs renting its GPUs"
    panel.title_pt, panel.title_bold = 10.0, False
    panel.add_legend(place=Place.BELOW, size_pt=7.0, frame=False)


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
    replications = max(p.replications for p in run.plans)
    figure = new_figure(max(10.0, 7.0 + 0.07 * longest), 7.6,
                        title=f"Serving fleet size over the day and the year ({replications} "
                              "replications)")
    day, year = figure.add_panels(2)
    last_day = 0
    for fleet in fleets:
        width = 2.6 if fleet.recommended else 1.3
        clock = fleet.bands.by_clock_hour
        day.band(range(HOURS), [c[0] for c in clock], [c[2] for c in clock], fleet.color)
        day.line(range(HOURS), [c[1] for c in clock], fleet.color, width_pt=width,
                 label=fleet.label)
        peak = fleet.bands.daily_peak
        days = [fleet.bands.first_day + d for d in range(len(peak))]
        last_day = max([last_day, *days])
        year.band(days, [p[0] for p in peak], [p[2] for p in peak], fleet.color)
        year.line(days, [p[1] for p in peak], fleet.color, width_pt=width * 0.6,
                  label=fleet.label)
    day.x.set_ticks(range(0, HOURS + 1, 2))
    day.x.limits(0, HOURS - 1)
    day.y.limits(0)
    day.x.label = "Hour of the day"
    day.y.label = "Replicas (mean over the phase)"
    day.title = "Over the day: line the median replication, band P10–P90"
    start = run.scenario.calendar.start
    labels = run.scenario.calendar.month_labels()
    step = max(1, -(-len(labels) // 12))
    first_days = [(add_months(start, m) - start).days for m in range(0, len(labels), step)]
    year.x.set_ticks(first_days, labels[::step], rotation=45.0)
    # every month tick in view (matplotlib widened the view to its ticks)
    year.x.limits(min(0, *first_days), max(last_day, *first_days))
    year.y.limits(0)
    year.x.label = "Day (peak replicas of the day; a future not yet serving counts 0)"
    year.y.label = "Replicas (daily peak)"
    year.title = "Over the year: line the median replication, band P10–P90"
    for panel in (day, year):
        panel.title_left, panel.title_pt, panel.title_bold = True, 10.0, False
        panel.add_legend(place=Place.RIGHT, title="cheapest first")
    return Chart("serving_fleet", "Serving fleet size over the day and the year", figure)
