"""The serving GPU mix: a Mélange-style integer program (Griggs et al., arXiv 2404.14527;
docs/optimizer.md "Serving GPU mix").

Request-size buckets k (share p_k of the rate λ) × GPU types j. One replica of type j serves
c_kj requests/s of bucket k under the performance model's sizing rule (0: it cannot) and costs
h_j $/h (GPUs per replica × $/GPU-h). The load of bucket k on type j is L_kj = λ·p_k / c_kj
replicas. With integer replicas y_j ≥ 0 and the share x_kj ∈ [0, 1] of bucket k sent to type j:

    min Σ_j h_j·y_j   s.t.   Σ_j x_kj = 1 ∀k,   Σ_k L_kj·x_kj ≤ y_j ∀j.

Mélange makes x binary over slices of each bucket (``slice_factor``); a continuous x is the
limit of fine slices and keeps the program small. Solved with ``scipy.optimize.milp`` (HiGHS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from costsim.errors import InfeasibleError
from costsim.perf.sizing import replicas_for_rate
from costsim.sim.fleet import mix_capacity

# HiGHS returns integers within its tolerance (1e-6): round them, then check the loads fit with
# the same slack (a load of 3 + 1e-9 replicas on 3 replicas is a float artefact, not a shortfall).
_FIT_TOLERANCE = 1e-6


@dataclass(frozen=True, slots=True, kw_only=True)
class MixInstance:
    """The program's data: GPU types, buckets, replica capacities and prices."""

    gpus: tuple[str, ...]
    gpus_per_replica: tuple[int, ...]
    usd_per_gpu_hour: tuple[float, ...]
    usd_per_replica_hour: tuple[float, ...]  # as billed: whole instances where they are rented
    bucket_shares: tuple[float, ...]
    # capacity_requests_per_s[j][k]: requests/s of bucket k one replica of gpus[j] is sized for
    capacity_requests_per_s: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        types, buckets = len(self.gpus), len(self.bucket_shares)
        if types == 0 or buckets == 0:
            raise ValueError("a mix needs at least one GPU type and one request bucket")
        if (len(self.gpus_per_replica) != types or len(self.usd_per_replica_hour) != types
                or len(self.usd_per_gpu_hour) != types
                or len(self.capacity_requests_per_s) != types
                or any(len(row) != buckets for row in self.capacity_requests_per_s)):
            raise ValueError("per-type data must have one entry per GPU type and bucket")
        if any(not (h >= 0 and np.isfinite(h))
               for h in (*self.usd_per_replica_hour, *self.usd_per_gpu_hour)):
            raise ValueError("prices must be finite and >= 0")
        if any(c < 0 or not np.isfinite(c) for row in self.capacity_requests_per_s for c in row):
            raise ValueError("capacities must be finite and >= 0")

    def capacities(self) -> np.ndarray:
        """c as a (types × buckets) array."""
        return np.array(self.capacity_requests_per_s, dtype=np.float64)


@dataclass(frozen=True, slots=True, kw_only=True)
class SingleTypeFleet:
    """All buckets on one GPU type: ⌈λ / mix capacity⌉ replicas."""

    gpu: str
    replicas: int
    cost_usd_per_hour: float


@dataclass(frozen=True, slots=True, kw_only=True)
class MixSolution:
    """The cheapest mix at one request rate, and the best single GPU type for comparison."""

    rate_requests_per_s: float
    gpus: tuple[str, ...]
    replicas: tuple[int, ...]  # per GPU type, in ``gpus`` order
    assignment: tuple[tuple[float, ...], ...]  # [k][j]: share of bucket k sent to gpus[j]
    cost_usd_per_hour: float
    best_single: SingleTypeFleet | None  # None: no single type serves every bucket

    @property
    def savings_vs_single(self) -> float | None:
        """1 − mix cost ÷ best single-type cost (None without a single type, or at $0)."""
        if self.best_single is None or self.best_single.cost_usd_per_hour <= 0:
            return None
        return 1.0 - self.cost_usd_per_hour / self.best_single.cost_usd_per_hour


def single_type_fleets(instance: MixInstance, rate_requests_per_s: float
                       ) -> tuple[SingleTypeFleet, ...]:
    """Each GPU type that serves every bucket, sized alone as the simulator sizes one entry:
    ⌈λ / harmonic-mean capacity⌉ (:func:`costsim.sim.fleet.mix_capacity`)."""
    shares = np.array(instance.bucket_shares, dtype=np.float64)
    fleets = []
    for j, gpu in enumerate(instance.gpus):
        caps = instance.capacities()[j]
        if np.any(caps <= 0):
            continue
        replicas = int(replicas_for_rate(rate_requests_per_s, mix_capacity(caps, shares)))
        fleets.append(SingleTypeFleet(gpu=gpu, replicas=replicas,
                                      cost_usd_per_hour=replicas *
                                      instance.usd_per_replica_hour[j]))
    return tuple(fleets)


def solve_mix(instance: MixInstance, rate_requests_per_s: float) -> MixSolution:
    """The cheapest integer fleet that serves ``rate_requests_per_s`` split over the buckets.

    Raises:
        InfeasibleError: some bucket is served by no GPU type.
        ValueError: a negative or non-finite rate.
    """
    if not (rate_requests_per_s >= 0 and np.isfinite(rate_requests_per_s)):
        raise ValueError(f"rate must be finite and >= 0, got {rate_requests_per_s}")
    caps = instance.capacities()
    types, buckets = caps.shape
    unserved = [k for k in range(buckets) if not np.any(caps[:, k] > 0)]
    if unserved:
        raise InfeasibleError(f"request buckets {unserved} are served by none of "
                              f"{', '.join(instance.gpus)} within the SLO")
    shares = np.array(instance.bucket_shares, dtype=np.float64)
    with np.errstate(divide="ignore"):
        load = np.where(caps > 0, rate_requests_per_s * shares[None, :] / caps, 0.0)  # [j, k]
    # variables: y_0..y_{T-1}, then x[k, j] at T + k·T + j
    n = types + buckets * types
    cost = np.concatenate([np.array(instance.usd_per_replica_hour), np.zeros(buckets * types)])
    upper = np.concatenate([np.full(types, np.inf), np.where(caps.T > 0, 1.0, 0.0).ravel()])
    serve_all = np.zeros((buckets, n))
    fit = np.zeros((types, n))
    for k in range(buckets):
        serve_all[k, types + k * types: types + (k + 1) * types] = 1.0
        for j in range(types):
            fit[j, types + k * types + j] = load[j, k]
    for j in range(types):
        fit[j, j] = -1.0
    result = milp(cost, integrality=np.concatenate([np.ones(types), np.zeros(buckets * types)]),
                  bounds=Bounds(np.zeros(n), upper),
                  constraints=[LinearConstraint(serve_all, 1.0, 1.0),
                               LinearConstraint(fit, -np.inf, 0.0)])
    if not result.success or result.x is None:  # every bucket has a server: cannot happen
        raise InfeasibleError(f"the serving-mix program found no solution: {result.message}")
    replicas = np.rint(result.x[:types]).astype(np.int64)
    assignment = np.clip(result.x[types:].reshape(buckets, types), 0.0, 1.0)
    assignment /= assignment.sum(axis=1, keepdims=True)
    used = (load.T * assignment).sum(axis=0)
    if np.any(used > replicas + _FIT_TOLERANCE):
        raise InfeasibleError("the serving-mix program returned an assignment that overloads "
                              "its replicas")
    singles = single_type_fleets(instance, rate_requests_per_s)
    best = min(singles, key=lambda s: s.cost_usd_per_hour) if singles else None
    return MixSolution(
        rate_requests_per_s=rate_requests_per_s, gpus=instance.gpus,
        replicas=tuple(int(r) for r in replicas),
        assignment=tuple(tuple(float(v) for v in row) for row in assignment),
        cost_usd_per_hour=float(np.dot(replicas, instance.usd_per_replica_hour)),
        best_single=best)


def solve_levels(instance: MixInstance, rates_requests_per_s: Sequence[float]
                 ) -> tuple[MixSolution, ...]:
    """:func:`solve_mix` at each load level (e.g. trough, median, peak)."""
    return tuple(solve_mix(instance, rate) for rate in rates_requests_per_s)
