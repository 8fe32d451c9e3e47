"""Draw one value of an uncertainty distribution from a named stream."""

from __future__ import annotations

import numpy as np

from costsim.domain.uncertainty import (
    Distribution,
    Fixed,
    LogNormal,
    Normal,
    Triangular,
    Uniform,
)


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
