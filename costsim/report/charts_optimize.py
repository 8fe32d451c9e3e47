"""Charts of ``costsim optimize``: the time–cost Pareto front of the simulated plans (and of each
training phase's options), the reservation cost curves with their three marked points, and the
cost of each simulated plan (``run``'s chart).
Each returns ``None`` when the optimizer found nothing for it to show."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from costsim.domain.currency import USD, Currency
from costsim.optimize.reservation import ReservationSizing
from costsim.optimize.result import OptimizeResult, Origin, RankedPlan
from costsim.optimize.training_front import TrainingFront
from costsim.report.chart_style import (
    PALETTE,
    STAR,
    Chart,
    new_figure,
    note,
    plan_label,
    ranked,
    subplots,
    usd,
    usd_axis,
    usd_log_axis,
)
from costsim.report.charts_cost import cost_by_plan
from costsim.units import SECONDS_PER_DAY

ORIGIN_COLORS = {Origin.HAND_WRITTEN: PALETTE[1], Origin.SEARCH: PALETTE[0],
                 Origin.RESERVATION: PALETTE[2], Origin.SERVING_MIX: PALETTE[3]}
# The three reservation points (docs/optimizer.md "Reservation sizing"): marker and name.
POINT_MARKERS = (("conservative", "v"), ("balanced", "s"), ("aggressive", "*"))
MAX_PANELS = 4  # a chart stays readable up to this many panels; more are left to optimize.json
# Plans whose P90 finishes lie within this share of one another have no time–cost trade-off to
# draw (a scenario of fixed-length phases ends every plan on the same day, give or take the
# random arrivals); the chart is left out rather than drawn over a few hours of noise.
MIN_FINISH_SPREAD = 0.01
CLUSTER_SHARE = 0.015  # front points nearer than this share of the axis span share a label
MAX_NAMED = 6  # training options named on a front: more make the legend longer than the plot


def _currency(result: OptimizeResult) -> Currency:
    """The scenario's display currency (USD when the answer carries no run)."""
    return USD if result.run is None else result.run.scenario.currency


def _finish_days(ranked: RankedPlan) -> float | None:
    finish = ranked.result.finish_s
    return None if finish is None else finish.p90 / SECONDS_PER_DAY


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
    figure = new_figure(9.0, 6.0)
    (axes,) = subplots(figure)
    for origin, color in ORIGIN_COLORS.items():
        mine = [(r, days) for r, days in placed if r.candidate.origin is origin]
        if mine:
            axes.scatter([days for _, days in mine], [r.objective_usd or 0.0 for r, _ in mine],
                         color=color, s=28, label=origin.value, zorder=3)
    on_front = [(r, _finish_days(r)) for r in result.pareto]
    front = sorted((days, r.objective_usd or 0.0) for r, days in on_front if days is not None)
    if front:
        axes.step([when for when, _ in front], [cost for _, cost in front], where="post",
                  color="#000000", linewidth=1, label="Pareto front", zorder=2)
    chosen = None if result.best is None else _finish_days(result.best)
    if result.best is not None and chosen is not None:
        cost = result.best.objective_usd or 0.0
        axes.scatter([chosen], [cost], s=160, facecolors="none", edgecolors="#000000",
                     linewidths=1.5, label=f"{STAR} chosen: {usd(cost, money)}", zorder=4)
    numbered = ranked([(r, d) for r, d in on_front if d is not None],
                      lambda item: item[0].objective_usd)
    _number_points(axes, [(days, r.objective_usd or 0.0) for r, days in numbered],
                   [(days, r.objective_usd or 0.0) for r, days in placed])
    keys = [_number_handle(number, f"{plan_label(r.result.name, chosen_name)}: "
                                   f"{usd(r.objective_usd or 0.0, money)}, "
                                   f"P90 finish day {days:,.0f}")
            for number, (r, days) in enumerate(numbered, start=1)]
    usd_axis(axes, currency=money)
    axes.margins(x=0.06, y=0.1)
    axes.set_xlabel("Last phase finished, P90 (days from the start)")
    axes.set_ylabel(f"Cost over the horizon ({result.objective.value}, {money.code})")
    title = "Time–cost trade-off of the simulated plans"
    figure.suptitle(title, fontweight="bold")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    if keys:  # a figure legend: the layout makes room for it under the plot
        figure.legend(handles=keys, loc="lower left", fontsize=7, frameon=False,
                      title="Plans on the Pareto front, cheapest first", title_fontsize=8,
                      alignment="left")
    return Chart("pareto_front", title, figure)


def _number_points(axes: Axes, points: Sequence[tuple[float, float]],
                   every: Sequence[tuple[float, float]], *, log: bool = False) -> None:
    """Write 1, 2, … above ``points`` (in that order); points that would print over one another
    (nearer than :data:`CLUSTER_SHARE` of the span of ``every`` both ways, measured on log10 when
    ``log``) share one label "3, 4". A white box keeps the number readable over markers."""
    def scale(value: float) -> float:
        return float(np.log10(value)) if log and value > 0 else value

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
    for members, where in groups:
        axes.annotate(", ".join(map(str, members)), where, xytext=(0, 9),
                      textcoords="offset points", ha="center", fontsize=8, fontweight="bold",
                      zorder=5, bbox={"boxstyle": "round,pad=0.15", "facecolor": "white",
                                      "edgecolor": "none", "alpha": 0.8})


def _number_handle(number: int, label: str) -> Line2D:
    return Line2D([], [], linestyle="none", marker=f"${number}$", markersize=7,
                  color="#000000", label=label)


def training_fronts(fronts: Sequence[TrainingFront], money: Currency = USD) -> Chart | None:
    """Per training phase: every option rated (GPU type, count, layout, purchase option) at its
    expected wall time and cost, the non-dominated ones joined."""
    shown = [front for front in fronts if front.options][:MAX_PANELS]
    if not shown:
        return None
    figure = new_figure(9.0, 1.0 + 3.8 * len(shown))
    for axes, front in zip(subplots(figure, len(shown), 1), shown, strict=True):
        _training_panel(axes, front, money)
    title = "Training options: wall time against cost"
    figure.suptitle(title, fontweight="bold")
    return Chart("training_front", title, figure)


def _training_panel(axes: Axes, front: TrainingFront, money: Currency = USD) -> None:
    late = [o for o in front.options if not o.meets_deadline]
    ok = [o for o in front.options if o.meets_deadline]
    for options, color, label in ((ok, PALETTE[0], "meets the deadline"),
                                  (late, PALETTE[5], "misses it")):
        if options:
            axes.scatter([o.wall_time_s / SECONDS_PER_DAY for o in options],
                         [o.cost_usd for o in options], color=color, s=14, alpha=0.7,
                         label=label)
    best = front.front
    axes.plot([o.wall_time_s / SECONDS_PER_DAY for o in best], [o.cost_usd for o in best],
              color="#000000", marker="o", markersize=4, linewidth=1, label="Pareto front")
    named = best[:MAX_NAMED]  # the fastest few, numbered and named in the legend
    _number_points(axes, [(o.wall_time_s / SECONDS_PER_DAY, o.cost_usd) for o in named],
                   [(o.wall_time_s / SECONDS_PER_DAY, o.cost_usd) for o in front.options],
                   log=True)
    keys = [_number_handle(number, f"{o.gpus}× {o.gpu} {o.option.value}: "
                                   f"{o.wall_time_s / SECONDS_PER_DAY:.3g} days, "
                                   f"{usd(o.cost_usd, money)}")
            for number, o in enumerate(named, start=1)]
    usd_log_axis(axes, currency=money)
    axes.set_xscale("log")
    axes.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))  # 3, not 3×10⁰
    axes.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide (0.8 0.9 1)
    axes.set_xlabel("Expected wall time (days, log scale)")
    axes.set_ylabel(f"Expected cost of the phase ({money.code}, log scale)")
    axes.set_title(f"{front.phase}: {len(front.options):,} options rated analytically")
    handles = axes.get_legend_handles_labels()[0]
    axes.legend(handles=[*handles, *keys], loc="upper left", bbox_to_anchor=(1.01, 1.0),
                fontsize=7)


def reservation_curves(sizings: Sequence[ReservationSizing],
                       money: Currency = USD) -> Chart | None:
    """Per GPU type: the expected cost of committing 0, 1, 2 … instances for each term and
    payment option against the simulated demand, with the conservative, balanced and aggressive
    points marked."""
    gpus = sorted({s.gpu for s in sizings})[:MAX_PANELS]
    if not gpus:
        return None
    figure = new_figure(9.0, 1.0 + 3.8 * len(gpus))
    for axes, gpu in zip(subplots(figure, len(gpus), 1), gpus, strict=True):
        _reservation_panel(axes, gpu, [s for s in sizings if s.gpu == gpu], money)
    title = "Reservation sizing: cost against the GPUs committed"
    figure.suptitle(title, fontweight="bold")
    return Chart("reservation_curve", title, figure)


def _reservation_panel(axes: Axes, gpu: str, sizings: Sequence[ReservationSizing],
                       money: Currency = USD) -> None:
    if all(len(s.curve) < 2 for s in sizings):
        note(axes, f"{gpu}: no simulated demand to commit to")
        return
    for index, sizing in enumerate(sizings):
        color = PALETTE[index % len(PALETTE)]
        best = sizing.aggressive
        stranded = (f", {usd(best.stranded_usd, money)} stranded" if best.stranded_usd > 0
                    else "")
        axes.plot([level.gpus for level in sizing.curve],
                  [level.cost_usd for level in sizing.curve], color=color, linewidth=1.2,
                  label=f"{sizing.option.value} (discount {sizing.discount:.0%}): cheapest at "
                        f"{best.gpus} GPUs, saves {usd(best.savings_usd, money)}{stranded}")
        for name, marker in POINT_MARKERS:
            level = getattr(sizing, name)
            axes.scatter([level.gpus], [level.cost_usd], marker=marker, s=60, color=color,
                         edgecolors="#000000", linewidths=0.6, zorder=3)
    for name, marker in POINT_MARKERS:  # one legend entry per point shape, not per curve
        axes.scatter([], [], marker=marker, s=60, color="#BBBBBB", edgecolors="#000000",
                     linewidths=0.6, label=name)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    usd_axis(axes, currency=money)
    axes.set_xlabel(f"{gpu} GPUs committed for the term (whole instances)")
    axes.set_ylabel(f"Expected cost: commitment + on-demand ({money.code})")
    axes.set_title(f"{gpu}: commitment level against simulated demand")
    axes.legend(loc="best", fontsize=7)


def optimize_charts(result: OptimizeResult) -> list[Chart]:
    """The charts this answer has data for, in the order the page shows them."""
    best = None if result.best is None else result.best.result.name
    plans = None if result.run is None else cost_by_plan(
        result.run, recommended=best, why=f"chosen on the {result.objective.value} cost")
    money = _currency(result)
    built = (pareto_front(result), training_fronts(result.training_fronts, money),
             reservation_curves(result.reservations, money), plans)
    return [chart for chart in built if chart is not None]
