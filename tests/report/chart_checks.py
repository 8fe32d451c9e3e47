"""What every chart must satisfy, checked on the drawn scene: every text (titles, axis labels,
tick labels, legends, labels at data points) lies inside the figure, and both files render."""

from __future__ import annotations

from costsim.report.plot.figure import Figure
from costsim.report.plot.render import render, scene_of
from costsim.report.plot.style import Chart

TOLERANCE_PX = 1.0  # anti-aliasing: a glyph's box may touch the edge by a pixel


def texts_outside(figure: Figure) -> list[str]:
    """The texts that run past the figure's edge, with where they lie (empty: all inside)."""
    scene = scene_of(figure)
    out = []
    for text in scene.texts:
        x0, y0, x1, y1 = text.bounds()
        if (x0 < -TOLERANCE_PX or y0 < -TOLERANCE_PX or x1 > scene.width + TOLERANCE_PX
                or y1 > scene.height + TOLERANCE_PX):
            out.append(f"{text.text!r} at {(x0, y0, x1, y1)} outside {scene.width}x{scene.height}")
    return out


def assert_inside(chart: Chart) -> None:
    """Every text of ``chart`` inside its figure, and the figure renders."""
    outside = texts_outside(chart.figure)
    assert not outside, f"{chart.slug}: " + "; ".join(outside)
    png, svg = render(chart.figure)
    assert png.startswith(b"\x89PNG")
    assert b"<svg" in svg
