"""Serving demand over the calendar, in hourly buckets.

rate(t) = peak · d(hour) · w(weekday) · (1 + g)^(months since the phase began), with

    d(h) = trough + (1 − trough) · (1 + cos(2π (h − peak_hour) / 24)) / 2

(1 at the peak hour, ``trough`` twelve hours away) and w = ``weekend_fraction`` on Saturdays and
Sundays, 1 otherwise. Buckets are one hour: the fleet is resized hourly, so the cost of a
simulated year is 8,760 buckets whatever the request rate (a year at 1,000 requests/s costs the
same to simulate as a year at 1 request/s).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date

import numpy as np
from numpy.typing import NDArray

from costsim.domain.phases import LoadProfile
from costsim.domain.simulation import SimAssumptions
from costsim.units import HOURS_PER_DAY, HOURS_PER_MONTH, SECONDS_PER_HOUR

FloatArray = NDArray[np.float64]
HOURS_PER_WEEK = 7 * 24  # the weekly shape repeats after a week of hourly buckets
# Periods (at most a week of floats, ~1.3 KB) by value: a few per replication.
_PERIODS_KEPT = 4096
# Growth factors, one array per growth drawn (the longest phase asked for): a replication's
# draw is the same for every plan, so a run's plans share one per replication. A year is
# ~70 KB: 256 of them are at most ~18 MB; a run of more replications than that (the default is
# 200) simulated plan after plan finds the first plan's evicted and computes them again (the
# same values: numpy's exp gives an element the same bits wherever it lies in the array,
# tests/sim/test_load_tiled.py).
_GROWTH_KEPT = 256
_GROWTH: dict[float, FloatArray] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadShape:
    """The profile's shape with every default resolved (for the report's assumptions)."""

    peak_requests_per_s: float
    diurnal: bool
    weekly: bool
    growth_pct_per_month: float
    trough_fraction: float
    weekend_fraction: float
    peak_hour: float


def resolve_shape(load: LoadProfile, defaults: SimAssumptions,
                  growth_pct_per_month: float | None = None) -> LoadShape:
    """The load profile with its unset fields taken from the defaults; ``growth_pct_per_month``
    replaces the profile's growth (Monte Carlo's draw)."""
    return LoadShape(
        peak_requests_per_s=load.peak_requests_per_s, diurnal=load.diurnal, weekly=load.weekly,
        growth_pct_per_month=(load.growth_pct_per_month if growth_pct_per_month is None
                              else growth_pct_per_month),
        trough_fraction=(defaults.diurnal_trough_fraction if load.trough_fraction is None
                         else load.trough_fraction),
        weekend_fraction=(defaults.weekend_fraction if load.weekend_fraction is None
                          else load.weekend_fraction),
        peak_hour=defaults.diurnal_peak_hour)


def hourly_rates(shape: LoadShape, start_day: date, start_s: float, hours: int) -> FloatArray:
    """Mean request rate (requests/s) in each hour from ``start_s`` (seconds after 00:00 of
    ``start_day``) for ``hours`` hours.

    The day and week shape repeats every 24 or 168 hours from the phase's start, so one
    period is evaluated (cosines, weekdays) and tiled; the growth factor is
    exp(ln(1 + g) · months). Both agree with evaluating every hour on its own to float
    rounding (~1e-13 relative: an hour's clock time differs in its last bits when computed from
    a later hour), docs/simulator.md "Serving".

    The period and the growth factors are memoized by value (:func:`_period_rates`,
    :func:`_growth_factors`): the plans of a run serve the same load on the same futures, so
    the plans after the first multiply the same arrays; the result is a new array each call.
    """
    period = HOURS_PER_WEEK if shape.weekly else 24 if shape.diurnal else 1
    n = min(hours, period)
    pattern = _period_rates(shape.peak_requests_per_s, shape.diurnal, shape.weekly,
                            shape.trough_fraction, shape.weekend_fraction, shape.peak_hour,
                            start_day.weekday() if shape.weekly else 0, start_s, n)
    if hours > n:  # np.resize's repetition, by one broadcast copy
        tiled = np.empty(-(-hours // n) * n)
        tiled.reshape(-1, n)[:] = pattern
        rate = tiled[:hours]
    else:
        rate = pattern.copy()
    if shape.growth_pct_per_month:
        rate *= _growth_factors(shape.growth_pct_per_month, hours)
    return rate


@functools.lru_cache(maxsize=_PERIODS_KEPT)
def _period_rates(peak_requests_per_s: float, diurnal: bool, weekly: bool,
                  trough_fraction: float, weekend_fraction: float, peak_hour: float,
                  weekday0: int, start_s: float, n: int) -> FloatArray:
    """The rates of the first ``n`` hours before growth (at most a period; read-only)."""
    t0_h = start_s / SECONDS_PER_HOUR
    t_h = t0_h + np.arange(n, dtype=np.float64) + 0.5  # bucket middles
    rate = np.full(n, peak_requests_per_s, dtype=np.float64)
    if diurnal:
        hour_of_day = np.mod(t_h, HOURS_PER_DAY)
        wave = (1 + np.cos(2 * np.pi * (hour_of_day - peak_hour) / HOURS_PER_DAY)) / 2
        rate *= trough_fraction + (1 - trough_fraction) * wave
    if weekly:
        weekday = np.mod(weekday0 + np.floor(t_h / HOURS_PER_DAY).astype(np.int64), 7)
        rate *= np.where(weekday >= 5, weekend_fraction, 1.0)
    rate.flags.writeable = False
    return rate


def _growth_factors(growth_pct_per_month: float, hours: int) -> FloatArray:
    """exp(ln(1 + g) · months) at each of ``hours`` hourly buckets' middles (read-only). An
    hour's factor does not depend on how many follow it, so one array per growth serves every
    phase length up to its own (a slice): phases that start in another fraction of an hour
    cover one bucket more or fewer."""
    kept = _GROWTH.get(growth_pct_per_month)
    if kept is not None and kept.size >= hours:
        return kept[:hours]
    growth = np.multiply(np.log1p(growth_pct_per_month / 100), _bucket_months(hours))
    factors: FloatArray = np.exp(growth, out=growth)  # in place: one array fewer
    factors.flags.writeable = False
    _GROWTH.pop(growth_pct_per_month, None)
    if len(_GROWTH) >= _GROWTH_KEPT:
        _GROWTH.pop(next(iter(_GROWTH)))  # the oldest
    _GROWTH[growth_pct_per_month] = factors
    return factors


@functools.lru_cache(maxsize=64)
def _bucket_months(hours: int) -> FloatArray:
    """Months from a phase's start to the middle of each of its hourly buckets (read-only:
    shared by every replication whose phase lasts ``hours`` buckets)."""
    months = (np.arange(hours, dtype=np.float64) + 0.5) / HOURS_PER_MONTH
    months.flags.writeable = False
    return months
