"""A serving phase's fleet, sized once per plan: replica size and capacity at the SLO per GPU
type, and the routing of request sizes to GPU types.

A replica is sized by the performance model's rule (:mod:`costsim.perf.sizing`: the SLO given,
else the default interactive one, and the target utilization); :func:`replica_capacities` is
the one place a replica's per-bucket capacities come from (the serving-mix optimizer asks it
too). Routing: where the plan gives ``traffic`` shares f_jk (the optimizer writes the serving-mix
program's), entry j serves the share f_jk of bucket k; otherwise each request size (bucket) goes
whole to the fleet entry that serves it at the lowest cost per request (price per GPU-hour × GPUs
per replica ÷ requests/s a replica is sized for): the ground on which many small cards can beat
a few large ones. An entry's load share is Σ_k p_k·f_jk and its capacity for its mix of sizes
the harmonic mean weighted by p_k·f_jk (:func:`costsim.sim.fleet.mix_capacity`), so each hour
the autoscaler runs ⌈Σ_k λ·p_k·f_jk / c_jk⌉ replicas of it: the program's fit constraint.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from costsim.catalog.gpus import get_gpu
from costsim.catalog.prices import PriceBook
from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.measurements import Basis, ServingPoint
from costsim.domain.performance import PerfDefaults
from costsim.domain.phases import RequestBucket, ServingPhase
from costsim.domain.plans import Plan, UseEntry
from costsim.domain.scenario import Scenario
from costsim.domain.simulation import SimAssumptions
from costsim.errors import CostsimError
from costsim.perf.measured_serving import matching_points, measured_capacity, measured_tp
from costsim.perf.serving import estimate_serving
from costsim.perf.sizing import ReplicaCapacity, capacity_under_rule, sizing_rule
from costsim.sim.capacity import EntrySource, entry_source
from costsim.sim.fleet import mix_capacity
from costsim.sim.memo import Same
from costsim.sim.pools import CommitmentPool, RentalPool
from costsim.sim.quotas import pool_quota, quota_units


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingEntryPrep:
    """One GPU type of a serving fleet and the requests routed to it."""

    source: EntrySource
    gpus_per_replica: int
    sizing_capacity_s: float  # requests/s a replica is sized for (the sizing rule), predicted
    service_capacity_s: float  # requests/s a replica serves within the SLO
    request_share: float  # share of all requests routed here
    prompt_tokens: float  # mean per routed request
    output_tokens: float
    min_replicas: int
    max_replicas: int | None
    scale_up_delay_s: float
    # share of the entry's service work (requests / capacity) on predicted capacities: the
    # model's throughput error applies to those only (DESIGN §12), see service_capacity_at
    predicted_share: float = 1.0
    # the same share of its sizing work (requests / sizing capacity), see sizing_capacity_at
    sizing_predicted_share: float = 1.0
    # (request size, basis, source) of each routed bucket whose capacity was measured
    measured: tuple[tuple[str, str, str], ...] = ()
    # replicas the pool's GPU quota lets run at once (None: no quota applies); max_replicas
    # is already capped at it, the optimizer's bounds must stay under it too
    quota_replicas: int | None = None

    def service_capacity_at(self, throughput_error: float) -> float:
        """The service capacity under a drawn throughput error factor t: predicted capacities
        are scaled by t, measured ones are not. With a predicted share f of the work,
        1/c(t) = (1 − f)/c + f/(c·t) (the harmonic mix of :func:`mix_capacity`)."""
        return _at_error(self.service_capacity_s, self.predicted_share, throughput_error)

    def sizing_capacity_at(self, throughput_error: float) -> float:
        """The requests/s per replica a load-based autoscaler settles at when the engine
        serves at the drawn error factor t: the sizing rule's capacity (min(u·λ_max, λ_SLO),
        both scaled by t where predicted) with the sizing work's predicted share scaled as in
        :meth:`service_capacity_at`; measured capacities as measured (DESIGN §12)."""
        return _at_error(self.sizing_capacity_s, self.sizing_predicted_share, throughput_error)


def _at_error(capacity_s: float, predicted_share: float, throughput_error: float) -> float:
    """A mix's capacity whose predicted share f of the work runs at t times its prediction:
    1/c(t) = (1 − f)/c + f/(c·t)."""
    if predicted_share >= 1.0:
        return capacity_s * throughput_error
    if predicted_share <= 0.0:
        return capacity_s
    return capacity_s / (1.0 - predicted_share + predicted_share / throughput_error)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaCapacities:
    """One replica of a GPU type serving a phase: its size and its capacity per request bucket,
    with the basis of each capacity (DESIGN §12) and the measured rows it rests on."""

    gpus_per_replica: int
    sizing_requests_per_s: tuple[float, ...]  # what sizing divides the rate by, per bucket
    service_requests_per_s: tuple[float, ...]  # what it serves within the SLO, per bucket
    basis: tuple[Basis, ...] = field(default=())  # per bucket; empty: all predicted
    profile_source: tuple[str, ...] = field(default=())  # per bucket ("" when predicted)

    def bucket_basis(self, j: int) -> Basis:
        """The basis of bucket ``j``'s capacity."""
        return self.basis[j] if self.basis else Basis.PREDICTED


def replica_capacities(arch: Architecture, gpu: GpuSpec, phase: ServingPhase,
                       defaults: PerfDefaults, *, target_utilization: float | None = None,
                       measured: Sequence[ServingPoint] = ()) -> ReplicaCapacities:
    """Size one replica of ``gpu`` for each of the phase's request buckets under the
    performance model's sizing rule (the phase's SLO, else the default one; ``target_utilization``
    or the default u), from the ``measured`` points that match the case where there are any
    (:mod:`costsim.perf.measured_serving`: a measured replica keeps its measured TP).

    Memoized (:mod:`costsim.sim.memo`): the optimizer sizes the same replica for every probe,
    the serving-mix program and every candidate plan that runs the phase on ``gpu``. The key is
    the phase itself without its ``after`` links (a probe drops them; sizing never reads them),
    so the cold computation is a function of its key alone; a failure is not memoized.

    Raises:
        CostsimError: the model cannot be served on ``gpu`` (it does not fit, bad precision).
    """
    return _replica_capacities(arch, gpu, sizing_phase(phase), Same(defaults),
                               target_utilization, tuple(measured))


def sizing_phase(phase: ServingPhase) -> ServingPhase:
    """The phase as replica sizing keys it: without its ``after`` links."""
    return phase if not phase.after else dataclasses.replace(phase, after=())


# Distinct replicas kept: (GPU type × serving phase × utilization) of a search or a sweep's
# variants; each entry is a few hundred bytes
_REPLICAS_KEPT = 4096


@functools.lru_cache(maxsize=_REPLICAS_KEPT)
def _replica_capacities(arch: Architecture, gpu: GpuSpec, phase: ServingPhase,
                        same_defaults: Same[PerfDefaults], target_utilization: float | None,
                        measured: tuple[ServingPoint, ...]) -> ReplicaCapacities:
    defaults = same_defaults.value
    precision = phase.precision or gpu.default_precision
    rule = sizing_rule(defaults.serving, slo_ttft_s=phase.slo.ttft_p95_s,
                       slo_tpot_s=phase.slo.tpot_p95_s, target_utilization=target_utilization)
    match = matching_points(measured, arch=arch, model=phase.model, gpu=gpu.name,
                            engine=phase.engine, precision=precision,
                            default_precision=gpu.default_precision, quant=phase.quant,
                            tp=None)
    fixed_tp = measured_tp(match)

    def predicted(prompt: float, output: float) -> tuple[ReplicaCapacity, float, int]:
        est = estimate_serving(
            arch, gpu, engine=phase.engine, precision=precision, quant=phase.quant,
            kv_dtype=phase.kv_dtype, prompt_tokens=max(1, round(prompt)),
            output_tokens=max(1, round(output)), batch=1, tp=fixed_tp,
            rate_requests_per_s=None, slo_ttft_s=rule.slo_ttft_p95_s,
            slo_tpot_s=rule.slo_tpot_p95_s, price_usd_per_gpu_hour=0.0,
            assumptions=defaults.serving)
        return (capacity_under_rule(est.max_requests_per_s,
                                    est.max_requests_per_s_at_slo or 0.0, rule),
                est.max_requests_per_s, est.gpus_per_replica)

    sizing: list[float] = []
    service: list[float] = []
    bases: list[Basis] = []
    sources: list[str] = []
    tp = 0
    for bucket in phase.requests:
        sized, max_rps, tp = predicted(bucket.prompt_tokens, bucket.output_tokens)
        found = measured_capacity(
            tuple(p for p in match if p.tp is None or p.tp == tp), bucket.prompt_tokens,
            bucket.output_tokens, rule, lambda p, o: predicted(p, o)[0]) if match else None
        if found is not None:
            sized, max_rps = found.capacity, found.capacity.max_requests_per_s
        bases.append(Basis.PREDICTED if found is None else found.basis)
        sources.append("" if found is None else found.profile_source)
        sizing.append(sized.requests_per_s)
        # where the default SLO cannot be met the fleet runs without one (sized by u)
        service.append(sized.at_slo_requests_per_s if sized.slo_met
                       else max_rps if sized.requests_per_s > 0 else 0.0)
    measured_any = any(b is not Basis.PREDICTED for b in bases)
    return ReplicaCapacities(gpus_per_replica=tp, sizing_requests_per_s=tuple(sizing),
                             service_requests_per_s=tuple(service),
                             basis=tuple(bases) if measured_any else (),
                             profile_source=tuple(sources) if measured_any else ())


def prepare_serving(scenario: Scenario, plan: Plan, phase: ServingPhase,
                    entries: Sequence[UseEntry], book: PriceBook, defaults: PerfDefaults,
                    sim_defaults: SimAssumptions,
                    reasons: list[str]) -> tuple[ServingEntryPrep, ...] | None:
    """Size each fleet entry and route the request buckets; None (with reasons) when the model
    cannot be served within the SLO by the plan's fleet."""
    where = f"plan '{plan.name}', phase '{phase.name}'"
    arch = scenario.model(phase.model).architecture
    buckets = phase.requests
    capacity = np.zeros((len(entries), len(buckets)))  # sizing capacity per replica
    service = np.zeros((len(entries), len(buckets)))  # within the SLO
    tp = [0] * len(entries)
    replicas: list[ReplicaCapacities | None] = []  # basis and sources per bucket (DESIGN §12)
    sources: list[EntrySource | None] = []
    for i, entry in enumerate(entries):
        try:
            gpu = get_gpu(entry.gpu, source=f"plans.{plan.name}.use.{phase.name}.gpu")
            auto = entry.autoscale
            replica = replica_capacities(arch, gpu, phase, defaults, target_utilization=(
                auto.target_utilization if auto else None),
                measured=scenario.measurements.serving)
        except CostsimError as error:
            reasons.append(f"{where}, {entry.gpu}: {error}")
            sources.append(None)
            replicas.append(None)
            continue
        replicas.append(replica)
        capacity[i] = replica.sizing_requests_per_s
        service[i] = replica.service_requests_per_s
        tp[i] = replica.gpus_per_replica
        sources.append(entry_source(scenario, plan, phase.name, entry, tp[i], book, reasons))
    if use_traffic(entries):
        routing = _traffic_routing(entries, capacity, sources, where, buckets, reasons)
    else:
        routing = _cheapest_routing(capacity, sources, tp, where, phase, reasons)
    if routing is None:
        return None
    preps = []
    for i, source in enumerate(sources):
        mine = [j for j in range(len(buckets)) if routing[i, j] > 0]
        if source is None or not mine:
            continue
        # the share of all requests each of this entry's buckets brings it: p_k (× f_jk)
        weights = np.array([buckets[j].share * routing[i, j] for j in mine])
        total = float(weights.sum())
        auto = source.entry.autoscale
        min_replicas = auto.min_replicas if auto else 1
        max_replicas = auto.max_replicas if auto else None
        cap = None if source.bounded else quota_units(scenario, source.rental, tp[i])
        if cap is not None:
            if cap == 0:
                quota = pool_quota(scenario, source.rental)  # type: ignore[arg-type]
                assert quota is not None
                reasons.append(f"{where}: {quota.describe()} is smaller than one replica of "
                               f"{tp[i]} {source.gpu} (whole instances)")
                return None
            max_replicas = cap if max_replicas is None else min(max_replicas, cap)
            min_replicas = min(min_replicas, cap)
        preps.append(ServingEntryPrep(
            source=source, gpus_per_replica=tp[i],
            sizing_capacity_s=mix_capacity(capacity[i, mine], weights / total),
            service_capacity_s=mix_capacity(service[i, mine], weights / total),
            request_share=total,
            prompt_tokens=float(sum(w * buckets[j].prompt_tokens
                                    for w, j in zip(weights, mine, strict=True)) / total),
            output_tokens=float(sum(w * buckets[j].output_tokens
                                    for w, j in zip(weights, mine, strict=True)) / total),
            min_replicas=min_replicas, max_replicas=max_replicas, quota_replicas=cap,
            scale_up_delay_s=(auto.scale_up_delay_s if auto and auto.scale_up_delay_s is not None
                              else sim_defaults.instance_startup_s),
            **_measured_fields(replicas[i], service[i], capacity[i], mine, weights,
                               buckets)._asdict()))
    if any(s is None for s in sources):
        return None  # an entry of the plan cannot run: its reason is already recorded
    return tuple(preps)


def use_traffic(entries: Sequence[UseEntry]) -> bool:
    """Whether the fleet states its routing (``traffic`` on every entry; the domain allows all
    or none)."""
    return bool(entries) and all(entry.traffic is not None for entry in entries)


def _traffic_routing(entries: Sequence[UseEntry], capacity: np.ndarray,
                     sources: Sequence[EntrySource | None], where: str,
                     buckets: Sequence[RequestBucket], reasons: list[str]) -> np.ndarray | None:
    """The plan's own shares f_jk as an (entries × buckets) array, each bucket's column scaled
    to add up to exactly 1 (the domain allows 1 ± 1e-6); None (with reasons) where a share goes
    to an entry that cannot serve that request size within the SLO."""
    routing = np.array([entry.traffic or () for entry in entries], dtype=np.float64)
    routing /= routing.sum(axis=0, keepdims=True)
    ok = True
    for i, entry in enumerate(entries):
        for j, bucket in enumerate(buckets):
            if routing[i, j] > 0 and sources[i] is not None and not capacity[i, j] > 0:
                reasons.append(f"{where}: {entry.gpu} does not serve requests of "
                               f"{bucket.prompt_tokens}+{bucket.output_tokens} tokens within "
                               f"the SLO, but its traffic sends it {routing[i, j]:g} of them")
                ok = False
    return routing if ok else None


def _cheapest_routing(capacity: np.ndarray, sources: Sequence[EntrySource | None],
                      tp: Sequence[int], where: str, phase: ServingPhase,
                      reasons: list[str]) -> np.ndarray | None:
    """Each bucket whole (1.0) to the entry with the lowest cost per request; None (with the
    reason) where no entry serves a bucket within the SLO."""
    buckets = phase.requests
    cost_per_request = np.full(capacity.shape, np.inf)
    for i, source in enumerate(sources):
        pool = None if source is None else source.price_pool
        served = capacity[i] > 0
        cost_per_request[i, served] = _replica_usd_per_hour(pool, tp[i]) / capacity[i, served]
    # bounded entries (reserved, owned) price at 0 here: capacity already paid for goes first
    routed_to = np.argmin(cost_per_request, axis=0)
    unserved = [j for j in range(len(buckets))
                if not np.isfinite(cost_per_request[routed_to[j], j])]
    if unserved:
        sizes = ", ".join(f"{buckets[j].prompt_tokens}+{buckets[j].output_tokens} tokens"
                          for j in unserved)
        reasons.append(f"{where}: no GPU of the fleet serves requests of {sizes} within the "
                       f"SLO (ttft p95 {phase.slo.ttft_p95_s} s, tpot p95 "
                       f"{phase.slo.tpot_p95_s} s)")
        return None
    routing = np.zeros(capacity.shape)
    routing[routed_to, np.arange(len(buckets))] = 1.0
    return routing


class _MeasuredFields(NamedTuple):
    predicted_share: float = 1.0
    sizing_predicted_share: float = 1.0
    measured: tuple[tuple[str, str, str], ...] = ()


def _measured_fields(replica: ReplicaCapacities | None, service: np.ndarray,
                     sizing: np.ndarray, mine: list[int], weights: np.ndarray,
                     buckets: Sequence[RequestBucket]) -> _MeasuredFields:
    """An entry's predicted shares of service and of sizing work and its measured buckets
    (the defaults when every capacity is predicted); ``weights`` = the share of all requests
    each bucket of ``mine`` brings the entry."""
    if replica is None or not replica.basis:
        return _MeasuredFields()
    predicted = np.array([replica.bucket_basis(j) is Basis.PREDICTED for j in mine])

    def share(capacity: np.ndarray) -> float:
        work = np.array([w / capacity[j] if capacity[j] > 0 else 0.0
                         for w, j in zip(weights, mine, strict=True)])
        total = float(work.sum())
        return float(work[predicted].sum()) / total if total > 0 else 1.0

    return _MeasuredFields(
        predicted_share=share(service), sizing_predicted_share=share(sizing),
        measured=tuple((f"{buckets[j].prompt_tokens}+{buckets[j].output_tokens} tokens",
                        replica.bucket_basis(j).value, replica.profile_source[j])
                       for j in mine if replica.bucket_basis(j) is not Basis.PREDICTED))


def _replica_usd_per_hour(pool: RentalPool | CommitmentPool | None, gpus_per_replica: int
                          ) -> float:
    """What one replica costs an hour as it is billed: a rented replica holds whole instances
    (one 8-GPU p4de for a 1-GPU A100-80GB replica on AWS); a reserved one its GPUs at r_c;
    bounded capacity with no price pool (owned, plan commitments) 0, already paid for."""
    if pool is None:
        return 0.0
    if isinstance(pool, RentalPool):
        held = pool.gpus_paid_for(gpus_per_replica)
        return pool.rate_usd_per_gpu_hour * held
    return pool.rate_usd_per_gpu_hour * gpus_per_replica
