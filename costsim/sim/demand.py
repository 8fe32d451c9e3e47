"""Simulated GPU demand per GPU type: what the plan's phases held, hour by hour.

Demand is the GPUs the phases held in each horizon hour, whatever pool served them
(reservations, owned servers, on-demand or spot rentals), before rentals round up to whole
instances. It is what a commitment would have covered, so reservation sizing
(:mod:`costsim.optimize.reservation`) prices commitment levels against it.

Across replications it is kept as a sparse histogram by whole-GPU level (hours and GPU-hours
per level), not hour by hour: 8,766 hours × 1,000 replications per GPU type would not fit, and the
histogram is exact for what sizing needs, the GPU-hours above any whole-GPU commitment level.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
# GPU-hours below this are float noise of pro-rata partial hours, not demand
_NOISE_GPUS = 1e-9
# pooling bins levels below this by the level itself (a bincount of at most this many bins);
# higher levels (a 16,384-GPU run's) are sorted first
_DIRECT_LEVELS = 2**16


@dataclass(frozen=True, slots=True, kw_only=True)
class DemandHistogram:
    """Hourly demand of one GPU type over ``replications`` futures of the same hours.

    Sparse by whole-GPU level (a 16,384-GPU run has two levels, not 16,385): ``hours[i]``
    counts the hours whose demand u has ⌈u⌉ = ``levels[i]`` GPUs (level 0: no demand) and
    ``gpu_hours[i]`` sums u over them. For a whole-GPU level c the hours above it are exactly
    the levels j > c, so GPU-hours above c = Σ_{j>c} (s_j − c·n_j).
    """

    gpu: str
    replications: int
    levels: tuple[int, ...]  # ascending, distinct
    hours: tuple[int, ...]
    gpu_hours: tuple[float, ...]

    @classmethod
    def from_hourly(cls, gpu: str, hourly: FloatArray) -> DemandHistogram:
        """From demand per hour: one replication (1-D) or replications × hours (2-D)."""
        return cls.from_hourly_and_window(gpu, hourly)[0]

    @classmethod
    def from_hourly_and_window(cls, gpu: str, hourly: FloatArray,
                               window: tuple[int, int] | None = None,
                               zero_outside: tuple[int, int] | None = None
                               ) -> tuple[DemandHistogram, DemandHistogram | None]:
        """:meth:`from_hourly` of ``hourly`` and, for a 1-D ``hourly``, of its hours
        ``window`` = [h0, h1) (None without one): each the figures :meth:`from_hourly` gives
        for it, the hours' levels computed once for both. ``zero_outside`` = [lo, hi), for a
        1-D ``hourly``: every hour outside it is known to hold exactly +0.0 (what the
        simulator wrote to), so the hours are not scanned for the first and last with demand.

        Raises:
            ValueError: no hours (in ``hourly`` or the window), or a demand below 0 GPUs.
        """
        array = np.atleast_2d(np.asarray(hourly, dtype=np.float64))
        if array.size == 0:
            raise ValueError(f"demand of {gpu} covers no hours")
        # hours of exactly no demand before the first and after the last hour with some (a
        # GPU type one phase used for days of an 18-month horizon) are counted, not binned:
        # level 0, adding exactly 0 GPU-hours, the same figures as binning them
        flat = array.ravel()
        if zero_outside is not None and array.shape[0] == 1:
            first, last = max(0, zero_outside[0]), min(flat.size, zero_outside[1])
            # trimmed to the first and last hour with demand, as the scan finds them (so the
            # window below reuses the same bins): a few zero hours at the ends one by one,
            # more by scanning what is left
            for _ in range(4):
                if first < last and flat[first] == 0:
                    first += 1
                if first < last and flat[last - 1] == 0:
                    last -= 1
            if first < last and (flat[first] == 0 or flat[last - 1] == 0):
                some = flat[first:last] != 0
                if some.any():
                    first, last = (first + int(some.argmax()),
                                   last - int(some[::-1].argmax()))
                else:
                    first = last
            if first >= last:
                first = last = 0
        else:
            some = flat != 0
            first = int(some.argmax())
            last = flat.size - int(some[::-1].argmax()) if some[first] else first
        span = flat[first:last]
        lowest = float(span.min()) if span.size else 0.0
        if lowest < -_NOISE_GPUS:
            raise ValueError(f"demand of {gpu} must be >= 0 GPUs, got {lowest}")
        # negative noise counts as 0 GPUs (no copy where there is none); values >= 0 give
        # ceil(v - noise) >= ceil(-noise) = 0, so the levels need no floor at 0
        values = np.maximum(span, 0.0) if lowest < 0 else span
        # ceil(v − noise) cast to whole GPUs by the ufunc itself (one pass fewer than ceil
        # then astype: the same integers)
        by_hour = np.empty(values.size, dtype=np.int64)
        np.ceil(values - _NOISE_GPUS, out=by_hour, casting="unsafe")
        counts, sums = _bins(by_hour, values)
        binned = _binned(counts, sums)
        whole = _histogram(gpu, array.shape[0], binned, flat.size - span.size)
        if window is None:
            return whole, None
        h0, h1 = window[0], min(window[1], flat.size)
        if array.shape[0] != 1 or h1 <= h0:
            raise ValueError(f"demand of {gpu} covers no hours in {window}")
        # the window's hours outside the span hold exactly 0 GPUs: level 0, nothing summed
        a, b = max(h0, first) - first, min(h1, last) - first
        a, b = (a, b) if a < b else (0, 0)
        if (a, b) != (0, span.size):
            binned = _binned(*_bins(by_hour[a:b], values[a:b]))
        # else the window holds the whole span: the same bins, only the idle hours differ
        return whole, _histogram(gpu, 1, binned, (h1 - h0) - (b - a))

    @classmethod
    def pooled(cls, parts: Sequence[DemandHistogram]) -> DemandHistogram:
        """Pooled over replications of the same hours (all of one GPU type)."""
        gpus = {part.gpu for part in parts}
        if len(gpus) != 1:
            raise ValueError(f"cannot pool demand of {' with '.join(sorted(gpus))}")
        # the parts' values in order, gathered by list.extend (in C) and converted once
        levels_in: list[int] = []
        hours_in: list[int] = []
        gpu_hours_in: list[float] = []
        for part in parts:
            levels_in.extend(part.levels)
            hours_in.extend(part.hours)
            gpu_hours_in.extend(part.gpu_hours)
        every = np.array(levels_in, dtype=np.int64)
        all_hours = np.array(hours_in, dtype=np.float64)
        all_gpu_hours = np.array(gpu_hours_in, dtype=np.float64)
        if every.size and every.min() >= 0 and every.max() < _DIRECT_LEVELS:
            # levels are whole GPUs: binned by level itself, no sort (bincount adds each bin's
            # weights in input order, as with the sorted levels' inverse index below)
            present = np.bincount(every)
            levels = np.flatnonzero(present)
            hours = np.bincount(every, weights=all_hours)[levels]
            gpu_hours = np.bincount(every, weights=all_gpu_hours)[levels]
        else:
            levels, index = np.unique(every, return_inverse=True)
            hours = np.bincount(index, weights=all_hours, minlength=len(levels))
            gpu_hours = np.bincount(index, weights=all_gpu_hours, minlength=len(levels))
        return DemandHistogram(gpu=parts[0].gpu,
                               replications=sum(part.replications for part in parts),
                               levels=tuple(levels.tolist()),
                               # whole hours (sums of whole numbers): round's integers
                               hours=tuple(np.rint(hours).astype(np.int64).tolist()),
                               gpu_hours=tuple(gpu_hours.tolist()))

    def merged(self, other: DemandHistogram) -> DemandHistogram:
        """Pooled with more replications of the same hours (same GPU type)."""
        return DemandHistogram.pooled([self, other])

    @property
    def max_gpus(self) -> int:
        """Highest whole-GPU level any hour reached."""
        return self.levels[-1]

    @property
    def hours_per_replication(self) -> float:
        """Horizon hours each replication covers."""
        return sum(self.hours) / self.replications

    @property
    def mean_gpu_hours(self) -> float:
        """Demanded GPU-hours per replication."""
        return sum(self.gpu_hours) / self.replications

    def always_used_gpus(self) -> int:
        """Whole GPUs in use in every hour: ⌊min demand⌋ (the lowest level j holds demands in
        (j − 1, j], all of them j exactly only when they sum to j per hour)."""
        j, n, s = self.levels[0], self.hours[0], self.gpu_hours[0]
        if j == 0:
            return 0
        return j if s >= j * n - _NOISE_GPUS * n else j - 1

    def excess_gpu_hours(self, gpus: Sequence[int]) -> FloatArray:
        """Per replication, GPU-hours above each whole-GPU commitment level in ``gpus``."""
        c = np.asarray(gpus, dtype=np.float64)
        s_above, n_above = self._above(c)
        excess: FloatArray = np.maximum(0.0, s_above - c * n_above) / self.replications
        return excess

    def share_at_or_below(self, gpus: Sequence[int]) -> FloatArray:
        """F(c): share of hours whose demand is at most c GPUs, for each c in ``gpus``."""
        _, n_above = self._above(np.asarray(gpus, dtype=np.float64))
        share: FloatArray = 1 - n_above / sum(self.hours)
        return share

    def _above(self, c: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Σ s_j and Σ n_j over the levels j > c."""
        n = np.asarray(self.hours, dtype=np.float64)
        s = np.asarray(self.gpu_hours, dtype=np.float64)
        suffix_n = np.concatenate([np.cumsum(n[::-1])[::-1], [0.0]])
        suffix_s = np.concatenate([np.cumsum(s[::-1])[::-1], [0.0]])
        first_above = np.searchsorted(np.asarray(self.levels), c, side="right")
        return suffix_s[first_above], suffix_n[first_above]


def _bins(by_hour: NDArray[np.int64], values: FloatArray
          ) -> tuple[NDArray[np.int64], FloatArray]:
    """Hours and summed demand at each level ``by_hour`` (index = level)."""
    # bincount, not unique: O(hours + peak GPUs) without a sort, once per replication
    counts: NDArray[np.int64] = np.bincount(by_hour, minlength=1)
    sums: FloatArray = np.bincount(by_hour, weights=values, minlength=1).astype(np.float64,
                                                                                copy=False)
    return counts, sums


_Binned = tuple[list[int], list[int], list[float], float]


def _binned(counts: NDArray[np.int64], sums: FloatArray) -> _Binned:
    """The levels :func:`_bins` counted hours at, their hours and summed demand (as Python
    numbers), and the demand summed at level 0 (0.0 where no hour is there)."""
    levels = np.flatnonzero(counts)
    return levels.tolist(), counts[levels].tolist(), sums[levels].tolist(), float(sums[0])


def _histogram(gpu: str, replications: int, binned: _Binned, idle: int) -> DemandHistogram:
    """The histogram of the binned hours (:func:`_binned`), and ``idle`` hours more at no
    demand: level 0 gains them (listed first, with what was summed there)."""
    levels, hours, gpu_hours, at_zero = binned
    if idle:
        if levels and levels[0] == 0:
            hours = [hours[0] + idle, *hours[1:]]
        else:
            levels, hours, gpu_hours = [0, *levels], [idle, *hours], [at_zero, *gpu_hours]
    # ``DemandHistogram(gpu=..., ...)`` through its slots (the frozen dataclass's generated
    # ``__init__`` sets each field by ``object.__setattr__``; a replication makes ~3)
    histogram: DemandHistogram = _NEW(DemandHistogram)
    set_gpu, set_replications, set_levels, set_hours, set_gpu_hours = _SET_HISTOGRAM
    set_gpu(histogram, gpu)
    set_replications(histogram, replications)
    set_levels(histogram, tuple(levels))
    set_hours(histogram, tuple(hours))
    set_gpu_hours(histogram, tuple(gpu_hours))
    return histogram


_NEW = object.__new__
# the slots' setters in field order (unpacked as five by _histogram: a field added fails there)
_SET_HISTOGRAM = tuple(DemandHistogram.__dict__[field.name].__set__
                       for field in dataclasses.fields(DemandHistogram))
