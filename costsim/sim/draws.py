"""Draw values of an uncertainty distribution from a named stream: one, or a block."""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from costsim.domain.uncertainty import (
    Distribution,
    Fixed,
    LogNormal,
    Normal,
    Triangular,
    Uniform,
)
from costsim.sim.streams import StreamKey, named_rng, named_rng_of, stream_key


def draw(dist: Distribution, rng: np.random.Generator) -> float:
    """One sample of ``dist`` (a Fixed value consumes no random numbers)."""
    if isinstance(dist, Fixed):
        return dist.value
    if isinstance(dist, Normal):
        value = float(rng.normal(dist.mean, dist.sd))
        low = -np.inf if dist.low is None else dist.low
        high = np.inf if dist.high is None else dist.high
        return float(min(max(value, low), high))
    if isinstance(dist, LogNormal):
        return float(dist.median * np.exp(dist.sigma * rng.standard_normal()))
    if isinstance(dist, Uniform):
        return float(rng.uniform(dist.low, dist.high))
    if isinstance(dist, Triangular):
        if dist.low == dist.high:
            return dist.low
        return float(rng.triangular(dist.low, dist.mode, dist.high))
    raise TypeError(f"unknown distribution {dist!r}")


def draw_many(dist: Distribution, rng: np.random.Generator, n: int) -> NDArray[np.float64]:
    """``n`` samples of ``dist`` in one call: the same numbers, in the same order, as ``n``
    calls of :func:`draw` on the same generator (numpy's Generator draws an array element by
    element with the scalar algorithm; tests/sim/test_draws.py checks every distribution)."""
    if isinstance(dist, Fixed):
        return np.full(n, float(dist.value))
    if isinstance(dist, Normal):
        low = -np.inf if dist.low is None else dist.low
        high = np.inf if dist.high is None else dist.high
        values: NDArray[np.float64] = np.minimum(
            np.maximum(rng.normal(dist.mean, dist.sd, size=n), low), high)
        return values
    if isinstance(dist, LogNormal):
        return np.asarray(dist.median * np.exp(dist.sigma * rng.standard_normal(size=n)),
                          dtype=np.float64)
    if isinstance(dist, Uniform):
        return rng.uniform(dist.low, dist.high, size=n)
    if isinstance(dist, Triangular):
        if dist.low == dist.high:
            return np.full(n, float(dist.low))
        return rng.triangular(dist.low, dist.mode, dist.high, size=n)
    raise TypeError(f"unknown distribution {dist!r}")


# One draw per (stream, distribution): every plan of a replication draws the same uncertainty
# values from the same named streams (that is how plans share futures), so the value drawn for
# the first plan is kept for the others. Bounded like the stream seeds (a few thousand
# replications); a miss draws again from the same stream, the same value.
_DRAWS_KEPT = 2**15


@functools.lru_cache(maxsize=_DRAWS_KEPT)
def _cached_draw(dist: Distribution, key: StreamKey) -> float:
    return draw(dist, named_rng_of(key))


def draw_named(dist: Distribution, root: np.random.SeedSequence, *names: str) -> float:
    """One sample of ``dist`` from the stream ``names`` under ``root``: the first value of
    that stream, the same for every plan that asks (memoized)."""
    if isinstance(dist, Fixed):
        return dist.value
    key = stream_key(root, names)
    if key is None:
        return draw(dist, named_rng(root, *names))
    return _cached_draw(dist, key)
