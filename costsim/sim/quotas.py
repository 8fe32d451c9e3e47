"""GPU quotas applied to a plan's pools (DESIGN §13 ``quotas:``; docs/simulator.md "Quotas").

A fixed count (a training run's GPUs, a reservation, a fixed experiment fleet) over the quota
that applies to its pool makes the plan infeasible with the reason; an elastic fleet (serving
autoscale, elastic experiment jobs) is capped at the quota, so what it cannot run shows as lost
SLO attainment or queue waits. Each phase is capped on its own: two phases running at once on
the same quota are each allowed all of it (a simplification, documented). Rented GPUs count as
the whole instances held; owned servers are under no cloud quota.
"""

from __future__ import annotations

import heapq

import numpy as np
from numpy.typing import NDArray

from costsim.domain.pricing import PurchaseOption
from costsim.domain.quotas import Quota, binding_quota
from costsim.domain.scenario import Scenario
from costsim.sim.pools import CommitmentPool, RentalPool


def pool_quota(scenario: Scenario, pool: RentalPool | CommitmentPool) -> Quota | None:
    """The quota that binds ``pool`` (its offering's cloud and region), or None."""
    return binding_quota(scenario.quotas, cloud=pool.offering.cloud,
                         region=pool.offering.region, gpu=pool.gpu, option=pool.option)


def over_quota(scenario: Scenario, pool: RentalPool | CommitmentPool, gpus: int,
               where: str) -> str | None:
    """The reason a fixed ``gpus`` on ``pool`` breaks its quota, or None when it fits."""
    quota = pool_quota(scenario, pool)
    if quota is None or gpus <= quota.max_gpus:
        return None
    option = "reserved" if pool.option.is_reserved else pool.option.value
    return (f"{where}: {gpus} {pool.gpu} on {pool.offering.cloud} {pool.offering.region} "
            f"{option} exceeds {quota.describe()}")


def quota_units(scenario: Scenario, pool: RentalPool | CommitmentPool | None,
                gpus_per_unit: int) -> int | None:
    """How many units of ``gpus_per_unit`` GPUs (replicas, jobs) the quota lets run at once on
    ``pool``: ⌊max_gpus ÷ GPUs held per unit⌋; None when no quota applies."""
    if pool is None or (isinstance(pool, RentalPool) and pool.option is PurchaseOption.OWNED):
        return None
    quota = pool_quota(scenario, pool)
    if quota is None:
        return None
    held = pool.gpus_paid_for(gpus_per_unit) if isinstance(pool, RentalPool) else gpus_per_unit
    return quota.max_gpus // held


def queued_starts(arrivals_s: NDArray[np.float64], held_s: NDArray[np.float64],
                  slots: int) -> NDArray[np.float64]:
    """First-come first-served start times of jobs on at most ``slots`` at once (a capped
    elastic pool): job i starts at max(its arrival, the earliest time one of the slots
    frees)."""
    starts = np.empty_like(arrivals_s)
    free: list[float] = []  # finish times of the running jobs
    for i in np.argsort(arrivals_s, kind="stable"):
        start = float(arrivals_s[i])
        if len(free) >= slots:
            start = max(start, heapq.heappop(free))
        starts[i] = start
        heapq.heappush(free, start + float(held_s[i]))
    return starts
