"""Placing a figure: each axis's reach and ticks, each panel's box from its measured
decorations, measured once per pass.

A figure is one column of panels. The left and right margins are shared by every panel, so
the plotting boxes line up; each panel's height share is what is left of the figure's height
after the figure title, the figure legend and every panel's title, x tick labels, x label and
legend below it. The axis lengths choose how many ticks fit, and the ticks change the margins,
so the layout runs twice: ticks chosen from first-guess lengths, then from the placed boxes;
the second pass's ticks are the ones drawn and measured, so every text lies where it was
measured to lie.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from costsim.report.plot.figure import (
    Axis,
    Band,
    Bars,
    Figure,
    Label,
    Legend,
    Line,
    Panel,
    Place,
    Points,
    Segments,
    Span,
)
from costsim.report.plot.fonts import DPI, measure, px
from costsim.report.plot.ticks import auto_limits, log_ticks, nice_ticks

PAD = px(4.0)  # between a figure's edge and its content, and between stacked blocks
TICK = px(3.5)  # tick mark length (matplotlib's default major tick)
TICK_PAD = px(3.5)  # tick mark to its label
LABEL_PAD = px(4.0)  # tick labels to the axis label
TITLE_PAD = px(6.0)  # a panel's title above its box
LEGEND_GAP = px(6.0)  # a legend beside or below what it explains
MOST_TICKS = 10  # matplotlib's automatic locators: at most 9 intervals


@dataclass(frozen=True, slots=True)
class Reach:
    """An axis's drawn interval, as a map from data values to a share of the axis length."""

    low: float
    high: float
    log: bool = False
    base: float = 10.0
    inverted: bool = False

    def share(self, value: float) -> float:
        """0 at the axis start (left or bottom), 1 at its end; nan for a value a log axis
        cannot show."""
        if self.log:
            if value <= 0:
                return math.nan
            low, high, value = math.log(self.low), math.log(self.high), math.log(value)
        else:
            low, high = self.low, self.high
        share = (value - low) / (high - low) if high != low else 0.5
        return 1.0 - share if self.inverted else share

    def contains(self, value: float) -> bool:
        low, high = min(self.low, self.high), max(self.low, self.high)
        span = high - low
        return low - 1e-9 * span <= value <= high + 1e-9 * span


@dataclass(frozen=True, slots=True)
class Ticks:
    """An axis's reach, tick positions and labels as drawn."""

    reach: Reach
    positions: tuple[float, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LegendBox:
    """A legend's size and, per entry, its column's left and its row's top, relative to the
    legend's top-left corner (pixels)."""

    legend: Legend
    width: float
    height: float
    slots: tuple[tuple[float, float, float], ...]  # x, y top, row height per entry
    handle: float  # the handle's length
    title_height: float


@dataclass(frozen=True, slots=True)
class PlacedPanel:
    """A panel with its plotting box (pixels; y down) and its axes' ticks."""

    panel: Panel
    box: tuple[float, float, float, float]
    x: Ticks
    y: Ticks
    right: Ticks | None
    legend: LegendBox | None
    legend_at: tuple[float, float] | None  # the legend's top-left corner


@dataclass(frozen=True, slots=True)
class Placed:
    """A laid-out figure."""

    figure: Figure
    width: int
    height: int
    panels: tuple[PlacedPanel, ...]
    legend: LegendBox | None
    legend_at: tuple[float, float] | None


def legend_box(legend: Legend) -> LegendBox:
    """Entries column by column (``columns`` of them, filled top to bottom like matplotlib);
    lengths in the legend's font size: handle 2 em, handle-to-text 0.8 em, rows 0.5 em apart,
    columns 2 em apart, 0.4 em border."""
    em = px(legend.size_pt)
    handle, gap, row_gap, col_gap, border = 2 * em, 0.8 * em, 0.5 * em, 2 * em, 0.4 * em
    count = len(legend.entries)
    columns = max(1, min(legend.columns, count))
    per_column = math.ceil(count / columns) if count else 0
    title_height = measure(legend.title, legend.size_pt).height + 0.4 * em if legend.title else 0
    slots: list[tuple[float, float, float]] = []
    x = border
    height = 0.0
    widest_column = 0.0
    for column in range(columns):
        members = legend.entries[column * per_column:(column + 1) * per_column]
        y = border + title_height
        width = 0.0
        for entry in members:
            box = measure(entry.label, legend.size_pt)
            row = max(box.height, em)
            slots.append((x, y, row))
            y += row + row_gap
            width = max(width, handle + gap + box.width)
        height = max(height, y - row_gap + border)
        x += width + col_gap
        widest_column = max(widest_column, width)
    body = x - col_gap + border if count else 2 * border
    title_width = measure(legend.title, legend.size_pt).width + 2 * border if legend.title else 0
    if not count:
        height = border * 2 + title_height
    return LegendBox(legend=legend, width=max(body, title_width), height=height,
                     slots=tuple(slots), handle=handle, title_height=title_height)


def _mark_values(panel: Panel) -> tuple[list[float], list[float], list[float], list[float],
                                         list[float]]:
    """Data values on x, on y, on the right y axis, and the sticky edges (bar bases) of x
    and y."""
    xs: list[float] = []
    ys: list[float] = []
    rights: list[float] = []
    sticky_x: list[float] = []
    sticky_y: list[float] = []
    for mark in panel.marks:
        if isinstance(mark, Bars):
            ends = [b + n for b, n in zip(mark.base, mark.lengths, strict=True)]
            values = [*mark.base, *ends, *(v for pair in mark.errors for v in pair)]
            half = mark.thickness / 2
            across = [p + d for p in mark.positions for d in (-half, half)]
            (xs if mark.horizontal else ys).extend(values)
            (ys if mark.horizontal else xs).extend(across)
            (sticky_x if mark.horizontal else sticky_y).extend(mark.base)
        elif isinstance(mark, Line | Points):
            xs.extend(mark.xs)
            (rights if mark.right else ys).extend(mark.ys)
        elif isinstance(mark, Band):
            xs.extend(mark.xs)
            ys.extend([*mark.low, *mark.high])
        elif isinstance(mark, Segments):
            ys.extend(mark.ys)
            xs.extend([*mark.x0s, *mark.x1s])
        elif isinstance(mark, Span):
            (xs if mark.vertical else ys).append(mark.value)
        elif isinstance(mark, Label):
            continue
    return xs, ys, rights, sticky_x, sticky_y


def _reach(axis: Axis, values: list[float], sticky: list[float]) -> Reach:
    if axis.margin:
        low, high = auto_limits(values, sticky, log=axis.log, margin=axis.margin)
    else:
        low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if axis.low is not None:
        low = axis.low
    if axis.high is not None:
        high = axis.high
    if axis.log:
        low = low if low > 0 else (high / 100 if high > 0 else 1.0)
        high = high if high > low else low * 10
    if high == low:
        high = low + 1.0
    return Reach(low=low, high=high, log=axis.log, base=axis.base, inverted=axis.inverted)


def _ticks(axis: Axis, reach: Reach, length: float, vertical: bool) -> Ticks:
    low, high = sorted((reach.low, reach.high))
    if axis.ticks is not None:
        pairs = [(p, axis.tick_labels[i] if axis.tick_labels is not None else axis.format(p))
                 for i, p in enumerate(axis.ticks) if reach.contains(p)]
        return Ticks(reach, tuple(p for p, _ in pairs), tuple(label for _, label in pairs))
    font = px(axis.tick_pt)
    if axis.log:
        positions = _log_positions(axis, reach, length, vertical, font)
        # a log range too short for two of its 1-2-5 ticks (2.3 to 4.6 days) gets round linear
        # ticks instead, as matplotlib's LogLocator falls back to its AutoLocator
        if len(positions) >= 2 or len(axis.subs) < 2:
            return Ticks(reach, tuple(positions), tuple(axis.format(p) for p in positions))
    # room per tick as matplotlib's axes give it (get_tick_space: 2 font sizes on a y axis, 3
    # on an x axis), on x at least a label's width and 1 em, so labels never touch
    if vertical or axis.rotation:
        room = 2.0 * font
    else:
        widest = max(measure(axis.format(v), axis.tick_pt).width for v in (low, high))
        room = max(3.0 * font, widest + font)
    most = max(3, min(MOST_TICKS, int(length / room) + 1))
    rate = axis.rate
    positions = [t / rate for t in nice_ticks(low * rate, high * rate, most,
                                              integer=axis.integer)]
    return Ticks(reach, tuple(positions), tuple(axis.format(p) for p in positions))


def _log_positions(axis: Axis, reach: Reach, length: float, vertical: bool,
                   font: float) -> list[float]:
    """Every ``subs`` multiple of each power inside the reach, as matplotlib's LogLocator with
    explicit subs draws them; only the powers when two neighbours would come nearer than a
    label (a line of text on a y axis, the wider label and 0.5 em on an x axis)."""
    low, high = sorted((reach.low, reach.high))
    positions = log_ticks(low, high, axis.base, axis.subs, most=10 * MOST_TICKS)
    if len(positions) < 2:
        return positions
    pixels = [reach.share(p) * length for p in positions]
    gap = min(abs(b - a) for a, b in itertools.pairwise(pixels))
    if vertical or axis.rotation:
        need = 1.2 * font
    else:
        need = max(measure(axis.format(p), axis.tick_pt).width for p in positions) + 0.5 * font
    if gap >= need:
        return positions
    return log_ticks(low, high, axis.base, (1.0,),
                     most=max(2, min(MOST_TICKS, int(length / max(need, 2.0 * font)) + 1)))


def _tick_width(axis: Axis, ticks: Ticks) -> float:
    """How far the y tick labels (with their marks) reach from the axis line."""
    widths = [measure(label, axis.tick_pt, label in axis.bold_labels).width
              for label in ticks.labels]
    return TICK + TICK_PAD + max(widths, default=0.0)


def _axis_label_width(axis: Axis) -> float:
    return measure(axis.label, axis.tick_pt).height + LABEL_PAD if axis.label else 0.0


def x_tick_label_extent(axis: Axis, ticks: Ticks) -> tuple[float, float, float]:
    """Below the axis line: the tick labels' depth; and how far the first label reaches
    left of its tick and the last right of its tick (unrotated: half their widths)."""
    if not ticks.labels:
        return TICK, 0.0, 0.0
    boxes = [measure(label, axis.tick_pt, label in axis.bold_labels) for label in ticks.labels]
    if axis.rotation:
        angle = math.radians(axis.rotation)
        depth = max(b.width * math.sin(angle) + b.height * math.cos(angle) for b in boxes)
        return TICK + TICK_PAD + depth, boxes[0].width * math.cos(angle), 0.0
    depth = max(b.height for b in boxes)
    return TICK + TICK_PAD + depth, boxes[0].width / 2, boxes[-1].width / 2


def _title_height(panel: Panel) -> float:
    if not panel.title:
        return PAD
    return measure(panel.title, panel.title_pt, panel.title_bold).height + TITLE_PAD


def place(figure: Figure) -> Placed:
    """Lay ``figure`` out (two passes, see the module's docstring)."""
    width = round(figure.width_in * DPI)
    height = round(figure.height_in * DPI)
    values = [_mark_values(panel) for panel in figure.panels]
    x_reaches = [_reach(p.x, v[0], v[3]) for p, v in zip(figure.panels, values, strict=True)]
    if figure.share_x and x_reaches:
        low = min(min(r.low, r.high) for r in x_reaches)
        high = max(max(r.low, r.high) for r in x_reaches)
        x_reaches = [Reach(low, high, r.log, r.base, r.inverted) for r in x_reaches]
    y_reaches = [_reach(p.y, v[1], v[4]) for p, v in zip(figure.panels, values, strict=True)]
    right_reaches = [None if p.right is None else _reach(p.right, v[2], [])
                     for p, v in zip(figure.panels, values, strict=True)]
    legends = [None if p.legend is None else legend_box(p.legend) for p in figure.panels]
    figure_legend = None if figure.legend is None else legend_box(figure.legend)
    title_block = (measure(figure.title, 11.0, True).height + PAD) if figure.title else 0.0
    top = PAD + title_block
    bottom = PAD + (figure_legend.height + PAD if figure_legend else 0.0)
    count = len(figure.panels)
    shares = figure.heights if len(figure.heights) == count else [1.0] * count
    plot_width = 0.7 * width
    plot_heights = [0.6 * (height - top - bottom) * s / sum(shares) for s in shares]
    for _ in range(2):
        xt = [_ticks(p.x, r, plot_width, False)
              for p, r in zip(figure.panels, x_reaches, strict=True)]
        yt = [_ticks(p.y, r, h, True)
              for p, r, h in zip(figure.panels, y_reaches, plot_heights, strict=True)]
        rt = [None if p.right is None or r is None else _ticks(p.right, r, h, True)
              for p, r, h in zip(figure.panels, right_reaches, plot_heights, strict=True)]
        left = PAD + max((_tick_width(p.y, t) + _axis_label_width(p.y)
                          for p, t in zip(figure.panels, yt, strict=True)), default=0.0)
        right = PAD
        bands: list[tuple[float, float]] = []  # per panel: above and below its box
        for panel, x_ticks, right_ticks, legend in zip(figure.panels, xt, rt, legends,
                                                       strict=True):
            depth, reach_left, reach_right = x_tick_label_extent(panel.x, x_ticks)
            left = max(left, PAD + reach_left)
            need = reach_right + PAD
            if right_ticks is not None and panel.right is not None:
                need = max(need, PAD + _tick_width(panel.right, right_ticks)
                           + _axis_label_width(panel.right))
            if legend is not None and legend.legend.place is Place.RIGHT:
                need = max(need, LEGEND_GAP + legend.width + PAD)
            right = max(right, need)
            below = (depth if panel.show_x_ticks else TICK)
            if panel.x.label:
                below += LABEL_PAD + measure(panel.x.label, panel.x.tick_pt).height
            if legend is not None and legend.legend.place is Place.BELOW:
                below += LEGEND_GAP + legend.height
            bands.append((_title_height(panel), below + PAD))
        plot_width = max(px(72), width - left - right)
        room = height - top - bottom - sum(a + b for a, b in bands)
        plot_heights = [max(px(36), room * s / sum(shares)) for s in shares]
    placed = []
    y = top
    for index, panel in enumerate(figure.panels):
        above, below = bands[index]
        box = (left, y + above, left + plot_width, y + above + plot_heights[index])
        legend = legends[index]
        at = None if legend is None else _legend_at(legend, panel, box, below)
        placed.append(PlacedPanel(panel=panel, box=box, x=xt[index], y=yt[index],
                                  right=rt[index], legend=legend, legend_at=at))
        y = box[3] + below
    legend_at = None
    if figure_legend is not None:
        x = left if figure.legend_left else (width - figure_legend.width) / 2
        legend_at = (x, height - PAD - figure_legend.height)
    return Placed(figure=figure, width=width, height=height, panels=tuple(placed),
                  legend=figure_legend, legend_at=legend_at)


def _legend_at(legend: LegendBox, panel: Panel, box: tuple[float, float, float, float],
               below: float) -> tuple[float, float]:
    x0, y0, x1, y1 = box
    place_ = legend.legend.place
    if place_ is Place.RIGHT:
        return x1 + LEGEND_GAP, y0
    if place_ is Place.BELOW:
        return (x0 + x1 - legend.width) / 2, y1 + below - PAD - legend.height
    if place_ is Place.BEST:  # the renderer picks the corner, knowing the marks' pixels
        return corner(legend, box, Place.UPPER_RIGHT)
    return corner(legend, box, place_)


def corner(legend: LegendBox, box: tuple[float, float, float, float],
           where: Place) -> tuple[float, float]:
    """The top-left of ``legend`` inside ``box``'s corner ``where`` (0.5 em in)."""
    x0, y0, x1, y1 = box
    inset = 0.5 * px(legend.legend.size_pt)
    left = x0 + inset if where in (Place.UPPER_LEFT, Place.LOWER_LEFT) else (
        x1 - inset - legend.width)
    top = y0 + inset if where in (Place.UPPER_LEFT, Place.UPPER_RIGHT) else (
        y1 - inset - legend.height)
    return left, top
