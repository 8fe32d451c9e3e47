"""A figure drawn: laid out (:func:`~costsim.report.plot.layout.place`), turned into a scene of
pixels, and written as PNG and SVG bytes from that one scene."""

from __future__ import annotations

import math
from collections.abc import Iterable

from costsim.report.plot.clip import Box, clip_polygon, clip_polyline
from costsim.report.plot.figure import (
    FIGURE_TITLE_PT,
    Band,
    Bars,
    Entry,
    Figure,
    Label,
    Line,
    Mark,
    Marker,
    Place,
    Points,
    Segments,
    Span,
)
from costsim.report.plot.fonts import measure, px
from costsim.report.plot.layout import (
    LABEL_PAD,
    PAD,
    TICK,
    TICK_PAD,
    TITLE_PAD,
    LegendBox,
    Placed,
    PlacedPanel,
    Reach,
    Ticks,
    corner,
    place,
    x_tick_label_extent,
)
from costsim.report.plot.png import to_png
from costsim.report.plot.scene import Circle, Path, Point, Rect, Scene, Text
from costsim.report.plot.svg import to_svg

GRID_COLOR, GRID_ALPHA = "#b0b0b0", 0.3  # matplotlib's grid colour at the charts' alpha
SPINE_COLOR = "#000000"
SPINE_PT = 0.8
ERROR_COLOR = "#000000"
LEGEND_EDGE = "#cccccc"


class _Frame:
    """Data values to pixels in one panel's box."""

    def __init__(self, box: Box, x: Reach, y: Reach) -> None:
        self.box, self.x, self.y = box, x, y

    def px(self, x: float, y: float) -> Point:
        x0, y0, x1, y1 = self.box
        return x0 + self.x.share(x) * (x1 - x0), y1 - self.y.share(y) * (y1 - y0)

    def inside(self, point: Point) -> bool:
        x0, y0, x1, y1 = self.box
        return x0 - 0.5 <= point[0] <= x1 + 0.5 and y0 - 0.5 <= point[1] <= y1 + 0.5


def _runs(points: Iterable[Point]) -> list[list[Point]]:
    """The points split where a value is not finite (a gap in the line)."""
    runs: list[list[Point]] = [[]]
    for point in points:
        if math.isfinite(point[0]) and math.isfinite(point[1]):
            runs[-1].append(point)
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if run]


def marker_shapes(x: float, y: float, marker: Marker, size: float, face: str | None,
                  edge: str | None, edge_width: float, alpha: float = 1.0) -> list[Circle | Path]:
    """A marker ``size`` pixels across centred on (x, y)."""
    r = size / 2
    color = face or edge or "#000000"
    if marker is Marker.DISC:
        return [Circle(x, y, r, face, edge, edge_width, alpha)]
    if marker is Marker.RING:
        return [Circle(x, y, r, None, edge or face, max(edge_width, px(1.2)), alpha)]
    if marker is Marker.CROSS:
        d = r * 0.8
        width = max(edge_width, px(1.2))
        return [Path(((x - d, y - d), (x + d, y + d)), color, width, alpha),
                Path(((x - d, y + d), (x + d, y - d)), color, width, alpha)]
    if marker is Marker.TICK:
        return [Path(((x, y - r), (x, y + r)), color, max(edge_width, px(1.0)), alpha)]
    if marker is Marker.SQUARE:
        d = r * 0.85
        corners: tuple[Point, ...] = ((x - d, y - d), (x + d, y - d), (x + d, y + d),
                                      (x - d, y + d))
    elif marker is Marker.TRIANGLE_DOWN:
        corners = ((x - r, y - r * 0.6), (x + r, y - r * 0.6), (x, y + r))
    else:  # a five-pointed star, inner radius 0.4 of the outer
        corners = tuple((x + (r if k % 2 == 0 else 0.4 * r) * math.sin(k * math.pi / 5),
                         y - (r if k % 2 == 0 else 0.4 * r) * math.cos(k * math.pi / 5))
                        for k in range(10))
    return [Path(corners, edge if edge_width > 0 else None, edge_width, alpha, (), face, True)]


class _Painter:
    def __init__(self, placed: Placed) -> None:
        self.placed = placed
        self.scene = Scene(placed.width, placed.height)

    def add(self, shape: Rect | Path | Circle | Text) -> None:
        self.scene.add(shape)

    def text(self, x: float, y: float, text: str, size_pt: float, **style: object) -> None:
        if text:
            self.add(Text(x, y, text, size_pt, **style))  # type: ignore[arg-type]

    # --- marks ---------------------------------------------------------------------------
    def mark(self, frame: _Frame, right: _Frame | None, mark: Mark) -> None:
        if isinstance(mark, Bars):
            self.bars(frame, mark)
        elif isinstance(mark, Line):
            self.line(right if mark.right and right is not None else frame, mark)
        elif isinstance(mark, Band):
            self.band(frame, mark)
        elif isinstance(mark, Points):
            self.points(right if mark.right and right is not None else frame, mark)
        elif isinstance(mark, Span):
            self.span(frame, mark)
        elif isinstance(mark, Segments):
            for y, a, b in zip(mark.ys, mark.x0s, mark.x1s, strict=True):
                self.polyline(frame, [frame.px(a, y), frame.px(b, y)], mark.color,
                              px(mark.width_pt), (), mark.alpha)
        else:
            self.label(frame, mark)

    def bars(self, frame: _Frame, bars: Bars) -> None:
        half = bars.thickness / 2
        x0, y0, x1, y1 = frame.box
        for index, (where, length, base) in enumerate(zip(bars.positions, bars.lengths,
                                                          bars.base, strict=True)):
            if bars.horizontal:
                (ax, ay), (bx, by) = (frame.px(base, where - half),
                                      frame.px(base + length, where + half))
            else:
                (ax, ay), (bx, by) = (frame.px(where - half, base),
                                      frame.px(where + half, base + length))
            left, right = max(min(ax, bx), x0), min(max(ax, bx), x1)
            top, bottom = max(min(ay, by), y0), min(max(ay, by), y1)
            if right <= left or bottom <= top:
                continue
            edge = bars.edges[index] if index < len(bars.edges) else None
            self.add(Rect(left, top, right, bottom, bars.colors[index], 1.0, edge,
                          px(bars.edge_width_pt) if edge else 0.0))
        cap = px(4.0)
        for where, (low, high) in zip(bars.positions, bars.errors, strict=False):
            if bars.horizontal:
                a, b = frame.px(low, where), frame.px(high, where)
                caps = [((p[0], p[1] - cap), (p[0], p[1] + cap)) for p in (a, b)]
            else:
                a, b = frame.px(where, low), frame.px(where, high)
                caps = [((p[0] - cap, p[1]), (p[0] + cap, p[1])) for p in (a, b)]
            self.polyline(frame, [a, b], ERROR_COLOR, px(1.2))
            for c0, c1 in caps:
                self.polyline(frame, [c0, c1], ERROR_COLOR, px(1.2))

    def polyline(self, frame: _Frame, points: list[Point], color: str, width: float,
                 dash: tuple[float, ...] = (), alpha: float = 1.0) -> None:
        for run in _runs(points):
            for piece in clip_polyline(run, frame.box):
                self.add(Path(tuple(piece), color, width, alpha,
                              tuple(px(d) for d in dash)))

    def line(self, frame: _Frame, line: Line) -> None:
        points = [frame.px(x, y) for x, y in zip(line.xs, line.ys, strict=True)]
        self.polyline(frame, points, line.color, px(line.width_pt), line.dash, line.alpha)
        if line.marker is not None:
            for point in points:
                if math.isfinite(point[0]) and math.isfinite(point[1]) and frame.inside(point):
                    for shape in marker_shapes(*point, line.marker, px(line.marker_pt),
                                               line.color, None, 0.0, line.alpha):
                        self.add(shape)

    def band(self, frame: _Frame, band: Band) -> None:
        rows = [(x, lo, hi) for x, lo, hi in zip(band.xs, band.low, band.high, strict=True)]
        run: list[tuple[float, float, float]] = []
        for row in [*rows, (math.nan, math.nan, math.nan)]:
            if all(math.isfinite(v) for v in row):
                run.append(row)
                continue
            if len(run) > 1:
                outline = [frame.px(x, hi) for x, _, hi in run]
                outline += [frame.px(x, lo) for x, lo, _ in reversed(run)]
                clipped = clip_polygon(outline, frame.box)
                if len(clipped) > 2:
                    self.add(Path(tuple(clipped), None, 0.0, band.alpha, (), band.color, True))
            run = []

    def points(self, frame: _Frame, points: Points) -> None:
        for x, y in zip(points.xs, points.ys, strict=True):
            at = frame.px(x, y)
            if math.isfinite(at[0]) and math.isfinite(at[1]) and frame.inside(at):
                for shape in marker_shapes(*at, points.marker, px(points.size_pt), points.face,
                                           points.edge, px(points.edge_width_pt), points.alpha):
                    self.add(shape)

    def span(self, frame: _Frame, span: Span) -> None:
        x0, y0, x1, y1 = frame.box
        if span.vertical:
            x = frame.px(span.value, frame.y.low)[0]
            points = [(x, y0), (x, y1)]
        else:
            y = frame.px(frame.x.low, span.value)[1]
            points = [(x0, y), (x1, y)]
        self.polyline(frame, points, span.color, px(span.width_pt), span.dash)

    def label(self, frame: _Frame, label: Label) -> None:
        x, y = frame.px(label.x, label.y)
        if not (math.isfinite(x) and math.isfinite(y)):
            return
        self.text(x + px(label.dx_pt), y - px(label.dy_pt), label.text, label.size_pt,
                  ha=label.ha, va=label.va, bold=label.bold, box=label.box, color=label.color)

    # --- axes ----------------------------------------------------------------------------
    def panel(self, placed: PlacedPanel) -> None:
        panel = placed.panel
        frame = _Frame(placed.box, placed.x.reach, placed.y.reach)
        right = None if placed.right is None else _Frame(placed.box, placed.x.reach,
                                                         placed.right.reach)
        x0, y0, x1, y1 = placed.box
        grid = px(0.8)
        if not panel.note:
            for value in placed.x.positions:
                x = frame.px(value, placed.y.reach.low)[0]
                self.add(Path(((x, y0), (x, y1)), GRID_COLOR, grid, GRID_ALPHA))
            for value in placed.y.positions:
                y = frame.px(placed.x.reach.low, value)[1]
                self.add(Path(((x0, y), (x1, y)), GRID_COLOR, grid, GRID_ALPHA))
        for mark in sorted(panel.marks, key=lambda m: m.z):
            self.mark(frame, right, mark)
        spine = px(SPINE_PT)
        self.add(Path(((x0, y0), (x0, y1), (x1, y1)), SPINE_COLOR, spine))
        if right is not None:
            self.add(Path(((x1, y0), (x1, y1)), SPINE_COLOR, spine))
        if panel.note:
            self.text((x0 + x1) / 2, (y0 + y1) / 2, panel.note, 9.0, ha="center", va="center")
        else:
            self.x_axis(placed, frame)
            self.y_axis(placed, frame, placed.y, x0, -1)
            if placed.right is not None and right is not None:
                self.y_axis(placed, right, placed.right, x1, 1)
        self.title(placed)
        if placed.legend is not None:
            at = placed.legend_at
            if placed.legend.legend.place is Place.BEST or at is None:
                at = self.best_corner(placed)
            self.legend(placed.legend, at)

    def x_axis(self, placed: PlacedPanel, frame: _Frame) -> None:
        axis = placed.panel.x
        x0, _y0, x1, y1 = placed.box
        ticks = placed.x
        for value, label in zip(ticks.positions, ticks.labels, strict=True):
            x = frame.px(value, placed.y.reach.low)[0]
            self.add(Path(((x, y1), (x, y1 + TICK)), SPINE_COLOR, px(SPINE_PT)))
            if not placed.panel.show_x_ticks:
                continue
            bold = label in axis.bold_labels
            if axis.rotation:
                self.text(x, y1 + TICK + TICK_PAD, label, axis.tick_pt, ha="right", va="center",
                          rotation=axis.rotation, bold=bold)
            else:
                self.text(x, y1 + TICK + TICK_PAD, label, axis.tick_pt, ha="center", va="top",
                          bold=bold)
        if axis.label:
            depth = (x_tick_label_extent(axis, ticks)[0] if placed.panel.show_x_ticks
                     else TICK)
            self.text((x0 + x1) / 2, y1 + depth + LABEL_PAD, axis.label, axis.tick_pt,
                      ha="center", va="top", color=axis.label_color)

    def y_axis(self, placed: PlacedPanel, frame: _Frame, ticks: Ticks, edge: float,
               side: int) -> None:
        axis = placed.panel.y if side < 0 else placed.panel.right
        assert axis is not None
        widest = 0.0
        for value, label in zip(ticks.positions, ticks.labels, strict=True):
            y = frame.px(placed.x.reach.low, value)[1]
            self.add(Path(((edge, y), (edge + side * TICK, y)), SPINE_COLOR, px(SPINE_PT)))
            bold = label in axis.bold_labels
            self.text(edge + side * (TICK + TICK_PAD), y, label, axis.tick_pt,
                      ha="right" if side < 0 else "left", va="center", bold=bold)
            widest = max(widest, measure(label, axis.tick_pt, bold).width)
        if axis.label:
            x = edge + side * (TICK + TICK_PAD + widest + LABEL_PAD)
            _, y0, _, y1 = placed.box
            self.text(x, (y0 + y1) / 2, axis.label, axis.tick_pt, ha="center",
                      va="bottom" if side < 0 else "top", rotation=90.0,
                      color=axis.label_color)

    def title(self, placed: PlacedPanel) -> None:
        panel = placed.panel
        if not panel.title:
            return
        x0, y0, x1, _ = placed.box
        x, ha = (x0, "left") if panel.title_left else ((x0 + x1) / 2, "center")
        self.text(x, y0 - TITLE_PAD, panel.title, panel.title_pt, ha=ha, va="bottom",
                  bold=panel.title_bold)

    def best_corner(self, placed: PlacedPanel) -> tuple[float, float]:
        """The inside corner whose legend box covers the fewest drawn points."""
        assert placed.legend is not None
        points = [p for s in self.scene.shapes if isinstance(s, Path) for p in s.points]
        points += [(s.x, s.y) for s in self.scene.shapes if isinstance(s, Circle)]
        best, fewest = None, math.inf
        for where in (Place.UPPER_RIGHT, Place.UPPER_LEFT, Place.LOWER_LEFT, Place.LOWER_RIGHT):
            left, top = corner(placed.legend, placed.box, where)
            right, bottom = left + placed.legend.width, top + placed.legend.height
            covered = sum(left <= x <= right and top <= y <= bottom for x, y in points)
            if covered < fewest:
                best, fewest = (left, top), covered
        assert best is not None
        return best

    def legend(self, box: LegendBox, at: tuple[float, float], *, left_title: bool = False
               ) -> None:
        legend = box.legend
        lx, ly = at
        if legend.frame:
            self.add(Rect(lx, ly, lx + box.width, ly + box.height, "#ffffff", 0.8, LEGEND_EDGE,
                          px(0.8)))
        em = px(legend.size_pt)
        if legend.title:
            if left_title:
                self.text(lx + 0.4 * em, ly + 0.4 * em, legend.title, legend.size_pt,
                          va="top")
            else:
                self.text(lx + box.width / 2, ly + 0.4 * em, legend.title, legend.size_pt,
                          ha="center", va="top")
        for entry, (x, y, row) in zip(legend.entries, box.slots, strict=True):
            middle = ly + y + row / 2
            self.handle(entry, lx + x, middle, box.handle, em)
            self.text(lx + x + box.handle + 0.8 * em, middle, entry.label, legend.size_pt,
                      va="center")

    def handle(self, entry: Entry, x: float, y: float, length: float, em: float) -> None:
        if entry.kind == "patch":
            self.add(Rect(x, y - 0.35 * em, x + length, y + 0.35 * em, entry.color, 1.0,
                          entry.edge, px(entry.edge_width_pt) if entry.edge else 0.0))
        elif entry.kind == "symbol":
            self.text(x + length / 2, y, entry.symbol, 7.0, ha="center", va="center",
                      bold=True)
        else:
            if entry.kind == "line":
                self.add(Path(((x, y), (x + length, y)), entry.color, px(entry.width_pt), 1.0,
                              tuple(px(d) for d in entry.dash)))
            if entry.marker is not None:
                for shape in marker_shapes(x + length / 2, y, entry.marker, px(entry.marker_pt),
                                           entry.face, entry.edge, px(entry.edge_width_pt)):
                    self.add(shape)


def scene_of(figure: Figure) -> Scene:
    """The figure laid out and drawn into pixels."""
    placed = place(figure)
    painter = _Painter(placed)
    if figure.title:
        painter.text(placed.width / 2, PAD, figure.title, FIGURE_TITLE_PT, ha="center", va="top",
                     bold=True)
    for panel in placed.panels:
        painter.panel(panel)
    if placed.legend is not None and placed.legend_at is not None:
        painter.legend(placed.legend, placed.legend_at, left_title=figure.legend_left)
    return painter.scene


def render(figure: Figure) -> tuple[bytes, bytes]:
    """The figure's PNG and SVG bytes, both drawn from one scene."""
    scene = scene_of(figure)
    return to_png(scene), to_svg(scene)
