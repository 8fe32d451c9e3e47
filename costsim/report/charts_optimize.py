"""Charts of ``costsim optimize``: the time–cost Pareto front of the simulated plans (and of each
training phase's options), the reservation cost curves with their three marked points, and the
cost of each simulated plan (``run``'s chart).
Each returns ``None`` when the optimizer found nothing for it to show."""

from __future__ import annotations

import math
from collections.abc import Sequence

from costsim.domain.currency import USD, Currency
from costsim.optimize.reservation import ReservationSizing
from costsim.optimize.result import OptimizeResult, Origin, RankedPlan
from costsim.optimize.training_front import TrainingFront
from costsim.report.charts_cost import cost_by_plan
from costsim.report.plot.figure import Entry, Marker, Panel, Place
from costsim.report.plot.style import (
    PALETTE,
    STAR,
    Chart,
    new_figure,
    note,
    plan_label,
    ranked,
    usd,
    usd_axis,
    usd_log_axis,
)
from costsim.units import SECONDS_PER_DAY

ORIGIN_COLORS = {Origin.HAND_WRITTEN: PALETTE[1], Origin.SEARCH: PALETTE[0],
                 Origin.RESERVATION: PALETTE[2], Origin.SERVING_MIX: PALETTE[3]}
# The three reservation points (docs/optimizer.md "Reservation sizing"): marker and name.
POINT_MARKERS = (("conservative", Marker.TRIANGLE_DOWN), ("balanced", Marker.SQUARE),
                 ("aggressive", Marker.STAR))
MAX_PANELS = 4  # a chart stays readable up to this many panels; more are left to optimize.json
# Plans whose P90 finishes lie within this share of one another have no time–cost trade-off to
# draw (a scenario of fixed-length phases ends every plan on the same day, give or take the
# random arrivals); the chart is left out rather than drawn over a few hours of noise.
MIN_FINISH_SPREAD = 0.01
CLUSTER_SHARE = 0.015  # front points nearer than this share of the axis span share a label
MAX_NAMED = 6  # training options named on a front: more make the legend longer than the plot
# Marker sizes across (points), as the charts were first drawn with matplotlib's scatter: the
# square root of its area s (pt²), plus the 1 pt edge it strokes in the face colour where no
# edge colour is given (s=28 and 14; the ring s=160 and the outlined levels s=60 keep theirs).
SCATTER_EDGE_PT = 1.0
PLAN_PT = math.sqrt(28) + SCATTER_EDGE_PT
OPTION_PT = math.sqrt(14) + SCATTER_EDGE_PT
CHOSEN_PT, LEVEL_PT = math.sqrt(160), math.sqrt(60)
NUMBER_RISE_PT = 9.0  # a front point's number sits this far above it


def _currency(result: OptimizeResult) -> Currency:
    """The scenario's display currency (USD when the answer carries no run)."""
    return USD if result.run is None else result.run.scenario.currency


def _finish_days(ranked: RankedPlan) -> float | None:
    finish = ranked.result.finish_s
    return None if finish is None else finish.p90 / SECONDS_PER_DAY


def _step_post(front: Sequence[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """A staircase through ``front`` (sorted by x): each value held until the next x."""
    xs: list[float] = []
    ys: list[float] = []
    for index, (x, y) in enumerate(front):
        if index:
            xs.append(x)
            ys.append(ys[-1])
        xs.append(x)
        ys.append(y)
    return xs, ys


def pareto_front(result: OptimizeResult) -> Chart | None:
    """Each simulated plan within the limits at (P90 finish, objective cost), coloured by where
    it came from; the plan-level Pareto front joined by a line, its plans numbered (cheapest
    first) and named in a key under the plot, so no long name runs off the figure; the chosen
    plan ringed and starred. None when the plans finish within :data:`MIN_FINISH_SPREAD` of
    one another."""
    money = _currency(result)  # labels in the display currency (the data stay USD)
    points = [(r, _finish_days(r)) for r in result.ranked
              if r.within_limits and r.objective_usd is not None]
    placed = [(r, days) for r, days in points if days is not None]
    finishes = [days for _, days in placed]
    if not placed or max(finishes) - min(finishes) < MIN_FINISH_SPREAD * max(finishes):
        return None
    chosen_name = None if result.best is None else result.best.result.name
    title = "Time–cost trade-off of the simulated plans"
    figure = new_figure(9.0, 6.0, title)
    (panel,) = figure.add_panels()
    for origin, color in ORIGIN_COLORS.items():
        mine = [(r, days) for r, days in placed if r.candidate.origin is origin]
        if mine:
            panel.points([days for _, days in mine], [r.objective_usd or 0.0 for r, _ in mine],
                         size_pt=PLAN_PT, face=color, label=origin.value, z=3.0)
    on_front = [(r, _finish_days(r)) for r in result.pareto]
    front = sorted((days, r.objective_usd or 0.0) for r, days in on_front if days is not None)
    if front:
        panel.line(*_step_post(front), "#000000", width_pt=1.0, label="Pareto front", z=2.0)
    chosen = None if result.best is None else _finish_days(result.best)
    if result.best is not None and chosen is not None:
        cost = result.best.objective_usd or 0.0
        panel.points([chosen], [cost], size_pt=CHOSEN_PT, face=None, edge="#000000",
                     edge_width_pt=1.5, label=f"{STAR} chosen: {usd(cost, money)}", z=4.0)
    numbered = ranked([(r, d) for r, d in on_front if d is not None],
                      lambda item: item[0].objective_usd)
    _number_points(panel, [(days, r.objective_usd or 0.0) for r, days in numbered],
                   [(days, r.objective_usd or 0.0) for r, days in placed])
    keys = [_number_entry(number, f"{plan_label(r.result.name, chosen_name)}: "
                                  f"{usd(r.objective_usd or 0.0, money)}, "
                                  f"P90 finish day {days:,.0f}")
            for number, (r, days) in enumerate(numbered, start=1)]
    usd_axis(panel.y, money)
    panel.x.margin, panel.y.margin = 0.06, 0.1  # room for the numbers above the points
    panel.x.label = "Last phase finished, P90 (days from the start)"
    panel.y.label = f"Cost over the horizon ({result.objective.value}, {money.code})"
    panel.add_legend(place=Place.RIGHT, size_pt=8.0)
    if keys:  # a figure legend: the layout makes room for it under the plot
        figure.add_legend(keys, title="Plans on the Pareto front, cheapest first", left=True,
                          size_pt=7.0, frame=False)
    return Chart("pareto_front", title, figure)


def _number_points(panel: Panel, points: Sequence[tuple[float, float]],
                   every: Sequence[tuple[float, float]], *, log: bool = False) -> None:
    """Write 1, 2, … above ``points`` (in that order); points that would print over one another
    (nearer than :data:`CLUSTER_SHARE` of the span of ``every`` both ways, measured on log10 when
    ``log``) share one label "3, 4". A white box keeps the number readable over markers."""
    def scale(value: float) -> float:
        return math.log10(value) if log and value > 0 else value

    xs = [scale(x) for x, _ in every]
    ys = [scale(y) for _, y in every]
    x_near = CLUSTER_SHARE * ((max(xs) - min(xs)) or 1.0)
    y_near = 3 * CLUSTER_SHARE * ((max(ys) - min(ys)) or 1.0)
    groups: list[tuple[list[int], tuple[float, float]]] = []
    for number, (x, y) in enumerate(points, start=1):
        for members, (gx, gy) in groups:
            if abs(scale(x) - scale(gx)) <= x_near and abs(scale(y) - scale(gy)) <= y_near:
                members.append(number)
                break
        else:
            groups.append(([number], (x, y)))
    for members, (x, y) in groups:
        panel.label(x, y, ", ".join(map(str, members)), dy_pt=NUMBER_RISE_PT, ha="center",
                    va="baseline", size_pt=8.0, bold=True, box="#ffffff")


def _number_entry(number: int, label: str) -> Entry:
    return Entry(label, kind="symbol", symbol=str(number))


def training_fronts(fronts: Sequence[TrainingFront], money: Currency = USD) -> Chart | None:
    """Per training phase: every option rated (GPU type, count, layout, purchase option) at its
    expected wall time and cost, the non-dominated ones joined; both axes log, ticks at 1, 2
    and 5 of each decade; the fastest few front options numbered and named in the legend."""
    shown = [front for front in fronts if front.options][:MAX_PANELS]
    if not shown:
        return None
    title = "Training options: wall time against cost"
    figure = new_figure(9.0, 1.0 + 3.8 * len(shown), title)
    for panel, front in zip(figure.add_panels(len(shown)), shown, strict=True):
        _training_panel(panel, front, money)
    return Chart("training_front", title, figure)


def _training_panel(panel: Panel, front: TrainingFront, money: Currency = USD) -> None:
    late = [o for o in front.options if not o.meets_deadline]
    ok = [o for o in front.options if o.meets_deadline]
    for options, color, label in ((ok, PALETTE[0], "meets the deadline"),
                                  (late, PALETTE[5], "misses it")):
        if options:
            panel.points([o.wall_time_s / SECONDS_PER_DAY for o in options],
                         [o.cost_usd for o in options], size_pt=OPTION_PT, face=color,
                         alpha=0.7, label=label)
    best = front.front
    panel.line([o.wall_time_s / SECONDS_PER_DAY for o in best], [o.cost_usd for o in best],
               "#000000", width_pt=1.0, marker=Marker.DISC, marker_pt=4.0, label="Pareto front")
    named = best[:MAX_NAMED]  # the fastest few, numbered and named in the legend
    _number_points(panel, [(o.wall_time_s / SECONDS_PER_DAY, o.cost_usd) for o in named],
                   [(o.wall_time_s / SECONDS_PER_DAY, o.cost_usd) for o in front.options],
                   log=True)
    keys = [_number_entry(number, f"{o.gpus}× {o.gpu} {o.option.value}: "
                                  f"{o.wall_time_s / SECONDS_PER_DAY:.3g} days, "
                                  f"{usd(o.cost_usd, money)}")
            for number, o in enumerate(named, start=1)]
    usd_log_axis(panel.y, money)
    panel.x.log, panel.x.subs = True, (1.0, 2.0, 5.0)  # labelled 3, not 3×10⁰; no minor labels
    panel.x.label = "Expected wall time (days, log scale)"
    panel.y.label = f"Expected cost of the phase ({money.code}, log scale)"
    panel.title = f"{front.phase}: {len(front.options):,} options rated analytically"
    panel.title_bold = False
    panel.add_legend([*panel.entries(), *keys], place=Place.RIGHT, size_pt=7.0)


def reservation_curves(sizings: Sequence[ReservationSizing],
                       money: Currency = USD) -> Chart | None:
    """Per GPU type: the expected cost of committing 0, 1, 2 … instances for each term and
    payment option against the simulated demand, with the conservative, balanced and aggressive
    points marked."""
    gpus = sorted({s.gpu for s in sizings})[:MAX_PANELS]
    if not gpus:
        return None
    title = "Reservation sizing: cost against the GPUs committed"
    figure = new_figure(9.0, 1.0 + 3.8 * len(gpus), title)
    for panel, gpu in zip(figure.add_panels(len(gpus)), gpus, strict=True):
        _reservation_panel(panel, gpu, [s for s in sizings if s.gpu == gpu], money)
    return Chart("reservation_curve", title, figure)


def _reservation_panel(panel: Panel, gpu: str, sizings: Sequence[ReservationSizing],
                       money: Currency = USD) -> None:
    panel.title = f"{gpu}: commitment level against simulated demand"
    panel.title_bold = False
    if all(len(s.curve) < 2 for s in sizings):
        note(panel, f"{gpu}: no simulated demand to commit to")
        return
    for index, sizing in enumerate(sizings):
        color = PALETTE[index % len(PALETTE)]
        best = sizing.aggressive
        stranded = (f", {usd(best.stranded_usd, money)} stranded" if best.stranded_usd > 0
                    else "")
        panel.line([level.gpus for level in sizing.curve],
                   [level.cost_usd for level in sizing.curve], color, width_pt=1.2,
                   label=f"{sizing.option.value} (discount {sizing.discount:.0%}): cheapest at "
                         f"{best.gpus} GPUs, saves {usd(best.savings_usd, money)}{stranded}")
        for name, marker in POINT_MARKERS:
            level = getattr(sizing, name)
            panel.points([level.gpus], [level.cost_usd], marker, size_pt=LEVEL_PT, face=color,
                         edge="#000000", edge_width_pt=0.6, z=3.0)
    shapes = [Entry(name, kind="marker", marker=marker, marker_pt=LEVEL_PT, face="#BBBBBB",
                    edge="#000000", edge_width_pt=0.6)
              for name, marker in POINT_MARKERS]  # one entry per point shape, not per curve
    panel.x.integer = True
    usd_axis(panel.y, money)
    panel.x.label = f"{gpu} GPUs committed for the term (whole instances)"
    panel.y.label = f"Expected cost: commitment + on-demand ({money.code})"
    panel.add_legend([*panel.entries(), *shapes], place=Place.BEST, size_pt=7.0)


def optimize_charts(result: OptimizeResult) -> list[Chart]:
    """The charts this answer has data for, in the order the page shows them."""
    best = None if result.best is None else result.best.result.name
    plans = None if result.run is None else cost_by_plan(
        result.run, recommended=best, why=f"chosen on the {result.objective.value} cost")
    money = _currency(result)
    built = (pareto_front(result), training_fronts(result.training_fronts, money),
             reservation_curves(result.reservations, money), plans)
    return [chart for chart in built if chart is not None]
