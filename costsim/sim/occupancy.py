"""Bounded capacity (reservations, owned servers) hour by hour: what exists, what phases took.

Each bounded pool holds an hourly capacity (GPUs that exist in that hour) and an hourly
occupancy; phases take GPUs in the order they ask, never more than is free. What a phase could
not get goes to its spill pool (or is not served). Per-phase use is kept so the ledger can book
each phase's share of a commitment as its compute and the rest as idle.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from costsim.domain.calendar import Calendar
from costsim.units import SECONDS_PER_HOUR

IntArray = NDArray[np.int64]

FloatArray = NDArray[np.float64]


@dataclass(slots=True)
class BoundedPool:
    """One reservation or set of owned servers during one simulation (mutable)."""

    key: str  # index into the plan's commitment/owned pools, e.g. "commitment:0"
    gpu: str
    owned: bool
    capacity: FloatArray  # GPUs available in each horizon hour
    occupancy: FloatArray = field(init=False)
    by_phase: dict[str, FloatArray] = field(init=False, default_factory=dict)
    # the hours [lo, hi) GPUs were taken in, overall (key None) and per phase: outside them
    # the use is +0.0, so a month there sums to exactly 0 without summing it
    spans: dict[str | None, tuple[int, int]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.occupancy = np.zeros_like(self.capacity)

    def free(self) -> FloatArray:
        """GPUs not taken in each hour."""
        return np.maximum(0.0, self.capacity - self.occupancy)

    def free_in(self, h0: int, h1: int) -> FloatArray:
        """:meth:`free` of the hours [h0, h1) only (0 <= h0 <= h1), the same values."""
        return np.maximum(0.0, self.capacity[h0:h1] - self.occupancy[h0:h1])

    def take(self, phase: str, hour0: int, gpus: FloatArray) -> FloatArray:
        """Take up to ``gpus[i]`` GPUs in hour ``hour0 + i``; returns what was taken."""
        end = min(len(self.capacity), hour0 + len(gpus))
        if end <= hour0:
            return np.zeros_like(gpus)
        got = np.zeros_like(gpus)
        # what is free in these hours only (elementwise: the same values as free()'s)
        got[: end - hour0] = np.minimum(gpus[: end - hour0], self.free_in(hour0, end))
        self.occupancy[hour0:end] += got[: end - hour0]
        use = self.by_phase.setdefault(phase, np.zeros_like(self.capacity))
        use[hour0:end] += got[: end - hour0]
        lo, hi = (hour0, end) if hour0 >= 0 else (0, len(self.capacity))  # from the end: all
        for key in (None, phase):
            span = self.spans.get(key)
            self.spans[key] = (lo, hi) if span is None else (min(span[0], lo), max(span[1], hi))
        return got

    def used_gpu_s_by_month(self, month_hours: list[tuple[int, int]], phase: str | None = None
                            ) -> list[float]:
        """GPU-seconds used in each horizon month (one phase, or all)."""
        use = self.occupancy if phase is None else self.by_phase.get(phase)
        if use is None:
            return [0.0] * len(month_hours)
        lo, hi = self.spans.get(phase, (0, 0))
        return [float(use[a:b].sum()) * SECONDS_PER_HOUR if a < hi and b > lo else 0.0
                for a, b in month_hours]

    def used_in(self, a: int, b: int) -> float:
        """GPU-hours used in hours [a, b): ``float(occupancy[a:b].sum())``, exactly 0.0
        without summing where nothing was taken."""
        lo, hi = self.spans.get(None, (0, 0))
        return float(self.occupancy[a:b].sum()) if a < hi and b > lo else 0.0


def interval_gpus(hours: int, t0_s: float, t1_s: float, gpus: float) -> tuple[int, FloatArray]:
    """GPUs held over [t0, t1) as an hourly profile (partial hours pro rata): (first hour, per
    hour GPU-hours)."""
    h0 = int(t0_s // SECONDS_PER_HOUR)
    h1 = max(h0 + 1, math.ceil(t1_s / SECONDS_PER_HOUR))
    h1 = min(h1, hours)
    if h1 <= h0:
        return h0, np.zeros(0)
    # Every hour inside [t0, t1) is covered whole: (s + 1 h) − s is exactly 1 h for a whole
    # hour's start s (integers in floats), so its value is exactly 1.0 × gpus = gpus. Only the
    # first and last hours are computed, with the same operations in the same order as the
    # vectorized formula (Python's float arithmetic is numpy's float64: IEEE, to the bit);
    # where the inner hours are not provably whole, every hour is computed (tests/sim/
    # test_occupancy_fast.py checks both against the formula).
    n = h1 - h0
    if n > 2 and ((h0 + 1) * SECONDS_PER_HOUR < t0_s or (h1 - 1) * SECONDS_PER_HOUR > t1_s):
        return h0, _cover(h0, h1, t0_s, t1_s) * gpus
    profile = np.full(n, float(gpus))
    profile[0] = _hour_cover(h0 * SECONDS_PER_HOUR, t0_s, t1_s) * gpus
    if n > 1:
        profile[-1] = _hour_cover((h1 - 1) * SECONDS_PER_HOUR, t0_s, t1_s) * gpus
    return h0, profile


def _cover(h0: int, h1: int, t0_s: float, t1_s: float) -> FloatArray:
    """The share of each hour in [h0, h1) that [t0, t1) covers, every hour computed."""
    starts = np.arange(h0, h1, dtype=np.float64) * SECONDS_PER_HOUR
    # clip(x, 0, 1 h) as maximum then minimum: the same values, without np.clip's overhead
    cover: FloatArray = np.minimum(np.maximum(np.minimum(starts + SECONDS_PER_HOUR, t1_s)
                                              - np.maximum(starts, t0_s), 0.0),
                                   SECONDS_PER_HOUR) / SECONDS_PER_HOUR
    return cover


def _hour_cover(start_s: float, t0_s: float, t1_s: float) -> float:
    """:func:`_cover` of the one hour from ``start_s`` (the same operations on floats; the
    difference is never −0.0, so Python's max and min pick what numpy's do)."""
    return min(max(min(start_s + SECONDS_PER_HOUR, t1_s) - max(start_s, t0_s), 0.0),
               SECONDS_PER_HOUR) / SECONDS_PER_HOUR


@functools.lru_cache(maxsize=64)
def hour_grid(calendar: Calendar) -> tuple[int, tuple[tuple[int, int], ...], IntArray]:
    """The horizon's hours, each month's [first, end) hours and each hour's month: the same
    for every replication of every plan on ``calendar``, so computed once (the month array
    read-only, as it is shared)."""
    hours = math.ceil(calendar.horizon_s / SECONDS_PER_HOUR)
    month_hours = tuple((int(a // SECONDS_PER_HOUR), int(b // SECONDS_PER_HOUR))
                        for a, b in itertools.pairwise(calendar.month_starts_s()))
    month_of_hour = np.zeros(hours, dtype=np.int64)
    for m, (a, b) in enumerate(month_hours):
        month_of_hour[a:b] = m
    month_of_hour.flags.writeable = False
    return hours, month_hours, month_of_hour


# Pools bought on fixed dates have the same capacity in every replication of a plan; a pool
# placed where a phase starts has one per start. Bounded; a miss computes the same array.
_CAPACITIES_KEPT = 256


@functools.lru_cache(maxsize=_CAPACITIES_KEPT)
def hourly_capacity(hours: int, t0_s: float, t1_s: float, gpus: int) -> FloatArray:
    """Capacity of ``gpus`` GPUs that exist over [t0, t1), hour by hour (read-only: memoized
    and shared, as nothing writes a pool's capacity)."""
    profile = np.zeros(hours)
    h0, held = interval_gpus(hours, max(0.0, t0_s), t1_s, float(gpus))
    if held.size:
        profile[h0:h0 + held.size] = held
    profile.flags.writeable = False
    return profile


def intervals_gpus(hours: int, starts_s: FloatArray, ends_s: FloatArray, gpus: float
                   ) -> FloatArray:
    """GPUs held by many intervals [start, end) as one hourly profile over the horizon (partial
    hours pro rata), vectorized: an interval from s covers hour floor(s) for 1 − frac(s) and
    every later hour fully, so each end point adds two entries to a difference array."""
    profile: FloatArray = np.zeros(hours)
    h0, part = intervals_gpus_part(hours, starts_s, ends_s, gpus)
    profile[h0:h0 + part.size] = part
    if part.size and h0 + part.size < hours:  # after the last end point: its running sum
        profile[h0 + part.size:] = part[-1]
    return profile


def intervals_gpus_part(hours: int, starts_s: FloatArray, ends_s: FloatArray, gpus: float
                        ) -> tuple[int, FloatArray]:
    """:func:`intervals_gpus` as (first hour, profile from it): the hours from the first one an
    end point touches to the last one, and to the horizon's end only where the running sum
    does not come back to exactly 0 there (the profile is exactly 0 outside what it returns,
    so adding it to a demand array adds what the horizon-long profile adds)."""
    bins: list[NDArray[np.int64]] = []
    adds: list[FloatArray] = []
    for points, sign in ((starts_s, 1.0), (ends_s, -1.0)):
        # clip(x, 0, hours) as maximum then minimum: the same values, without np.clip's
        # overhead (~25 µs a call here)
        at_h: FloatArray = np.minimum(np.maximum(
            np.asarray(points, dtype=np.float64) / SECONDS_PER_HOUR, 0.0), float(hours))
        whole = np.floor(at_h).astype(np.int64)
        frac = at_h - whole
        bins += [whole, whole + 1]
        adds += [sign * gpus * (1 - frac), sign * gpus * frac]
    # one bincount adds every entry to its hour in the order listed, as adding them one
    # after the other would (np.add.at in that order gives the same sums, slower)
    at = np.concatenate(bins)
    if not at.size:
        return 0, np.zeros(0)
    lo, hi = int(at.min()), min(int(at.max()) + 1, hours)
    if lo >= hi:
        return 0, np.zeros(0)
    diff = np.bincount(at - lo, weights=np.concatenate(adds), minlength=hi - lo)[:hi - lo]
    # the running sum only over the hours the end points touch: cumsum adds left to right, so
    # before the first touched hour it is exactly 0 (a bincount's empty bin is +0.0) and after
    # the last one it stays at its last value; a horizon-long cumsum costs ~10 ns an hour
    part: FloatArray = np.cumsum(diff)
    if hi < hours and part[-1] != 0.0:
        part = np.concatenate((part, np.full(hours - hi, part[-1])))
    return lo, part
