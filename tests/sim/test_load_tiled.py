"""Serving load from a tiled day/week shape (issue 20) equals evaluating every hour on its own
to float rounding: the reference below is the per-hour formula of docs/simulator.md."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.sim.load import LoadShape, hourly_rates
from costsim.units import HOURS_PER_DAY, HOURS_PER_MONTH, SECONDS_PER_HOUR


def per_hour_rates(shape: LoadShape, start_day: date, start_s: float, hours: int) -> np.ndarray:
    out = np.empty(hours)
    for i in range(hours):
        t_h = start_s / SECONDS_PER_HOUR + i + 0.5
        rate = shape.peak_requests_per_s
        if shape.diurnal:
            wave = (1 + np.cos(2 * np.pi * ((t_h % HOURS_PER_DAY) - shape.peak_hour)
                               / HOURS_PER_DAY)) / 2
            rate *= shape.trough_fraction + (1 - shape.trough_fraction) * wave
        if shape.weekly and (start_day.weekday() + int(t_h // HOURS_PER_DAY)) % 7 >= 5:
            rate *= shape.weekend_fraction
        rate *= (1 + shape.growth_pct_per_month / 100) ** ((i + 0.5) / HOURS_PER_MONTH)
        out[i] = rate
    return out


shapes = st.builds(LoadShape, peak_requests_per_s=st.floats(0.01, 5000),
                   diurnal=st.booleans(), weekly=st.booleans(),
                   growth_pct_per_month=st.one_of(st.just(0.0), st.floats(-5, 15)),
                   trough_fraction=st.floats(0.0, 1.0), weekend_fraction=st.floats(0.0, 1.0),
                   peak_hour=st.floats(0, 23.99))


@settings(max_examples=60, deadline=None)
@given(shape=shapes, day=st.integers(0, 6), start_s=st.one_of(
    st.integers(0, 24 * 400).map(lambda h: h * SECONDS_PER_HOUR),
    st.floats(0, 4e7)), hours=st.integers(0, 2000))
def test_tiled_rates_equal_the_per_hour_formula_to_rounding(shape: LoadShape, day: int,
                                                            start_s: float,
                                                            hours: int) -> None:
    start_day = date(2027, 1, 4) + timedelta(days=day)
    got = hourly_rates(shape, start_day, start_s, hours)
    want = per_hour_rates(shape, start_day, start_s, hours)
    assert got.shape == (hours,)
    # a clock time computed from a later hour differs in its last bits; the weekday of an hour
    # whose middle lies within rounding of midnight could differ, which no start reaches here
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=0)


def test_a_year_of_a_week_shaped_load_repeats_weekly_apart_from_growth() -> None:
    shape = LoadShape(peak_requests_per_s=25, diurnal=True, weekly=True,
                      growth_pct_per_month=0.0, trough_fraction=0.2, weekend_fraction=0.6,
                      peak_hour=14)
    rates = hourly_rates(shape, date(2027, 3, 10), 5_123_456.7, 8766)
    week = rates[:168]
    assert np.array_equal(rates[168 * 10:168 * 11], week)


def test_rates_are_the_callers_own_array_whatever_is_memoized() -> None:
    shape = LoadShape(peak_requests_per_s=3, diurnal=True, weekly=True,
                      growth_pct_per_month=4.0, trough_fraction=0.2, weekend_fraction=0.6,
                      peak_hour=14)
    first = hourly_rates(shape, date(2027, 3, 10), 7_200.0, 900)
    want = first.copy()
    first[:] = -1.0  # a caller scaling its rates in place
    again = hourly_rates(shape, date(2027, 3, 10), 7_200.0, 900)
    assert np.array_equal(again, want)


def tiled_then_grown(shape: LoadShape, start_day: date, start_s: float,
                     hours: int) -> np.ndarray:
    """The computation before the period and growth were memoized (one call, nothing kept)."""
    t0_h = start_s / SECONDS_PER_HOUR
    period = 168 if shape.weekly else 24 if shape.diurnal else 1
    n = min(hours, period)
    t_h = t0_h + np.arange(n, dtype=np.float64) + 0.5
    rate = np.full(n, shape.peak_requests_per_s, dtype=np.float64)
    if shape.diurnal:
        wave = (1 + np.cos(2 * np.pi * (np.mod(t_h, HOURS_PER_DAY) - shape.peak_hour)
                           / HOURS_PER_DAY)) / 2
        rate *= shape.trough_fraction + (1 - shape.trough_fraction) * wave
    if shape.weekly:
        weekday = np.mod(start_day.weekday() + np.floor(t_h / HOURS_PER_DAY).astype(np.int64),
                         7)
        rate *= np.where(weekday >= 5, shape.weekend_fraction, 1.0)
    rate = np.resize(rate, hours)
    if shape.growth_pct_per_month:
        months = (np.arange(hours, dtype=np.float64) + 0.5) / HOURS_PER_MONTH
        rate *= np.exp(np.log1p(shape.growth_pct_per_month / 100) * months)
    return rate


@settings(max_examples=40, deadline=None)
@given(shape=shapes, day=st.integers(0, 6), start_s=st.floats(0, 4e7),
       hours=st.integers(1, 1000))
def test_memoized_periods_and_growth_give_the_same_bits_cold_or_warm(
        shape: LoadShape, day: int, start_s: float, hours: int) -> None:
    from costsim.sim import load as load_module

    start_day = date(2027, 1, 4) + timedelta(days=day)
    want = tiled_then_grown(shape, start_day, start_s, hours).tobytes()
    load_module._period_rates.cache_clear()
    load_module._GROWTH.clear()
    assert hourly_rates(shape, start_day, start_s, hours).tobytes() == want  # cold
    assert hourly_rates(shape, start_day, start_s, hours).tobytes() == want  # warm
    # a shorter phase on the same futures (a slice of the growth kept), then a longer one:
    # the same bits as computed alone
    for length in (max(1, hours // 2), hours + 1):
        got = hourly_rates(shape, start_day, start_s, length)
        assert got.tobytes() == tiled_then_grown(shape, start_day, start_s, length).tobytes()
