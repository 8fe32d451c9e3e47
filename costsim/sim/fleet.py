"""Running a serving fleet hour by hour: replicas for each hour's rate, served share, SLO.

Each hour the autoscaler runs ⌈rate / c_size⌉ replicas (the performance model's sizing rule,
:func:`costsim.perf.sizing.replicas_for_rate`: c_size = min(u · λ_max, λ_SLO)), within
[min, max]; the simulator passes the c_size a load-based autoscaler observes (the replication's
drawn capacity, :meth:`costsim.sim.serving_prep.ServingEntryPrep.sizing_capacity_at`). A
replica serves up to c_SLO requests/s within the SLO (λ_SLO, or λ_max where no SLO applies).
Replicas added in an hour serve only after the scale-up delay; until then the hour runs on the
previous count. Requests beyond what the running replicas serve within the SLO count against
SLO attainment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from costsim.perf.sizing import MAX_REPLICAS, RATIO_TOLERANCE, replicas_for_rate
from costsim.units import SECONDS_PER_HOUR

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetHours:
    """A fleet's hourly replica counts and what it served."""

    replica_counts: FloatArray  # replicas in each hour, whole numbers in float64
    requests: FloatArray  # requests arriving in each hour
    served_within_slo: FloatArray  # of those, served within the SLO

    @property
    def replicas(self) -> IntArray:
        """:attr:`replica_counts` as integers (a new array each call: the simulator works on
        the float counts, exact for whole numbers up to 2^53)."""
        return self.replica_counts.astype(np.int64)

    @property
    def replica_hours(self) -> float:
        """Replica-hours paid (each hour's replicas for the whole hour)."""
        return float(self.replicas.sum())

    @property
    def slo_attainment(self) -> float:
        """Share of requests served within the SLO (1 when there were none)."""
        total = float(self.requests.sum())
        return float(self.served_within_slo.sum()) / total if total > 0 else 1.0


def replicas_for(rates_per_s: FloatArray, sizing_capacity_per_s: float, min_replicas: int,
                 max_replicas: int | None) -> IntArray:
    """Replicas the autoscaler runs for each hour's rate, clipped to [min, max]."""
    return replica_counts(rates_per_s, sizing_capacity_per_s, min_replicas,
                          max_replicas).astype(np.int64)


def replica_counts(rates_per_s: FloatArray, sizing_capacity_per_s: float, min_replicas: int,
                   max_replicas: int | None) -> FloatArray:
    """:func:`replicas_for` as whole numbers in float64 (exact: at most
    :data:`~costsim.perf.sizing.MAX_REPLICAS`), computed in one array: ⌈rate / c · (1 − ε)⌉
    of :func:`~costsim.perf.sizing.replicas_for_rate` (the same operations and checks), raised
    to 1 where the rate is positive and to ``min_replicas``, then cut to ``max_replicas``.
    Raising to min ≥ 1 covers the "a positive rate needs a replica" rule, so that pass is
    made only when min is 0 (tests/sim/test_load_fleet.py compares it with the two steps)."""
    if not (sizing_capacity_per_s > 0 and math.isfinite(sizing_capacity_per_s)):
        replicas_for_rate(rates_per_s, sizing_capacity_per_s)  # raises its error
    rates = np.asarray(rates_per_s, dtype=np.float64)
    if rates.size:
        highest = rates.max()
        if not (rates.min() >= 0 and math.isfinite(highest)):
            replicas_for_rate(rates, sizing_capacity_per_s)  # raises its error
        # the counts' maximum without a pass over them: dividing by c > 0 and multiplying by
        # 1 − ε > 0 are monotone in float rounding, so the largest rate gives the largest count
        if highest / sizing_capacity_per_s * (1.0 - RATIO_TOLERANCE) > MAX_REPLICAS:
            replicas_for_rate(rates, sizing_capacity_per_s)  # raises its error
    counts: FloatArray = rates / sizing_capacity_per_s
    counts *= 1.0 - RATIO_TOLERANCE
    np.ceil(counts, out=counts)
    if min_replicas >= 1:
        np.maximum(counts, float(min_replicas), out=counts)
    else:
        np.maximum(counts, rates > 0, out=counts)
        np.maximum(counts, float(min_replicas), out=counts)
    if max_replicas is not None:
        np.minimum(counts, float(max_replicas), out=counts)
    return counts


def fleet_hours(rates_per_s: FloatArray, sizing_capacity_per_s: float,
                service_capacity_per_s: float, min_replicas: int, max_replicas: int | None,
                scale_up_delay_s: float) -> FleetHours:
    """Replica counts, requests and requests served within the SLO, hour by hour."""
    counts = replica_counts(rates_per_s, sizing_capacity_per_s, min_replicas, max_replicas)
    return FleetHours(replica_counts=counts, requests=rates_per_s * SECONDS_PER_HOUR,
                      served_within_slo=served_hours(rates_per_s, counts,
                                                     service_capacity_per_s, scale_up_delay_s))


def served_hours(rates_per_s: FloatArray, replicas: FloatArray, service_capacity_per_s: float,
                 scale_up_delay_s: float) -> FloatArray:
    """Requests served within the SLO in each hour by ``replicas`` (each serving
    ``service_capacity_per_s`` within the SLO; replicas added in an hour serve after the
    scale-up delay): what the autoscaler's counts serve, or what a fixed pool's share of
    them serves when it cannot run them all."""
    running = replicas * service_capacity_per_s
    within = np.minimum(rates_per_s, running)
    # during the scale-up delay the hour runs on the previous hour's replicas (the first
    # hour on its own): the previous hour's running capacity, the same products
    short = np.empty_like(within)
    if short.size:
        short[0] = within[0] - running[0]
        np.subtract(within[1:], running[:-1], out=short[1:])
    delay_share = min(1.0, scale_up_delay_s / SECONDS_PER_HOUR)
    np.maximum(0.0, short, out=short)
    short *= delay_share * SECONDS_PER_HOUR
    served = np.multiply(within, SECONDS_PER_HOUR, out=within)  # within is not read again
    served -= short
    np.maximum(0.0, served, out=served)
    return served


def mix_capacity(capacities_per_s: FloatArray, shares: FloatArray) -> float:
    """Requests/s one replica serves of a request mix: the harmonic mean of the per-size
    capacities weighted by share (each request takes 1/capacity replica-seconds)."""
    if np.any(capacities_per_s <= 0):
        raise ValueError("every request size needs a positive capacity")
    return float(1.0 / np.sum(shares / capacities_per_s))
