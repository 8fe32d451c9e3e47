"""The time–cost Pareto front: which points no other point beats on both axes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray


def pareto_mask(times: Sequence[float], costs: Sequence[float]) -> NDArray[np.bool_]:
    """True where no other point is at least as fast and as cheap and better in one."""
    t = np.asarray(times, dtype=np.float64)
    c = np.asarray(costs, dtype=np.float64)
    if t.size == 0:
        return np.zeros(0, dtype=bool)
    no_worse = (t[:, None] <= t[None, :]) & (c[:, None] <= c[None, :])
    better = (t[:, None] < t[None, :]) | (c[:, None] < c[None, :])
    dominated = (no_worse & better).any(axis=0)  # [i, j]: i dominates j
    return np.asarray(~dominated)
