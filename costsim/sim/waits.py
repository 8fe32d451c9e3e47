"""Experiment queue waits as a fixed-bin histogram with an exact merge.

A replication of a busy queue waits tens of thousands of jobs; keeping one float per job cost
~615 MB per plan at 1,000 replications (issue 20). The waits are kept instead as counts on a
grid fixed in advance, the same for every replication and every process, so pooling
replications adds integer counts: the pooled histogram — and every figure read from it — is the
same however the replications were split over chunks or workers, and in whatever order they
are merged.

The grid (docs/simulator.md "Queue waits"): one bin for the jobs that started on arrival (a
wait ≤ 0 s), and for a positive wait w the bin of its IEEE-754 binary64 exponent and the top
``MANTISSA_BITS`` bits of its significand, i.e. [2^e (1 + j/128), 2^e (1 + (j + 1)/128)). A bin
is 1/128 of its lower edge wide at most (0.78 %), whatever the wait's size (a second or a
year); a wait is read back as its bin's midpoint, within 1/256 (0.39 %) of the true value.
The bin of w is w's bit pattern shifted right, exact and the same on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

MANTISSA_BITS = 7  # bins per octave: 2^7 = 128, each ≤ 0.78 % of its lower edge wide
_SHIFT = 52 - MANTISSA_BITS  # binary64 keeps 52 fraction bits below the exponent
_ZERO = -1  # the key of waits ≤ 0 (no positive float's key is negative)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def _keys(waits_s: FloatArray) -> IntArray:
    """Each wait's bin: -1 for ≤ 0, else its float bits without the low fraction bits."""
    waits = np.ascontiguousarray(waits_s, dtype=np.float64)
    keys: IntArray = np.where(waits > 0, waits.view(np.int64) >> _SHIFT, _ZERO)
    return keys


def _midpoints(keys: IntArray) -> FloatArray:
    """The value a bin reads back as: its midpoint (0 for the bin of waits ≤ 0)."""
    # the lower edge has the key's bits and zeros below; the midpoint sets the next bit
    mid_bits = (keys << _SHIFT) | (1 << (_SHIFT - 1))
    values: FloatArray = np.where(keys == _ZERO, 0.0, mid_bits.view(np.float64))
    return values


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class WaitHistogram:
    """Queue waits of some jobs: ``counts[i]`` jobs in bin ``keys[i]`` (ascending, distinct;
    key -1: waits ≤ 0). Read-only arrays; compares equal when the bins and counts are."""

    keys: IntArray
    counts: IntArray

    @classmethod
    def of(cls, waits_s: FloatArray | Iterable[float]) -> WaitHistogram:
        """The histogram of the waits ``waits_s`` (seconds)."""
        waits = np.asarray(waits_s, dtype=np.float64)
        if waits.size and not (waits > 0).any():  # nobody waited (jobs on their own instances)
            return cls._frozen(np.array([_ZERO], dtype=np.int64),
                               np.array([waits.size], dtype=np.int64))
        keys, counts = np.unique(_keys(waits), return_counts=True)
        return cls._frozen(keys, counts.astype(np.int64))

    @classmethod
    def empty(cls) -> WaitHistogram:
        """No jobs."""
        return cls._frozen(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    @classmethod
    def pooled(cls, parts: Iterable[WaitHistogram]) -> WaitHistogram:
        """The histogram of all the parts' jobs: the counts of each bin added (exact)."""
        parts = list(parts)
        if not parts:
            return cls.empty()
        if len(parts) == 1:  # read-only arrays: the part is its own pool
            return parts[0]
        keys, index = np.unique(np.concatenate([p.keys for p in parts]), return_inverse=True)
        counts = np.zeros(keys.size, dtype=np.int64)
        np.add.at(counts, index, np.concatenate([p.counts for p in parts]))
        return cls._frozen(keys, counts)

    @classmethod
    def _frozen(cls, keys: IntArray, counts: IntArray) -> WaitHistogram:
        keys = np.array(keys, dtype=np.int64)
        counts = np.array(counts, dtype=np.int64)
        keys.flags.writeable = False
        counts.flags.writeable = False
        return cls(keys=keys, counts=counts)

    def merged(self, other: WaitHistogram) -> WaitHistogram:
        """Pooled with another histogram."""
        return WaitHistogram.pooled([self, other])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WaitHistogram):
            return NotImplemented
        return (np.array_equal(self.keys, other.keys)
                and np.array_equal(self.counts, other.counts))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking arrays: not hashable

    @property
    def jobs(self) -> int:
        """Jobs counted."""
        return int(self.counts.sum())

    @property
    def waited(self) -> int:
        """Jobs that waited (a wait > 0 s)."""
        return int(self.counts[self.keys != _ZERO].sum())

    @property
    def max_s(self) -> float:
        """The longest wait, read back as its bin's midpoint (0 with no jobs)."""
        return float(_midpoints(self.keys[-1:])[0]) if self.keys.size else 0.0

    def percentile(self, q: float) -> float:
        """The q-th percentile of the waits as ``numpy.percentile`` computes it (linear
        between the two ranks around q/100 × (jobs − 1)), each rank read back as its bin's
        midpoint: exact when both ranks fall in the bin of waits ≤ 0 (0 s), else within
        0.39 % (module docstring).

        Raises:
            ValueError: no jobs, or q outside [0, 100].
        """
        if not 0 <= q <= 100:
            raise ValueError(f"percentile must be in [0, 100], got {q}")
        jobs = self.jobs
        if jobs == 0:
            raise ValueError("no queue waits to take a percentile of")
        values = _midpoints(self.keys)
        ends = np.cumsum(self.counts)  # rank r (0-based) lies in the first bin with r < end
        at = (jobs - 1) * (q / 100)
        below = math.floor(at)
        low = float(values[int(np.searchsorted(ends, below, side="right"))])
        high = float(values[int(np.searchsorted(ends, min(below + 1, jobs - 1), side="right"))])
        # numpy's linear method (numpy.lib._function_base_impl._lerp), so that waits read
        # back as the same values give numpy's figure
        t = at - below
        diff = high - low
        return float(high - diff * (1 - t) if t >= 0.5 else low + diff * t)
