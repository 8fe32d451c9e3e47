"""Shapes cut to a panel's box: nothing drawn past the axes, nothing inside lost."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from costsim.report.plot.clip import clip_polygon, clip_polyline, clip_segment

BOX = (0.0, 0.0, 10.0, 10.0)
coordinate = st.floats(min_value=-30, max_value=30, allow_nan=False)
point = st.tuples(coordinate, coordinate)


def _inside(p: tuple[float, float], tolerance: float = 1e-9) -> bool:
    return (-tolerance <= p[0] <= 10 + tolerance) and (-tolerance <= p[1] <= 10 + tolerance)


@given(point, point)
def test_a_clipped_segment_lies_inside_and_keeps_inside_ends(a: tuple[float, float],
                                                              b: tuple[float, float]) -> None:
    piece = clip_segment(a, b, BOX)
    if piece is None:
        assert not (_inside(a, 0.0) and _inside(b, 0.0))
        return
    assert all(_inside(p) for p in piece)
    if _inside(a, 0.0):
        assert piece[0] == a
    if _inside(b, 0.0):
        assert piece[1] == b


def test_a_line_leaving_and_coming_back_splits_into_two_runs() -> None:
    runs = clip_polyline([(1, 1), (5, 20), (9, 1)], BOX)
    assert len(runs) == 2
    assert runs[0][0] == (1, 1)
    assert runs[1][-1] == (9, 1)
    assert all(_inside(p) for run in runs for p in run)


@given(st.lists(point, min_size=3, max_size=8))
def test_a_clipped_polygon_lies_inside_the_box(points: list[tuple[float, float]]) -> None:
    assert all(_inside(p) for p in clip_polygon(points, BOX))


def test_a_band_above_the_axis_is_cut_at_its_top() -> None:
    clipped = clip_polygon([(2, 5), (8, 5), (8, 15), (2, 15)], BOX)
    assert sorted(clipped) == [(2, 5), (2, 10), (8, 5), (8, 10)]
