"""Axis ticks: round steps covering the reach, log ticks at chosen multiples, margins that stop
at a bar's base."""

from __future__ import annotations

import itertools
import math

from hypothesis import given
from hypothesis import strategies as st

from costsim.report.plot.ticks import auto_limits, log_ticks, nice_ticks

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
