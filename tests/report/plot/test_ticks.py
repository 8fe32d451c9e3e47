"""Axis ticks: round steps covering the reach, log ticks at chosen multiples (round linear ones
when a log range is too short for them), margins as a share of the span that stop at a bar's
base."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.report.plot.figure import Figure
from costsim.report.plot.layout import place
from costsim.report.plot.ticks import MARGIN, auto_limits, log_ticks, nice_ticks

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


@given(finite, finite, st.integers(min_value=3, max_value=9))
def test_nice_ticks_are_evenly_spaced_round_steps_inside_the_reach(a: float, b: float,
                                                                    most: int) -> None:
    low, high = sorted((a, b))
    if high - low < 1e-6 * max(1.0, abs(high)):
        return
    ticks = nice_ticks(low, high, most)
    assert 2 <= len(ticks) <= most
    span = high - low
    assert all(low - 1e-9 * span <= t <= high + 1e-9 * span for t in ticks)
    steps = [b - a for a, b in itertools.pairwise(ticks)]
    assert max(steps) - min(steps) <= 1e-6 * steps[0]
    mantissa = steps[0] / 10 ** math.floor(math.log10(steps[0]))
    assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 2.5, 5, 10))


def test_nice_ticks_read_as_people_write_them() -> None:
    assert nice_ticks(0, 27_350, 7) == [0, 5_000, 10_000, 15_000, 20_000, 25_000]
    assert nice_ticks(0.05, 1.0, 6) == [0.2, 0.4, 0.6, 0.8, 1.0]  # 0.6, not 0.6000000000000001
    assert nice_ticks(0, 7.3, 9, integer=True) == [0, 1, 2, 3, 4, 5, 6, 7]


def test_log_ticks_take_one_two_five_of_each_decade_and_thin_to_powers() -> None:
    assert log_ticks(300, 9_000) == [500, 1_000, 2_000, 5_000]
    assert log_ticks(1, 64, base=2, subs=(1.0,)) == [1, 2, 4, 8, 16, 32, 64]
    many = log_ticks(1e-3, 1e9, most=6)
    assert len(many) <= 6
    assert all(math.isclose(math.log10(t), round(math.log10(t))) for t in many)
    assert log_ticks(-1, 10) == []


def test_auto_limits_pad_the_data_but_keep_a_bar_base_as_the_edge() -> None:
    assert auto_limits([0, 5, 10], [0]) == (0, 10.5)
    assert auto_limits([2, 4]) == (1.9, 4.1)
    low, high = auto_limits([10, 1000], log=True)
    assert low < 10 < 1000 < high
    assert math.isclose(math.log10(10) - math.log10(low), math.log10(high) - math.log10(1000))


def test_the_margin_is_the_share_of_the_span_added_at_each_end() -> None:
    assert auto_limits([10.0, 20.0]) == pytest.approx((10 - 10 * MARGIN, 20 + 10 * MARGIN))
    assert auto_limits([10.0, 20.0], margin=0.1) == pytest.approx((9.0, 21.0))
    low, high = auto_limits([1.0, 100.0], log=True, margin=0.25)  # a quarter decade each way
    assert (low, high) == pytest.approx((10 ** -0.5, 10 ** 2.5))
    assert auto_limits([0.0, 20.0], [0.0], margin=0.1) == pytest.approx((0.0, 22.0))  # sticky


def test_a_panel_s_axis_margin_sets_its_reach() -> None:
    figure = Figure(width_in=6.0, height_in=4.0)
    (panel,) = figure.add_panels()
    panel.points([0.0, 100.0], [10.0, 20.0])
    panel.x.margin, panel.y.margin = 0.06, 0.1
    (placed,) = place(figure).panels
    assert (placed.x.reach.low, placed.x.reach.high) == pytest.approx((-6.0, 106.0))
    assert (placed.y.reach.low, placed.y.reach.high) == pytest.approx((9.0, 21.0))
    panel.y.margin = 0.0  # none: the data's own range
    (placed,) = place(figure).panels
    assert (placed.y.reach.low, placed.y.reach.high) == pytest.approx((10.0, 20.0))


def test_a_short_log_range_gets_round_linear_ticks() -> None:
    """2.3 to 4.6 days holds no two of 1, 2, 5 × 10^k: the axis ticks at round values instead
    (matplotlib's LogLocator does the same); a range that holds them keeps them."""
    figure = Figure(width_in=6.0, height_in=4.0)
    (panel,) = figure.add_panels()
    panel.points([2.31, 4.63], [5500.0, 6000.0])
    panel.x.log = panel.y.log = True
    (placed,) = place(figure).panels
    for ticks in (placed.x, placed.y):
        assert len(ticks.positions) >= 3
        steps = {round(b - a, 9) for a, b in zip(ticks.positions, ticks.positions[1:],
                                                  strict=False)}
        assert len(steps) == 1  # evenly spaced round values
    assert 3.0 in placed.x.positions
    panel.points([0.5, 40.0], [1e3, 1e6])
    (placed,) = place(figure).panels
    for ticks in (placed.x, placed.y):
        assert len(ticks.positions) >= 3
        assert all(f"{p:.0e}"[0] in "125" for p in ticks.positions)
