"""The charts' own layout (costsim/report/chart_layout.py) and the files render writes."""

from __future__ import annotations

import io
import itertools
import re

import pytest
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from PIL import Image

from costsim.report.chart_style import (
    PNG_DPI,
    SVG_FONTS,
    lay_out,
    new_figure,
    render,
    subplots,
)
from tests.report.chart_checks import texts_outside

LONG = "a plan whose name is long enough to need a wide margin"


def _stacked_figure():  # type: ignore[no-untyped-def]
    """Three panels, a figure title, a panel legend anchored under its panel and a figure
    legend of two rows under everything."""
    figure = new_figure(7.0, 7.0)
    panels = subplots(figure, 3, 1)
    for index, axes in enumerate(panels):
        axes.barh([0, 1], [1.0, 2.0 * 10 ** (index * 3)])
        axes.set_yticks([0, 1], [LONG, "short"])
        axes.set_xlabel("an axis label\non two lines")
        axes.set_title(f"panel {index}", loc="left")
    panels[0].legend(handles=[Line2D([], [], label=f"entry {n}") for n in range(4)],
                     loc="upper center", bbox_to_anchor=(0.5, -0.3), ncols=1)
    figure.legend(handles=[Line2D([], [], label=f"key {n}") for n in range(6)],
                  loc="lower center", ncols=3)
    figure.suptitle("A figure title", fontweight="bold")
    return figure, panels


def test_every_text_of_a_stack_of_panels_lies_inside_the_figure() -> None:
    figure, _ = _stacked_figure()
    assert texts_outside(figure) == []


def test_panels_get_equal_heights_and_no_decoration_overlaps_the_next_panel() -> None:
    figure, panels = _stacked_figure()
    canvas = lay_out(figure)
    renderer = canvas.get_renderer()
    heights = [axes.get_position().height for axes in panels]
    assert max(heights) - min(heights) < 1e-9
    tight = [axes.get_tightbbox(renderer) for axes in panels]
    for upper, lower in itertools.pairwise(tight):
        assert upper.y0 >= lower.y1  # the panel above ends above the next one's title
    legend_box = panels[0].get_legend().get_window_extent(renderer)
    assert legend_box.y1 <= panels[0].bbox.y0  # under its own panel ...
    assert legend_box.y0 >= tight[1].y1  # ... and above the next one
    assert figure.legends[0].get_window_extent(renderer).y1 <= tight[2].y0
    title = figure._suptitle
    assert title is not None
    assert title.get_window_extent(renderer).y0 >= tight[0].y1


def test_the_layout_measures_each_panel_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # constrained layout measured every panel twice (it runs its algorithm two times)
    figure, panels = _stacked_figure()
    calls: list[Axes] = []
    measure = Axes.get_tightbbox

    def counted(self: Axes, *args: object, **kwargs: object) -> object:
        calls.append(self)
        return measure(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Axes, "get_tightbbox", counted)
    render(figure)
    assert sorted(map(id, calls)) == sorted(map(id, panels))


def test_a_grid_of_more_than_one_column_is_refused() -> None:
    figure = new_figure()
    subplots(figure, 1, 2)
    with pytest.raises(ValueError, match="one column"):
        lay_out(figure)


def test_the_png_is_opaque_rgb_at_the_report_dpi_and_the_svg_text_is_text() -> None:
    figure, _ = _stacked_figure()
    png, svg = render(figure)
    image = Image.open(io.BytesIO(png))
    assert image.mode == "RGB"
    assert [round(d) for d in image.info["dpi"]] == [PNG_DPI, PNG_DPI]
    text = svg.decode("utf-8")
    assert ">A figure title</text>" in text
    assert LONG in text
    families = set(re.findall(r"font-family: ([^;\"]+)", text))
    assert families == {", ".join(f"'{f}'" if f != "sans-serif" else f for f in SVG_FONTS)}
    assert "<use xlink:href=\"#DejaVuSans" not in text  # no glyph outlines
