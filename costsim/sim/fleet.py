"""Running a serving fleet hour by hour: replicas for each hour's rate, served share, SLO.

Each hour the autoscaler runs ⌈rate / c_size⌉ replicas (the performance model's sizing rule,
:func:`costsim.perf.sizing.replicas_for_rate`: c_size = min(u · λ_max, λ_SLO)), within
[min, max]. A replica serves up to c_SLO requests/s within the SLO (λ_SLO, or λ_max where no
SLO applies). Replicas added in an hour serve only after the scale-up delay; until then the hour
runs on the previous count. Requests beyond what the running replicas serve within the SLO count
against SLO attainment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from costsim.perf.sizing import replicas_for_rate
from costsim.units import SECONDS_PER_HOUR

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetHours:
    """A fleet's hourly replica counts and what it served."""

    replicas: IntArray
    requests: FloatArray  # requests arriving in each hour
    served_within_slo: FloatArray  # of those, served within the SLO

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
    need: IntArray = np.maximum(replicas_for_rate(rates_per_s, sizing_capacity_per_s),
                                min_replicas).astype(np.int64)
    if max_replicas is not None:
        need = np.minimum(need, max_replicas)
    return need


def fleet_hours(rates_per_s: FloatArray, sizing_capacity_per_s: float,
                service_capacity_per_s: float, min_replicas: int, max_replicas: int | None,
                scale_up_delay_s: float) -> FleetHours:
    """Replica counts, requests and requests served within the SLO, hour by hour."""
    replicas = replicas_for(rates_per_s, sizing_capacity_per_s, min_replicas, max_replicas)
    requests = rates_per_s * SECONDS_PER_HOUR
    running = replicas.astype(np.float64) * service_capacity_per_s
    within = np.minimum(rates_per_s, running)
    served = within * SECONDS_PER_HOUR
    # during the scale-up delay the hour runs on the previous hour's replicas (the first
    # hour on its own): the previous hour's running capacity, the same products
    before = np.concatenate((running[:1], running[:-1]))
    delay_share = min(1.0, scale_up_delay_s / SECONDS_PER_HOUR)
    short = np.maximum(0.0, within - before) * (delay_share * SECONDS_PER_HOUR)
    return FleetHours(replicas=replicas, requests=requests,
                      served_within_slo=np.maximum(0.0, served - short))


def mix_capacity(capacities_per_s: FloatArray, shares: FloatArray) -> float:
    """Requests/s one replica serves of a request mix: the harmonic mean of the per-size
    capacities weighted by share (each request takes 1/capacity replica-seconds)."""
    if np.any(capacities_per_s <= 0):
        raise ValueError("every request size needs a positive capacity")
    return float(1.0 / np.sum(shares / capacities_per_s))
