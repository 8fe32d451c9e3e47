"""What a chart builder describes: a figure of stacked panels, each with its marks (bars,
lines, bands, markers, spans, labels) in data units, two axes and an optional legend.

Nothing here measures or draws; :mod:`costsim.report.plot.layout` places a figure and
:mod:`costsim.report.plot.render` turns it into SVG and PNG bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

Format = Callable[[float], str]

TICK_PT = 9.0  # tick labels, axis labels and plain text (matplotlib's font.size of the charts)
TITLE_PT = 11.0  # a panel's title (bold)
FIGURE_TITLE_PT = 11.0  # the figure's title (bold)
LEGEND_PT = 8.0


class Marker(Enum):
    """Marker shapes: disc, square, triangle pointing down, star, cross, vertical tick, ring."""

    DISC = "o"
    SQUARE = "s"
    TRIANGLE_DOWN = "v"
    STAR = "*"
    CROSS = "x"
    TICK = "|"
    RING = "ring"


def plain(value: float) -> str:
    """A tick value as ``%g`` (3, 0.25, 1e+06)."""
    return f"{value:g}"


@dataclass(slots=True)
class Axis:
    """One axis: its scale and reach (``None``: from the data), its ticks (``None``: chosen
    from the axis length), how a tick value is written, its label."""

    label: str = ""
    log: bool = False
    base: float = 10.0
    subs: tuple[float, ...] = (1.0, 2.0, 5.0)
    low: float | None = None
    high: float | None = None
    ticks: list[float] | None = None
    tick_labels: list[str] | None = None
    rotation: float = 0.0
    format: Format = plain
    inverted: bool = False
    integer: bool = False
    tick_pt: float = TICK_PT
    bold_labels: frozenset[str] = frozenset()
    label_color: str = "#000000"
    margin: float = 0.05  # share of the data span added at each automatic end (0: none)
    # automatic ticks are round numbers of value × rate (a display currency's rate: €10k, €20k
    # on a USD axis); labels come from ``format`` given the unconverted value
    rate: float = 1.0

    def set_ticks(self, positions: Sequence[float], labels: Sequence[str] | None = None,
                  *, rotation: float = 0.0) -> None:
        """Ticks at ``positions`` (labelled ``labels``, or by :attr:`format`)."""
        self.ticks = [float(p) for p in positions]
        self.tick_labels = None if labels is None else list(labels)
        self.rotation = rotation

    def limits(self, low: float | None = None, high: float | None = None) -> None:
        """Fix either end (``None`` leaves it to the data)."""
        if low is not None:
            self.low = float(low)
        if high is not None:
            self.high = float(high)


@dataclass(frozen=True, slots=True)
class Bars:
    """Bars at ``positions`` on the category axis (y when ``horizontal``), reaching from
    ``base`` to ``base + lengths``; ``errors`` are (low, high) whisker ends in value units."""

    positions: tuple[float, ...]
    lengths: tuple[float, ...]
    base: tuple[float, ...]
    colors: tuple[str, ...]
    horizontal: bool = True
    thickness: float = 0.8
    edges: tuple[str | None, ...] = ()
    edge_width_pt: float = 0.0
    errors: tuple[tuple[float, float], ...] = ()
    label: str = ""
    z: float = 1.0


@dataclass(frozen=True, slots=True)
class Line:
    """A polyline through (xs, ys) (a gap at a non-finite value), with optional markers."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    color: str
    width_pt: float = 1.5
    dash: tuple[float, ...] = ()
    marker: Marker | None = None
    marker_pt: float = 6.0
    label: str = ""
    z: float = 2.0
    right: bool = False  # drawn on the panel's right y axis
    alpha: float = 1.0


@dataclass(frozen=True, slots=True)
class Band:
    """The area between ``low`` and ``high`` over ``xs``."""

    xs: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    color: str
    alpha: float = 0.2
    z: float = 1.0


@dataclass(frozen=True, slots=True)
class Points:
    """Markers at (xs, ys): ``size_pt`` across; ``face`` None draws a ring of ``edge``."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    marker: Marker
    size_pt: float
    face: str | None
    edge: str | None = None
    edge_width_pt: float = 0.0
    alpha: float = 1.0
    label: str = ""
    z: float = 3.0
    right: bool = False


@dataclass(frozen=True, slots=True)
class Span:
    """A line across the whole panel at ``value`` (of x when ``vertical``, else of y)."""

    value: float
    vertical: bool
    color: str
    width_pt: float = 1.0
    dash: tuple[float, ...] = ()
    label: str = ""
    z: float = 4.0


@dataclass(frozen=True, slots=True)
class Segments:
    """Horizontal segments from ``x0s`` to ``x1s`` at ``ys`` (``vertical``: the axes swapped)."""

    ys: tuple[float, ...]
    x0s: tuple[float, ...]
    x1s: tuple[float, ...]
    color: str
    width_pt: float = 1.0
    alpha: float = 1.0
    label: str = ""
    z: float = 2.0


@dataclass(frozen=True, slots=True)
class Label:
    """Text at a data point, moved by (dx_pt, dy_pt) points (dy up); not clipped."""

    x: float
    y: float
    text: str
    dx_pt: float = 0.0
    dy_pt: float = 0.0
    ha: str = "left"
    va: str = "center"
    size_pt: float = LEGEND_PT
    bold: bool = False
    box: str | None = None
    color: str = "#000000"
    z: float = 5.0


Mark = Bars | Line | Band | Points | Span | Segments | Label


@dataclass(frozen=True, slots=True)
class Entry:
    """A legend entry: its text and how its key is drawn (a ``patch`` of ``color``, a
    ``line`` with an optional marker, a ``marker`` alone, or ``symbol`` text in bold)."""

    label: str
    color: str = "#000000"
    kind: str = "patch"
    width_pt: float = 1.5
    dash: tuple[float, ...] = ()
    marker: Marker | None = None
    marker_pt: float = 6.0
    face: str | None = None
    edge: str | None = None
    edge_width_pt: float = 0.0
    symbol: str = ""


class Place(Enum):
    """Where a legend goes: beside the panel (right of it, top aligned), below its x axis,
    inside one of its corners, or the inside corner with the fewest data points under it."""

    RIGHT = "right"
    BELOW = "below"
    UPPER_LEFT = "upper left"
    UPPER_RIGHT = "upper right"
    LOWER_LEFT = "lower left"
    LOWER_RIGHT = "lower right"
    BEST = "best"


@dataclass(slots=True)
class Legend:
    entries: list[Entry]
    place: Place = Place.RIGHT
    title: str = ""
    columns: int = 1
    size_pt: float = LEGEND_PT
    frame: bool = True


def entry_of(mark: Mark) -> Entry | None:
    """The legend entry a labelled mark stands for."""
    if isinstance(mark, Bars) and mark.label:
        return Entry(mark.label, color=mark.colors[0])
    if isinstance(mark, Line) and mark.label:
        return Entry(mark.label, color=mark.color, kind="line", width_pt=mark.width_pt,
                     dash=mark.dash, marker=mark.marker, marker_pt=mark.marker_pt,
                     face=mark.color)
    if isinstance(mark, Points) and mark.label:
        return Entry(mark.label, color=mark.face or mark.edge or "#000000", kind="marker",
                     marker=mark.marker, marker_pt=min(mark.size_pt, 10.0), face=mark.face,
                     edge=mark.edge, edge_width_pt=mark.edge_width_pt)
    if isinstance(mark, Span | Segments) and mark.label:
        return Entry(mark.label, color=mark.color, kind="line", width_pt=mark.width_pt,
                     dash=getattr(mark, "dash", ()))
    return None


def _floats(values: Sequence[float]) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


@dataclass(slots=True)
class Panel:
    """One plotting area: marks on an x and a y axis (and an optional right y axis)."""

    x: Axis = field(default_factory=Axis)
    y: Axis = field(default_factory=Axis)
    right: Axis | None = None
    title: str = ""
    title_left: bool = False
    title_pt: float = TITLE_PT
    title_bold: bool = True
    marks: list[Mark] = field(default_factory=list)
    legend: Legend | None = None
    note: str = ""
    show_x_ticks: bool = True

    def add(self, mark: Mark) -> Mark:
        self.marks.append(mark)
        return mark

    def hbars(self, positions: Sequence[float], lengths: Sequence[float],
              colors: Sequence[str] | str, *, base: Sequence[float] | None = None,
              thickness: float = 0.8,
              edges: Sequence[str | None] = (), edge_width_pt: float = 0.0,
              errors: Sequence[tuple[float, float]] = (), label: str = "") -> Bars:
        """Horizontal bars (categories on y)."""
        return self._bars(True, positions, lengths, colors, base, thickness, edges,
                          edge_width_pt, errors, label)

    def vbars(self, positions: Sequence[float], lengths: Sequence[float],
              colors: Sequence[str] | str, *, base: Sequence[float] | None = None,
              thickness: float = 0.8,
              label: str = "") -> Bars:
        """Vertical bars (categories on x)."""
        return self._bars(False, positions, lengths, colors, base, thickness, (), 0.0, (), label)

    def _bars(self, horizontal: bool, positions: Sequence[float], lengths: Sequence[float],
              colors: Sequence[str] | str, base: Sequence[float] | None, thickness: float,
              edges: Sequence[str | None], edge_width_pt: float,
              errors: Sequence[tuple[float, float]], label: str) -> Bars:
        count = len(positions)
        painted = (colors,) * count if isinstance(colors, str) else tuple(colors)
        bars = Bars(positions=_floats(positions), lengths=_floats(lengths),
                    base=_floats(base) if base is not None else (0.0,) * count,
                    colors=painted, horizontal=horizontal, thickness=thickness,
                    edges=tuple(edges), edge_width_pt=edge_width_pt,
                    errors=tuple((float(a), float(b)) for a, b in errors), label=label)
        self.marks.append(bars)
        return bars

    def line(self, xs: Sequence[float], ys: Sequence[float], color: str, *,
             width_pt: float = 1.5, dash: tuple[float, ...] = (), marker: Marker | None = None,
             marker_pt: float = 6.0, label: str = "", z: float = 2.0, right: bool = False,
             alpha: float = 1.0) -> Line:
        line = Line(_floats(xs), _floats(ys), color, width_pt, dash, marker, marker_pt, label, z,
                    right, alpha)
        self.marks.append(line)
        return line

    def band(self, xs: Sequence[float], low: Sequence[float], high: Sequence[float], color: str,
             *, alpha: float = 0.2) -> Band:
        band = Band(_floats(xs), _floats(low), _floats(high), color, alpha)
        self.marks.append(band)
        return band

    def points(self, xs: Sequence[float], ys: Sequence[float], marker: Marker = Marker.DISC, *,
               size_pt: float = 6.0, face: str | None = "#000000", edge: str | None = None,
               edge_width_pt: float = 0.0, alpha: float = 1.0, label: str = "",
               z: float = 3.0, right: bool = False) -> Points:
        points = Points(_floats(xs), _floats(ys), marker, size_pt, face, edge, edge_width_pt,
                        alpha, label, z, right)
        self.marks.append(points)
        return points

    def hline(self, y: float, color: str, *, width_pt: float = 1.0,
              dash: tuple[float, ...] = (), label: str = "") -> Span:
        span = Span(float(y), False, color, width_pt, dash, label)
        self.marks.append(span)
        return span

    def vline(self, x: float, color: str, *, width_pt: float = 1.0,
              dash: tuple[float, ...] = (), label: str = "") -> Span:
        span = Span(float(x), True, color, width_pt, dash, label)
        self.marks.append(span)
        return span

    def segments(self, ys: Sequence[float], x0s: Sequence[float], x1s: Sequence[float],
                 color: str, *, width_pt: float = 1.0, label: str = "") -> Segments:
        segments = Segments(_floats(ys), _floats(x0s), _floats(x1s), color, width_pt, 1.0, label)
        self.marks.append(segments)
        return segments

    def label(self, x: float, y: float, text: str, *, dx_pt: float = 0.0, dy_pt: float = 0.0,
              ha: str = "left", va: str = "center", size_pt: float = LEGEND_PT,
              bold: bool = False, box: str | None = None) -> Label:
        label = Label(float(x), float(y), text, dx_pt, dy_pt, ha, va, size_pt, bold, box)
        self.marks.append(label)
        return label

    def entries(self) -> list[Entry]:
        """The legend entries of the labelled marks, in the order they were added."""
        return [e for e in map(entry_of, self.marks) if e is not None]

    def add_legend(self, entries: Sequence[Entry] | None = None, *, place: Place = Place.RIGHT,
                   title: str = "", columns: int = 1, size_pt: float = LEGEND_PT,
                   frame: bool = True) -> Legend:
        """A legend of ``entries`` (default: the labelled marks')."""
        self.legend = Legend(list(self.entries() if entries is None else entries), place,
                             title, columns, size_pt, frame)
        return self.legend

    def twin(self, label: str = "", label_color: str = "#000000") -> Axis:
        """A right y axis for marks drawn with ``right=True``."""
        self.right = Axis(label=label, label_color=label_color)
        return self.right


@dataclass(slots=True)
class Figure:
    """A figure ``width_in`` × ``height_in`` inches: an optional bold title, a column of
    panels sharing the height (in ``heights`` proportions), an optional legend at the bottom."""

    width_in: float
    height_in: float
    title: str = ""
    panels: list[Panel] = field(default_factory=list)
    heights: list[float] = field(default_factory=list)
    legend: Legend | None = None
    legend_left: bool = False
    share_x: bool = False

    def add_panels(self, count: int = 1, *, share_x: bool = False,
                   heights: Sequence[float] | None = None) -> list[Panel]:
        """``count`` panels stacked top to bottom; ``share_x``: one x reach, tick labels on the
        bottom panel only."""
        panels = [Panel() for _ in range(count)]
        self.panels.extend(panels)
        self.heights = list(heights) if heights is not None else [1.0] * len(self.panels)
        self.share_x = share_x
        if share_x:
            for panel in panels[:-1]:
                panel.show_x_ticks = False
        return panels

    def add_legend(self, entries: Sequence[Entry], *, title: str = "", columns: int = 1,
                   left: bool = False, size_pt: float = LEGEND_PT, frame: bool = True) -> Legend:
        """A legend under the panels, centred (``left``: at the figure's left)."""
        self.legend = Legend(list(entries), Place.BELOW, title, columns, size_pt, frame)
        self.legend_left = left
        return self.legend
