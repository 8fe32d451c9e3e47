"""A scene as SVG bytes: shapes as SVG elements, text as ``<text>`` in DejaVu Sans (or the
viewer's closest sans-serif), so the file is small, searchable and the same on every run."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from costsim.report.plot.fonts import DPI, px
from costsim.report.plot.scene import Circle, Path, Rect, Scene, Text

# DejaVu Sans measures every text; Bitstream Vera Sans is the face it extends (same widths),
# Verdana its wide sibling; any other sans-serif is narrower, so text ends short of its measure.
FONT_FAMILY = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, sans-serif"
CSS_PX_PER_INCH = 96  # the page's px: the figure's inches at their CSS size
ANCHORS = {"left": "start", "center": "middle", "right": "end"}


def _n(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _paint(attribute: str, color: str | None, alpha: float) -> str:
    if color is None:
        return f' {attribute}="none"'
    opacity = f' {attribute}-opacity="{_n(alpha)}"' if alpha < 1 else ""
    return f' {attribute}="{color}"{opacity}'


def _rect(rect: Rect) -> str:
    stroke = (_paint("stroke", rect.edge, 1.0) + f' stroke-width="{_n(rect.edge_width)}"'
              if rect.edge and rect.edge_width > 0 else "")
    return (f'<rect x="{_n(rect.x0)}" y="{_n(rect.y0)}" width="{_n(rect.x1 - rect.x0)}" '
            f'height="{_n(rect.y1 - rect.y0)}"{_paint("fill", rect.fill, rect.alpha)}{stroke}/>')


def _path(path: Path) -> str:
    points = " ".join(f"{_n(x)},{_n(y)}" for x, y in path.points)
    tag = "polygon" if path.closed else "polyline"
    stroke = ""
    if path.color is not None and path.width > 0:
        stroke = (_paint("stroke", path.color, path.alpha) + f' stroke-width="{_n(path.width)}"'
                  ' stroke-linejoin="round"')
        if path.dash:
            stroke += f' stroke-dasharray="{" ".join(_n(d) for d in path.dash)}"'
    else:
        stroke = ' stroke="none"'
    fill = _paint("fill", path.fill, path.alpha) if path.closed else ' fill="none"'
    return f'<{tag} points="{points}"{fill}{stroke}/>'


def _circle(circle: Circle) -> str:
    stroke = (_paint("stroke", circle.edge, circle.alpha)
              + f' stroke-width="{_n(circle.edge_width)}"'
              if circle.edge and circle.edge_width > 0 else "")
    return (f'<circle cx="{_n(circle.x)}" cy="{_n(circle.y)}" r="{_n(circle.radius)}"'
            f'{_paint("fill", circle.fill, circle.alpha)}{stroke}/>')


def _text(text: Text) -> str:
    parts = []
    if text.box is not None:
        x0, y0, x1, y1 = text.backing()
        parts.append(f'<rect x="{_n(text.x + x0)}" y="{_n(text.y + y0)}" '
                     f'width="{_n(x1 - x0)}" height="{_n(y1 - y0)}" '
                     f'fill="{text.box}" fill-opacity="0.8"/>')
    weight = ' font-weight="bold"' if text.bold else ""
    for line, dx, dy in text.lines():
        if not line:
            continue
        parts.append(f'<text x="{_n(text.x + dx)}" y="{_n(text.y + dy)}" '
                     f'font-size="{_n(px(text.size_pt))}"'
                     f'{weight} fill="{text.color}" text-anchor="{ANCHORS[text.ha]}">'
                     f'{escape(line)}</text>')
    body = "".join(parts)
    if text.rotation:
        return (f'<g transform="rotate({_n(-text.rotation)} {_n(text.x)} {_n(text.y)})">'
                f"{body}</g>")
    return body


def to_svg(scene: Scene) -> bytes:
    """The scene as a standalone SVG document."""
    width_css = scene.width / DPI * CSS_PX_PER_INCH
    height_css = scene.height / DPI * CSS_PX_PER_INCH
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width_css)}px" '
           f'height="{_n(height_css)}px" viewBox="0 0 {scene.width} {scene.height}" '
           f'font-family={quoteattr(FONT_FAMILY)}>',
           f'<rect width="{scene.width}" height="{scene.height}" fill="#ffffff"/>']
    for shape in scene.shapes:
        if isinstance(shape, Rect):
            out.append(_rect(shape))
        elif isinstance(shape, Path):
            out.append(_path(shape))
        elif isinstance(shape, Circle):
            out.append(_circle(shape))
        else:
            out.append(_text(shape))
    out.append("</svg>\n")
    return "\n".join(out).encode("utf-8")
