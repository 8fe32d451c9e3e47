"""A scene as PNG bytes, drawn by Pillow.

The scene is drawn at :data:`SUPERSAMPLE` times its size and reduced (each output pixel the
mean of a 2 × 2 block), which smooths the edges of lines, markers and text the way an
anti-aliasing renderer would. Colours with an alpha below 1 are blended over what is drawn
before them. The PNG is opaque RGB at zlib level 3 (level 6, Pillow's default, costs about
twice the time for files ~5 % smaller), its dpi recorded, no date.
"""

from __future__ import annotations

import io
import itertools
import math

from PIL import Image, ImageColor, ImageDraw

from costsim.report.plot.fonts import DPI, SUPERSAMPLE, font, measure, px
from costsim.report.plot.scene import Circle, Path, Point, Rect, Scene, Text

PNG_COMPRESS_LEVEL = 3
ANCHOR_X = {"left": "l", "center": "m", "right": "r"}
Color = tuple[int, int, int, int]


def _rgba(color: str, alpha: float = 1.0) -> Color:
    red, green, blue = ImageColor.getrgb(color)[:3]
    return red, green, blue, round(255 * alpha)


def _dashes(points: tuple[Point, ...], pattern: tuple[float, ...]) -> list[list[Point]]:
    """The polyline cut into its dashes (``pattern``: on, off, on, off … lengths)."""
    pieces: list[list[Point]] = []
    index, left, on = 0, pattern[0], True
    current: list[Point] = [points[0]]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        length = math.hypot(x1 - x0, y1 - y0)
        done = 0.0
        while length - done > left:
            done += left
            t = done / length
            point = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)
            if on:
                current.append(point)
                pieces.append(current)
            current = [point]
            on = not on
            index = (index + 1) % len(pattern)
            left = pattern[index]
        left -= length - done
        if on:
            current.append((x1, y1))
    if on and len(current) > 1:
        pieces.append(current)
    return pieces


class _Painter:
    def __init__(self, scene: Scene) -> None:
        self.scale = SUPERSAMPLE
        self.image = Image.new("RGB", (scene.width * self.scale, scene.height * self.scale),
                               "#ffffff")
        self.draw = ImageDraw.Draw(self.image, "RGBA")

    def xy(self, points: tuple[Point, ...] | list[Point]) -> list[tuple[float, float]]:
        return [(x * self.scale, y * self.scale) for x, y in points]

    def width(self, pixels: float) -> int:
        return max(1, round(pixels * self.scale))

    def rect(self, rect: Rect) -> None:
        box = (rect.x0 * self.scale, rect.y0 * self.scale, rect.x1 * self.scale - 1,
               rect.y1 * self.scale - 1)
        if box[2] < box[0] or box[3] < box[1]:
            return
        if rect.fill is not None:
            self.draw.rectangle(box, fill=_rgba(rect.fill, rect.alpha))
        if rect.edge is not None and rect.edge_width > 0:
            self.draw.rectangle(box, outline=_rgba(rect.edge), width=self.width(rect.edge_width))

    def path(self, path: Path) -> None:
        if len(path.points) < 2:
            return
        if path.closed and path.fill is not None:
            self.draw.polygon(self.xy(path.points), fill=_rgba(path.fill, path.alpha))
        if path.color is None or path.width <= 0:
            return
        points = (*path.points, path.points[0]) if path.closed else path.points
        pieces = _dashes(points, path.dash) if path.dash else [list(points)]
        for piece in pieces:
            self.draw.line(self.xy(piece), fill=_rgba(path.color, path.alpha),
                           width=self.width(path.width), joint="curve")

    def circle(self, circle: Circle) -> None:
        s = self.scale
        box = ((circle.x - circle.radius) * s, (circle.y - circle.radius) * s,
               (circle.x + circle.radius) * s, (circle.y + circle.radius) * s)
        fill = None if circle.fill is None else _rgba(circle.fill, circle.alpha)
        outline = None if circle.edge is None else _rgba(circle.edge, circle.alpha)
        width = self.width(circle.edge_width) if outline is not None else 0
        self.draw.ellipse(box, fill=fill, outline=outline, width=width)

    def text(self, text: Text) -> None:
        s = self.scale
        face = font(px(text.size_pt, s), text.bold)
        if text.box is not None and not text.rotation:
            x0, y0, x1, y1 = text.backing()
            self.draw.rectangle(((text.x + x0) * s, (text.y + y0) * s, (text.x + x1) * s,
                                 (text.y + y1) * s), fill=_rgba(text.box, 0.8))
        anchor = ANCHOR_X[text.ha] + "s"
        color = _rgba(text.color)
        if not text.rotation:
            for line, dx, dy in text.lines():
                self.draw.text(((text.x + dx) * s, (text.y + dy) * s), line, font=face,
                               fill=color, anchor=anchor)
            return
        # rotated: the text drawn on a tile just its size, the tile rotated (expanding to hold
        # it) and pasted through its own coverage as the mask, its anchor on the text's anchor
        box = measure(text.text, text.size_pt, text.bold)
        left, baseline = text.first_baseline()
        width, height = math.ceil(box.width * s) + 4, math.ceil(box.height * s) + 4
        tile = Image.new("L", (width, height), 0)
        pen = ImageDraw.Draw(tile)
        origin = (2 - left * s, 2 - (baseline - box.ascent) * s)  # the anchor on the tile
        for line, dx, dy in text.lines():
            pen.text((origin[0] + dx * s, origin[1] + dy * s), line, font=face, fill=255,
                     anchor=anchor)
        if text.rotation == 90:
            turned = tile.transpose(Image.Transpose.ROTATE_90)
        else:
            turned = tile.rotate(text.rotation, resample=Image.Resampling.BICUBIC, expand=True)
        # the anchor, relative to the tile's centre, turned counter-clockwise on screen
        dx, dy = origin[0] - width / 2, origin[1] - height / 2
        angle = math.radians(text.rotation)
        tx = turned.width / 2 + dx * math.cos(angle) + dy * math.sin(angle)
        ty = turned.height / 2 - dx * math.sin(angle) + dy * math.cos(angle)
        corner = (round(text.x * s - tx), round(text.y * s - ty))
        self.image.paste(color[:3], (*corner, corner[0] + turned.width,
                                     corner[1] + turned.height), turned)


def to_png(scene: Scene) -> bytes:
    """The scene as an opaque RGB PNG at :data:`~costsim.report.plot.fonts.DPI`."""
    painter = _Painter(scene)
    for shape in scene.shapes:
        if isinstance(shape, Rect):
            painter.rect(shape)
        elif isinstance(shape, Path):
            painter.path(shape)
        elif isinstance(shape, Circle):
            painter.circle(shape)
        else:
            painter.text(shape)
    image = painter.image.reduce(SUPERSAMPLE)
    out = io.BytesIO()
    image.save(out, format="png", compress_level=PNG_COMPRESS_LEVEL, dpi=(DPI, DPI))
    return out.getvalue()
