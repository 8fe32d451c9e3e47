"""An axis's automatic reach: the data widened by the axis's own margin."""

from __future__ import annotations

import pytest

from costsim.report.plot.figure import Figure
from costsim.report.plot.layout import place
from costsim.report.plot.ticks import MARGIN, auto_limits


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
