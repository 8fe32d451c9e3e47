"""Serving replicas on spot: reclaims hour by hour, the capacity they take away, its cost in SLO.

A spot replica is reclaimed at the pool's hazard h per second
(:meth:`costsim.sim.pools.RentalPool.spot_hazard_per_s` for the replica's GPUs: the hazard per
instance-hour × its whole instances × the replication's factor, the rule training and
experiment runs use). Hourly granularity: the reclaims of hour t are Poisson with mean
h · 3,600 s · R_t over the R_t spot replicas the hour runs, so

    E[reclaims] = h · 3,600 · Σ_t R_t = hazard per replica-hour × spot replica-hours.

Each reclaim takes its replica away for the reacquire delay D (catalog ``spot_reacquire_s``),
counted from the start of its hour (for D > 1 h it runs on into the next hours), at most every
spot replica of an hour. Without a fallback that capacity is missing: the missing replica-seconds
M_t are spread over the hour as evenly as whole replicas allow (m = M_t / 3,600 missing on
average: ⌊m⌋ for part 1 − (m − ⌊m⌋) of the hour, ⌈m⌉ for the rest), and the requests the
remaining replicas cannot serve within the SLO are lost to SLO attainment; for one reclaim at a
time (m ≤ 1) that is exactly D × what the last replica served. With an on-demand ``fallback``
the replica is replaced there at once for the gap (billed there, no capacity lost). The
reclaimed spot instance is not billed while it is gone (as for training, docs/simulator.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from costsim.units import SECONDS_PER_HOUR

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotReclaims:
    """The reclaims of a spot fleet's replicas, hour by hour."""

    reclaims: IntArray  # reclaims drawn in each hour
    missing_replica_s: FloatArray  # replica-seconds of spot capacity gone in each hour

    @property
    def missing_replicas(self) -> FloatArray:
        """Replicas missing on average in each hour."""
        return self.missing_replica_s / SECONDS_PER_HOUR


def expected_reclaims(spot_replica_hours: float, hazard_per_replica_s: float) -> float:
    """The closed form the draws follow: hazard per replica-hour × spot replica-hours."""
    return hazard_per_replica_s * SECONDS_PER_HOUR * spot_replica_hours


def spot_reclaims(spot_replicas: FloatArray, hazard_per_replica_s: float, reacquire_s: float,
                  rng: np.random.Generator) -> SpotReclaims:
    """Draw each hour's reclaims of ``spot_replicas`` (a count per hour) and the replica-seconds
    they take away (module docstring)."""
    hours = spot_replicas.size
    if hours == 0 or hazard_per_replica_s <= 0:
        return SpotReclaims(reclaims=np.zeros(hours, dtype=np.int64),
                            missing_replica_s=np.zeros(hours))
    reclaims = rng.poisson(hazard_per_replica_s * SECONDS_PER_HOUR
                           * np.maximum(spot_replicas, 0.0)).astype(np.int64)
    # a reclaim at the start of hour t is gone for D: whole hours, then the rest of D
    full, rest = divmod(max(0.0, reacquire_s), SECONDS_PER_HOUR)
    kernel = np.array([SECONDS_PER_HOUR] * int(full) + ([rest] if rest > 0 else []))
    if kernel.size == 0:
        missing = np.zeros(hours)
    else:
        missing = np.convolve(reclaims.astype(np.float64), kernel)[:hours]
    missing = np.minimum(missing, np.maximum(spot_replicas, 0.0) * SECONDS_PER_HOUR)
    return SpotReclaims(reclaims=reclaims, missing_replica_s=missing)


def requests_lost(rates_per_s: FloatArray, replicas: FloatArray, missing_replicas: FloatArray,
                  service_capacity_per_s: float) -> FloatArray:
    """Requests per hour the fleet of ``replicas`` (c requests/s each within the SLO) no longer
    serves within the SLO when ``missing_replicas`` of them are gone on average over the hour,
    spread as evenly as whole replicas allow (module docstring)."""
    c = service_capacity_per_s
    whole = np.floor(missing_replicas)
    part = missing_replicas - whole

    def served(running: FloatArray) -> FloatArray:
        return np.minimum(rates_per_s, np.maximum(running, 0.0) * c)

    kept = (1.0 - part) * served(replicas - whole) + part * served(replicas - whole - 1.0)
    return np.maximum(0.0, served(replicas) - kept) * SECONDS_PER_HOUR
