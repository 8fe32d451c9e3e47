"""What every chart must satisfy, checked on the laid-out figure: every text artist drawn
(titles, axis labels, tick labels, legends, annotations) lies inside the figure."""

from __future__ import annotations

from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from costsim.report.chart_style import Chart, lay_out, render
from costsim.report.plot.figure import Figure as PlotFigure
from costsim.report.plot.render import render as render_plot
from costsim.report.plot.render import scene_of

TOLERANCE_PX = 1.0  # anti-aliasing: a glyph's box may touch the edge by a pixel


def _drawn_tick_labels(axis: Axis) -> tuple[list[Text], set[int]]:
    """The tick labels drawn (ticks inside the view interval), and every tick label's id."""
    low, high = sorted(axis.get_view_interval())
    span = high - low
    drawn, every = [], set()
    for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
        every |= {id(tick.label1), id(tick.label2)}
        inside = low - 1e-9 * span <= tick.get_loc() <= high + 1e-9 * span
        if inside:
            drawn += [label for label in (tick.label1, tick.label2) if label.get_visible()]
    return drawn, every


def drawn_texts(figure: Figure) -> list[Text]:
    """Every visible, non-empty text the figure draws (laid out first, as ``render`` does)."""
    lay_out(figure)  # on the PNG backend's canvas, whose renderer measures text
    figure.draw_without_rendering()
    texts, ticks = [], set()
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            drawn, every = _drawn_tick_labels(axis)
            texts += drawn
            ticks |= every
    others = [t for t in figure.findobj(Text) if id(t) not in ticks]
    return [t for t in [*texts, *others] if t.get_visible() and t.get_text().strip()]


def texts_outside(figure: Figure) -> list[str]:
    """The texts that run past the figure's edge, with how far (empty: all inside)."""
    texts = drawn_texts(figure)
    canvas = figure.canvas
    assert isinstance(canvas, FigureCanvasAgg)
    renderer = canvas.get_renderer()
    box = figure.bbox
    out = []
    for text in texts:
        extent = text.get_window_extent(renderer)
        if (extent.x0 < box.x0 - TOLERANCE_PX or extent.y0 < box.y0 - TOLERANCE_PX
                or extent.x1 > box.x1 + TOLERANCE_PX or extent.y1 > box.y1 + TOLERANCE_PX):
            out.append(f"{text.get_text()!r} at {extent.bounds} outside {box.bounds}")
    return out


def plot_texts_outside(figure: PlotFigure) -> list[str]:
    """The texts of a costsim-drawn figure that run past its edge, with where they lie."""
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
    if isinstance(chart.figure, PlotFigure):
        outside = plot_texts_outside(chart.figure)
        assert not outside, f"{chart.slug}: " + "; ".join(outside)
        png, svg = render_plot(chart.figure)
        assert png.startswith(b"\x89PNG")
        assert b"<svg" in svg
        return
    outside = texts_outside(chart.figure)
    assert not outside, f"{chart.slug}: " + "; ".join(outside)
    png, svg = render(chart.figure)
    assert png.startswith(b"\x89PNG")
    assert b"<svg" in svg
