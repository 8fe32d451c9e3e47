"""Bounded capacity (reservations, owned servers) hour by hour: what exists, what phases took.

Each bounded pool holds an hourly capacity (GPUs that exist in that hour) and an hourly
occupancy; phases take GPUs in the order they ask, never more than is free. What a phase could
not get goes to its spill pool (or is not served). Per-phase use is kept so the ledger can book
each phase's share of a commitment as its compute and the rest as idle.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import weakref
from collections.abc import Sequence
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
    # sums of the use computed since the last take (a replication asks for the same sums in
    # its closing, its pool uses and its phase costs): per phase (None: overall) the month
    # sums, and the overall total; forgotten on every take
    _month_sums: dict[str | None, tuple[Sequence[tuple[int, int]], list[float]]] = field(
        init=False, default_factory=dict, repr=False, compare=False)
    _used_total: float | None = field(init=False, default=None, repr=False, compare=False)

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
        self._month_sums.clear()
        self._used_total = None
        lo, hi = (hour0, end) if hour0 >= 0 else (0, len(self.capacity))  # from the end: all
        for key in (None, phase):
            span = self.spans.get(key)
            self.spans[key] = (lo, hi) if span is None else (min(span[0], lo), max(span[1], hi))
        return got

    def used_gpu_s_by_month(self, month_hours: Sequence[tuple[int, int]], phase: str | None = None
                            ) -> list[float]:
        """GPU-seconds used in each horizon month (one phase, or all)."""
        return [s * SECONDS_PER_HOUR for s in self.used_by_month(month_hours, phase)]

    def used_by_month(self, month_hours: Sequence[tuple[int, int]], phase: str | None = None
                      ) -> list[float]:
        """GPU-hours used in each month's hours [a, b) (one phase, or all):
        ``float(use[a:b].sum())``, exactly 0.0 without summing where nothing was taken.
        Kept until the next take (the list is shared: not to be changed); a pool one phase
        alone took from has that phase's use equal to its occupancy bit for bit (the same
        additions to the same zeros), so the two share their sums."""
        if phase is not None and len(self.by_phase) == 1 and phase in self.by_phase:
            phase = None
        kept = self._month_sums.get(phase)
        if kept is not None and (kept[0] is month_hours or kept[0] == month_hours):
            return kept[1]
        use = self.occupancy if phase is None else self.by_phase.get(phase)
        if use is None:
            return [0.0] * len(month_hours)
        lo, hi = self.spans.get(phase, (0, 0))
        sums = [float(use[a:b].sum()) if a < hi and b > lo else 0.0 for a, b in month_hours]
        self._month_sums[phase] = (month_hours, sums)
        return sums

    def used_total(self) -> float:
        """``float(occupancy.sum())``, kept until the next take."""
        if self._used_total is None:
            self._used_total = float(self.occupancy.sum())
        return self._used_total


# The sums of read-only (memoized, shared) capacity arrays, by the array's identity (held
# weakly: an entry whose array died is a miss, so a reused id never finds another array's
# sums): a pool bought on a fixed date has the same capacity in every replication, and a
# replication sums it in its closing, its pool uses and its phase costs. Bounded like
# :func:`hourly_capacity`.
_CAPACITY_SUMS_KEPT = 256
_CAPACITY_SUMS: dict[int, tuple[weakref.ref[FloatArray], Sequence[tuple[int, int]],
                                tuple[float, tuple[float, ...]]]] = {}


def capacity_sums(capacity: FloatArray, month_hours: Sequence[tuple[int, int]]
                  ) -> tuple[float, tuple[float, ...]]:
    """``float(capacity.sum())`` and each month's ``float(capacity[a:b].sum())``, memoized
    for a read-only array (the same floats: a miss or a writeable array computes them)."""
    if capacity.flags.writeable:
        return _capacity_sums(capacity, month_hours)
    kept = _CAPACITY_SUMS.get(id(capacity))
    if kept is not None and kept[0]() is capacity and (kept[1] is month_hours
                                                       or kept[1] == month_hours):
        return kept[2]
    sums = _capacity_sums(capacity, month_hours)
    _CAPACITY_SUMS.pop(id(capacity), None)
    if len(_CAPACITY_SUMS) >= _CAPACITY_SUMS_KEPT:
        _CAPACITY_SUMS.pop(next(iter(_CAPACITY_SUMS)))
    _CAPACITY_SUMS[id(capacity)] = (weakref.ref(capacity), month_hours, sums)
    return sums


def _capacity_sums(capacity: FloatArray, month_hours: Sequence[tuple[int, int]]
                   ) -> tuple[float, tuple[float, ...]]:
    return float(capacity.sum()), tuple(float(capacity[a:b].sum()) for a, b in month_hours)


# Hours without room, by the pools (their read-only capacity arrays, held weakly: an entry
# whose array died is a miss) and the GPUs asked: servers delivered on a fixed date leave the
# same hours short in every replication until a phase takes from them.
_SHORT_RUNS_KEPT = 64
_SHORT_RUNS: dict[tuple[tuple[int, ...], float, int],
                  tuple[tuple[weakref.ref[FloatArray], ...], tuple[list[int], list[int]]]] = {}


def short_runs(pools: Sequence[BoundedPool], gpus: float, hours: int
               ) -> tuple[list[int], list[int]] | None:
    """The hours in which the pools' free GPUs, summed in order as
    :meth:`RunContext.free_profile` sums them, fall short of ``gpus`` (free < gpus − 1e-9):
    the first and end hours of each maximal run of them, ascending. Only while nothing was
    taken from any pool and each capacity is read-only (memoized then); None otherwise."""
    if any(p.spans or p.capacity.flags.writeable or len(p.capacity) != hours for p in pools):
        return None
    capacities = tuple(p.capacity for p in pools)
    key = (tuple(id(c) for c in capacities), gpus, hours)
    kept = _SHORT_RUNS.get(key)
    if kept is not None and all(a() is b for a, b in zip(kept[0], capacities, strict=True)):
        return kept[1]
    free = sum((p.free() for p in pools), start=np.zeros(hours))
    short = np.concatenate(([False], free < gpus - 1e-9, [False]))
    edges = np.flatnonzero(short[1:] != short[:-1]).tolist()
    runs = (edges[0::2], edges[1::2])
    _SHORT_RUNS.pop(key, None)
    if len(_SHORT_RUNS) >= _SHORT_RUNS_KEPT:
        _SHORT_RUNS.pop(next(iter(_SHORT_RUNS)))
    _SHORT_RUNS[key] = (tuple(weakref.ref(c) for c in capacities), runs)
    return runs


def first_room(runs: tuple[list[int], list[int]], first: int, span: int, hours: int
               ) -> int | None:
    """The first hour h >= ``first`` (< ``hours``) such that no short hour (``runs``, from
    :func:`short_runs`) lies in [h, min(h + span, hours)); None when there is none. A window
    that meets a run [a, b) cannot start at any hour before b either (it would hold a or
    its own start), so the search jumps past each run it meets."""
    starts, ends = runs
    at = first
    i = bisect.bisect_right(ends, at)  # the first run ending after ``at``
    while at < hours:
        if i == len(starts) or max(starts[i], at) >= min(at + span, hours):
            return at
        at = ends[i]
        i += 1
    return None


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
    starts = np.asarray(starts_s, dtype=np.float64)
    n = starts.size
    # the starts and the ends in one array (elementwise: the same values as each apart);
    # clip(x, 0, hours) as maximum then minimum: the same values, without np.clip's
    # overhead (~25 µs a call here)
    at_h: FloatArray = np.concatenate((starts, np.asarray(ends_s, dtype=np.float64)))
    at_h /= SECONDS_PER_HOUR
    np.maximum(at_h, 0.0, out=at_h)
    np.minimum(at_h, float(hours), out=at_h)
    whole = np.floor(at_h).astype(np.int64)
    frac = at_h - whole
    # each point adds ±gpus·(1 − frac) to its hour and ±gpus·frac to the next: an end's
    # (−gpus)·x is −(gpus·x) exactly, so one product for both, negated for the ends
    first = gpus * (1 - frac)
    second = gpus * frac
    np.negative(first[n:], out=first[n:])
    np.negative(second[n:], out=second[n:])
    # one bincount adds every entry to its hour in the order listed (a start's two entries,
    # then an end's, as adding them one after the other would; np.add.at in that order gives
    # the same sums, slower)
    at = np.concatenate((whole[:n], whole[:n] + 1, whole[n:], whole[n:] + 1))
    if not at.size:
        return 0, np.zeros(0)
    lo, hi = int(at.min()), min(int(at.max()) + 1, hours)
    if lo >= hi:
        return 0, np.zeros(0)
    adds = np.concatenate((first[:n], second[:n], first[n:], second[n:]))
    diff = np.bincount(at - lo, weights=adds, minlength=hi - lo)[:hi - lo]
    # the running sum only over the hours the end points touch: cumsum adds left to right, so
    # before the first touched hour it is exactly 0 (a bincount's empty bin is +0.0) and after
    # the last one it stays at its last value; a horizon-long cumsum costs ~10 ns an hour
    part: FloatArray = np.cumsum(diff)
    if hi < hours and part[-1] != 0.0:
        part = np.concatenate((part, np.full(hours - hi, part[-1])))
    return lo, part
