"""A figure drawn: every text inside the figure, the same bytes every time, PNG and SVG from
one scene, values placed where the axis says, legends and log axes as a reader expects."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from costsim.report.plot.figure import Entry, Figure, Marker, Place
from costsim.report.plot.fonts import DPI, measure
from costsim.report.plot.layout import place
from costsim.report.plot.render import render, scene_of
from costsim.report.plot.scene import Path, Rect, Text


def _bars() -> Figure:
    figure = Figure(width_in=6.0, height_in=3.0, title="Cost of each plan")
    (panel,) = figure.add_panels()
    panel.hbars([0, 1, 2], [10.0, 30.0, 20.0], ["#0072B2", "#E69F00", "#009E73"],
                edges=["#000000", None, None], edge_width_pt=1.8,
                errors=[(8, 12), (25, 35), (15, 25)])
    panel.y.set_ticks([0, 1, 2], ["a plan with a long name", "b", "c"])
    panel.y.inverted = True
    panel.vline(25.0, "#B00020", dash=(4, 2), label="budget $25")
    panel.x.limits(0, 40)
    panel.x.label = "cost (USD)\nsecond line"
    panel.add_legend(place=Place.BELOW, frame=False)
    return figure


def _lines(place_: Place = Place.RIGHT) -> Figure:
    figure = Figure(width_in=8.0, height_in=4.0)
    top, bottom = figure.add_panels(2, share_x=True)
    for panel in (top, bottom):
        panel.band([0, 1, 2, 3], [1, 2, float("nan"), 4], [2, 4, 6, 8], "#0072B2", alpha=0.2)
        panel.line([0, 1, 2, 3], [1.5, 3, 5, 6], "#0072B2", marker=Marker.DISC, label="plan a")
        panel.points([1, 2], [100, 0.5], Marker.STAR, size_pt=12, face="#E69F00",
                     edge="#000000", edge_width_pt=0.8, label="a star")
        panel.add_legend(place=place_, title="cheapest first")
    bottom.y.log = True
    bottom.x.set_ticks([0, 1, 2, 3], ["2027-01", "2027-02", "2027-03", "2027-04"],
                       rotation=45)
    return figure


@pytest.mark.parametrize("build", [_bars, _lines, lambda: _lines(Place.BEST)])
def test_every_text_lies_inside_the_figure(build: object) -> None:
    scene = scene_of(build())  # type: ignore[operator]
    assert scene.texts
    for text in scene.texts:
        x0, y0, x1, y1 = text.bounds()
        assert min(x0, y0) >= -1, text.text
        assert x1 <= scene.width + 1, text.text
        assert y1 <= scene.height + 1, text.text


def test_the_same_figure_draws_the_same_bytes_and_valid_files() -> None:
    png, svg = render(_bars())
    assert (png, svg) == render(_bars())
    image = Image.open(io.BytesIO(png))
    assert image.size == (6 * DPI, 3 * DPI)
    assert image.mode == "RGB"
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.attrib["viewBox"] == f"0 0 {6 * DPI} {3 * DPI}"
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "a plan with a long name" in texts
    assert "second line" in texts


def test_bars_and_spans_sit_where_the_axis_puts_their_values() -> None:
    figure = _bars()
    (placed,) = place(figure).panels
    x0, y0, x1, _y1 = placed.box
    scene = scene_of(figure)
    bars = [s for s in scene.shapes if isinstance(s, Rect) and s.fill == "#E69F00"]
    (bar,) = bars
    assert bar.x0 == pytest.approx(x0)
    assert bar.x1 == pytest.approx(x0 + 30 / 40 * (x1 - x0))
    budget = [s for s in scene.shapes if isinstance(s, Path) and s.color == "#B00020"
              and len(s.points) == 2 and s.points[0][1] == y0]
    assert budget
    assert budget[0].points[0][0] == pytest.approx(x0 + 25 / 40 * (x1 - x0))
    # inverted: the first category at the top
    first = next(s for s in scene.shapes if isinstance(s, Rect) and s.fill == "#0072B2")
    assert first.y0 < bar.y0
    outlined = [s for s in scene.shapes if isinstance(s, Rect) and s.edge == "#000000"]
    assert [s.fill for s in outlined] == ["#0072B2"]


def test_nothing_is_drawn_past_the_plot_box() -> None:
    figure = _lines()
    placed = place(figure).panels
    scene = scene_of(figure)
    boxes = [p.box for p in placed]
    for shape in scene.shapes:
        if isinstance(shape, Path) and shape.fill is not None and shape.color is None:  # bands
            assert any(all(b[0] - 0.01 <= x <= b[2] + 0.01 and b[1] - 0.01 <= y <= b[3] + 0.01
                           for x, y in shape.points) for b in boxes)


def test_shared_x_shows_tick_labels_on_the_bottom_panel_only_and_panels_line_up() -> None:
    figure = _lines()
    top, bottom = place(figure).panels
    assert top.box[0] == bottom.box[0]
    assert top.box[2] == bottom.box[2]
    assert top.box[3] < bottom.box[1]
    labels = {t.text for t in scene_of(figure).texts}
    assert "2027-03" in labels
    slanted = [t for t in scene_of(figure).texts if t.text == "2027-03"]
    assert len(slanted) == 1
    assert slanted[0].rotation == 45


def test_a_log_axis_ticks_at_one_two_five_and_the_legend_lists_every_labelled_mark() -> None:
    figure = _lines()
    _, bottom = place(figure).panels
    assert set(bottom.y.positions) <= {0.5, 1, 2, 5, 10, 20, 50, 100}
    assert len(bottom.y.positions) >= 3
    assert [e.label for e in figure.panels[1].legend.entries] == ["plan a", "a star"]  # type: ignore[union-attr]


def test_the_best_legend_corner_avoids_the_data() -> None:
    figure = Figure(width_in=6.0, height_in=4.0)
    (panel,) = figure.add_panels()
    panel.line([0, 1, 2, 3, 4], [10, 8, 6, 4, 2], "#0072B2", label="falling")
    panel.add_legend([Entry("falling", color="#0072B2", kind="line")], place=Place.BEST)
    (placed,) = place(figure).panels
    x0, y0, x1, y1 = placed.box
    legend = next(t for t in scene_of(figure).texts if t.text == "falling")
    # the line runs from the top left to the bottom right: the legend goes to an empty corner
    assert (legend.x > (x0 + x1) / 2) == (legend.y < (y0 + y1) / 2)


def test_a_rotated_text_reports_its_rotated_bounds() -> None:
    text = Text(100.0, 100.0, "2027-01", 9.0, ha="right", va="center", rotation=45.0)
    x0, y0, x1, y1 = text.bounds()
    width = measure("2027-01", 9.0).width
    assert x1 - x0 == pytest.approx(y1 - y0, rel=0.35)
    assert x1 - x0 < width
    assert x0 < 100 < x1 + 1
