"""A placed picture: shapes and text in pixels (origin at the top left, y down), in drawing
order. The SVG and PNG writers draw the same scene, so both files show the same chart."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from costsim.report.plot.fonts import measure

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Rect:
    """An axis-aligned rectangle (x0 ≤ x1, y0 ≤ y1), filled and/or outlined."""

    x0: float
    y0: float
    x1: float
    y1: float
    fill: str | None
    alpha: float = 1.0
    edge: str | None = None
    edge_width: float = 0.0


@dataclass(frozen=True, slots=True)
class Path:
    """A polyline (``closed``: a polygon, filled when ``fill``); ``dash`` in pixels."""

    points: tuple[Point, ...]
    color: str | None
    width: float
    alpha: float = 1.0
    dash: tuple[float, ...] = ()
    fill: str | None = None
    closed: bool = False


@dataclass(frozen=True, slots=True)
class Circle:
    """A circle (a marker's disc or ring)."""

    x: float
    y: float
    radius: float
    fill: str | None
    edge: str | None = None
    edge_width: float = 0.0
    alpha: float = 1.0


@dataclass(frozen=True, slots=True)
class Text:
    """A text anchored at (x, y): ``ha`` left/center/right, ``va`` top/center/baseline/bottom
    of the whole (multi-line) text, rotated ``rotation`` degrees counter-clockwise about the
    anchor; ``box`` a fill colour drawn behind it."""

    x: float
    y: float
    text: str
    size_pt: float
    color: str = "#000000"
    bold: bool = False
    ha: str = "left"
    va: str = "baseline"
    rotation: float = 0.0
    box: str | None = None

    def first_baseline(self) -> tuple[float, float]:
        """Unrotated: the left of the text and the first line's baseline, relative to the
        anchor."""
        box = measure(self.text, self.size_pt, self.bold)
        left = {"left": 0.0, "center": -box.width / 2, "right": -box.width}[self.ha]
        top = {"top": 0.0, "center": -box.height / 2, "bottom": -box.height,
               "baseline": -box.ascent}[self.va]
        return left, top + box.ascent

    def lines(self) -> list[tuple[str, float, float]]:
        """Each line with its anchor point relative to the text's anchor: the x of its ``ha``
        point (left edge, centre or right edge) and the y of its baseline."""
        box = measure(self.text, self.size_pt, self.bold)
        left, baseline = self.first_baseline()
        x = left if self.ha == "left" else 0.0
        return [(line, x, baseline + index * box.pitch) for index, line in enumerate(box.lines)]

    def backing(self) -> tuple[float, float, float, float]:
        """The rectangle drawn behind the text when it has a ``box`` (its measured extent, 2 px
        more left and right, 1 px above and below), relative to the text's anchor."""
        box = measure(self.text, self.size_pt, self.bold)
        left, baseline = self.first_baseline()
        top = baseline - box.ascent
        return left - 2, top - 1, left + box.width + 2, top + box.height + 1

    def corners(self) -> list[Point]:
        """The four corners of the text's box, rotated, in scene pixels."""
        box = measure(self.text, self.size_pt, self.bold)
        left, baseline = self.first_baseline()
        top = baseline - box.ascent
        angle = math.radians(self.rotation)
        cos, sin = math.cos(angle), math.sin(angle)
        out = []
        for dx, dy in ((left, top), (left + box.width, top), (left, top + box.height),
                       (left + box.width, top + box.height)):
            # counter-clockwise on screen (y down): x' = x cos + y sin, y' = -x sin + y cos
            out.append((self.x + dx * cos + dy * sin, self.y - dx * sin + dy * cos))
        return out

    def bounds(self) -> tuple[float, float, float, float]:
        """The rotated text's bounding box (x0, y0, x1, y1)."""
        xs, ys = zip(*self.corners(), strict=True)
        return min(xs), min(ys), max(xs), max(ys)


Shape = Rect | Path | Circle | Text


@dataclass(slots=True)
class Scene:
    """A picture ``width`` × ``height`` pixels on a white background."""

    width: int
    height: int
    shapes: list[Shape] = field(default_factory=list)

    def add(self, shape: Shape) -> None:
        self.shapes.append(shape)

    @property
    def texts(self) -> list[Text]:
        return [s for s in self.shapes if isinstance(s, Text) and s.text.strip()]
