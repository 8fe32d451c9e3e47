"""The serving-mix program for a scenario's serving phase, and its answer as a plan's use entry.

Capacities come from the simulator's own replica sizing
(:func:`costsim.sim.serving_prep.replica_capacities`, the one place a replica's per-bucket
capacities come from: looked up on its module at each call, so the simulator and the program
always ask the same function), prices from the price book as the simulator's rental pools take
them, load levels from the phase's hourly load profile (:mod:`costsim.sim.load`). The use
entries carry the program's shares x_kj as ``traffic``, so the simulator routes as the program
solved it: each hour it runs ⌈Σ_k λ·p_k·x_kj / c_kj⌉ replicas of type j (the program's fit
constraint at that hour's rate). The program is solved at the trough, median and peak; one
fleet keeps one set of shares all year, so the plan takes the level whose shares cost least over
the phase's hourly profile (docs/optimizer.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from costsim.catalog.gpus import canonical_gpu_name, get_gpu
from costsim.catalog.prices import PriceBook
from costsim.domain.performance import PerfDefaults
from costsim.domain.phases import ServingPhase
from costsim.domain.plans import Autoscale, PhaseUse, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.simulation import SimAssumptions
from costsim.errors import CostsimError, InfeasibleError
from costsim.optimize.serving_mix import MixInstance, MixSolution, solve_levels
from costsim.perf.sizing import replicas_for_rate
from costsim.sim import serving_prep
from costsim.sim.capacity import price_factor
from costsim.sim.fleet import mix_capacity
from costsim.sim.load import hourly_rates, resolve_shape
from costsim.sim.pools import rental_pool
from costsim.units import HOURS_PER_MONTH


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadLevels:
    """The hourly request rate's trough, median and peak over a serving phase."""

    trough_requests_per_s: float
    median_requests_per_s: float
    peak_requests_per_s: float

    def rates(self) -> tuple[float, float, float]:
        """(trough, median, peak)."""
        return (self.trough_requests_per_s, self.median_requests_per_s,
                self.peak_requests_per_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingMix:
    """The program solved at a phase's trough, median and peak hourly rates."""

    phase: str
    instance: MixInstance
    levels: LoadLevels
    trough: MixSolution
    median: MixSolution
    peak: MixSolution
    # the level whose shares the plan's traffic takes, and what they cost an hour on average
    # over the phase's hourly profile (the program's replicas per hour, billed as rented)
    routing_level: str = "peak"
    routing_usd_per_hour: float = 0.0

    @property
    def routing(self) -> MixSolution:
        """The solution whose shares x_kj the plan's ``traffic`` takes."""
        solution: MixSolution = getattr(self, self.routing_level)
        return solution


def load_levels(phase: ServingPhase, sim_defaults: SimAssumptions, start_day: date) -> LoadLevels:
    """Trough, median and peak of the phase's hourly rates (its profile, growth included) over
    its duration from ``start_day``."""
    rates = _phase_rates(phase, sim_defaults, start_day)
    return LoadLevels(trough_requests_per_s=float(rates.min()),
                      median_requests_per_s=float(np.median(rates)),
                      peak_requests_per_s=float(rates.max()))


def mix_instance(scenario: Scenario, phase: ServingPhase, gpus: Sequence[str], book: PriceBook,
                 defaults: PerfDefaults, *, cloud: str | None = None, region: str | None = None,
                 usd_per_gpu_hour: Mapping[str, float] | None = None) -> MixInstance:
    """The program's data for serving ``phase`` on ``gpus``: a GPU type the model does not fit
    serves no bucket; its price is the cheapest on-demand offering for a replica (the simulator's
    rental pool, the scenario's price change applied; a replica billed as the whole instances it
    rents, as the simulator bills it) unless ``usd_per_gpu_hour`` gives one (then a replica costs
    its GPUs at that price, Mélange's per-GPU pricing).

    Raises:
        CostsimError: an unknown GPU; no offering sells a needed GPU on demand there.
        InfeasibleError: none of ``gpus`` can serve the phase (the reasons named).
    """
    arch = scenario.model(phase.model).architecture
    names, sizes, gpu_prices, prices, capacities = [], [], [], [], []
    reasons: list[str] = []
    for name in gpus:
        gpu = get_gpu(name, source="serving mix GPU")
        try:
            replica = serving_prep.replica_capacities(arch, gpu, phase, defaults,
                                                      measured=scenario.measurements.serving)
        except CostsimError as error:
            reasons.append(f"{name}: {error}")
            continue  # the model cannot be served on this GPU: it takes no bucket
        tp = max(1, replica.gpus_per_replica)
        canonical = canonical_gpu_name(name, "serving mix GPU")
        if usd_per_gpu_hour is not None and canonical in usd_per_gpu_hour:
            rate = usd_per_gpu_hour[canonical]
            billed = rate * tp
        else:
            pool = rental_pool(book, canonical, tp, PurchaseOption.ON_DEMAND, cloud=cloud,
                               region=region, price_factor=price_factor(scenario, canonical))
            rate = pool.rate_usd_per_gpu_hour
            # the simulator rents each replica whole instances (sim/phase_runs._book_replicas)
            billed = rate * pool.gpus_paid_for(tp)
        names.append(canonical)
        sizes.append(tp)
        gpu_prices.append(rate)
        prices.append(billed)
        capacities.append(replica.sizing_requests_per_s)
    if not names:
        raise InfeasibleError(f"phase '{phase.name}': no GPU of {', '.join(gpus)} serves it "
                              f"({'; '.join(reasons)})")
    return MixInstance(gpus=tuple(names), gpus_per_replica=tuple(sizes),
                       usd_per_gpu_hour=tuple(gpu_prices), usd_per_replica_hour=tuple(prices),
                       bucket_shares=tuple(b.share for b in phase.requests),
                       capacity_requests_per_s=tuple(capacities))


def solve_serving_mix(scenario: Scenario, phase: ServingPhase, instance: MixInstance,
                      sim_defaults: SimAssumptions) -> ServingMix:
    """The program at the phase's trough, median and peak hourly rates (the phase taken to
    start with the calendar: the weekday pattern shifts, the levels barely move), and the level
    whose shares cost least over the phase's hourly profile (ties: the peak's, then the
    median's)."""
    levels = load_levels(phase, sim_defaults, scenario.calendar.start)
    trough, median, peak = solve_levels(instance, levels.rates())
    rates = _phase_rates(phase, sim_defaults, scenario.calendar.start)
    costs = {name: routing_cost_usd(instance, solution, rates)
             for name, solution in (("peak", peak), ("median", median), ("trough", trough))}
    level = min(costs, key=lambda name: costs[name])  # dicts keep order: ties go to the peak
    return ServingMix(phase=phase.name, instance=instance, levels=levels, trough=trough,
                      median=median, peak=peak, routing_level=level,
                      routing_usd_per_hour=costs[level] / max(1, rates.size))


def _phase_rates(phase: ServingPhase, sim_defaults: SimAssumptions, start_day: date
                 ) -> np.ndarray:
    hours = max(1, math.ceil(phase.duration_months * HOURS_PER_MONTH))
    return hourly_rates(resolve_shape(phase.load, sim_defaults), start_day, 0.0, hours)


def traffic_shares(solution: MixSolution) -> np.ndarray:
    """The solution's shares x_kj as [bucket, type], cleaned of the solver's noise: a share
    within 1e-9 of a multiple of 1e-6 is that multiple (HiGHS returns 0.9 as 0.9000000002,
    which would cost a replica at a rate that fills the program's replicas exactly)."""
    shares = np.array(solution.assignment, dtype=np.float64)
    grid = np.round(shares, 6)
    return np.where(np.abs(shares - grid) <= 1e-9, grid, shares) + 0.0  # + 0.0: no -0.0


def routing_cost_usd(instance: MixInstance, solution: MixSolution, rates: np.ndarray) -> float:
    """What the solution's shares cost over ``rates`` (requests/s, one per hour) as the
    simulator sizes them: each hour ⌈Σ_k λ·p_k·x_kj / c_kj⌉ replicas of each type used,
    × its $/replica-hour."""
    total = 0.0
    for j, load, capacity in type_loads(instance, traffic_shares(solution)):
        replicas = replicas_for_rate(rates * load, capacity)
        total += float(replicas.sum()) * instance.usd_per_replica_hour[j]
    return total


def type_loads(instance: MixInstance, shares: np.ndarray) -> list[tuple[int, float, float]]:
    """(type j, its share of all requests Σ_k p_k·x_kj, its capacity for that mix of sizes)
    for each type the shares ``[bucket, type]`` send requests to: what the simulator sizes
    each hour (:func:`costsim.sim.fleet.mix_capacity`)."""
    caps = instance.capacities()
    p = np.array(instance.bucket_shares, dtype=np.float64)
    found = []
    for j in range(len(instance.gpus)):
        weights = p * shares[:, j]
        mine = weights > 0
        if mine.any():
            load = float(weights.sum())
            found.append((j, load, mix_capacity(caps[j, mine], weights[mine] / load)))
    return found


def routed_buckets(instance: MixInstance, gpus: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """The buckets the simulator routes to each of ``gpus`` (the lowest $/GPU-h × GPUs per
    replica ÷ capacity, ``serving_prep``'s rule, which does not see whole-instance rounding);
    a type that wins no bucket is left out."""
    caps = instance.capacities()
    rows = [instance.gpus.index(g) for g in gpus]
    with np.errstate(divide="ignore"):
        per_request = np.array([np.where(caps[j] > 0, instance.usd_per_gpu_hour[j]
                                         * instance.gpus_per_replica[j] / caps[j],
                                         np.inf) for j in rows])
    winner = np.argmin(per_request, axis=0)
    routed: dict[str, tuple[int, ...]] = {}
    for i, gpu in enumerate(gpus):
        mine = tuple(int(k) for k in np.flatnonzero(winner == i))
        if mine:
            routed[gpu] = mine
    return routed


def mix_use(mix: ServingMix, *, gpus: Sequence[str] | None = None,
            cloud: str | None = None, region: str | None = None) -> PhaseUse:
    """The solved fleet as the phase's on-demand use entries, each with its ``traffic``: the
    shares x_kj of the mix's routing level (types given no share are left out). Bounds per
    entry: at least the replicas its shares need at the trough rate, at most those at the peak
    (:func:`costsim.perf.sizing.replicas_for_rate`, as the simulator sizes them).

    ``gpus``: a fleet of one's choosing instead (e.g. the best single type), routed by the
    simulator's own rule (no ``traffic``), its maximum what that routing needs at the peak."""
    if gpus is not None:
        return _routed_use(mix, gpus, cloud, region)
    instance = mix.instance
    shares = traffic_shares(mix.routing)  # [k, j]
    entries = []
    for j, load, capacity in type_loads(instance, shares):
        gpu = instance.gpus[j]
        peak = max(1, int(replicas_for_rate(mix.levels.peak_requests_per_s * load, capacity)))
        floor = min(peak, max(1, int(replicas_for_rate(mix.levels.trough_requests_per_s * load,
                                                       capacity))))
        entries.append(UseEntry(gpu=gpu, option=PurchaseOption.ON_DEMAND, cloud=cloud,
                                region=region,
                                autoscale=Autoscale(min_replicas=floor, max_replicas=peak),
                                traffic=tuple(float(v) for v in shares[:, j])))
    return PhaseUse(phase=mix.phase, entries=tuple(entries))


def _routed_use(mix: ServingMix, gpus: Sequence[str], cloud: str | None, region: str | None
                ) -> PhaseUse:
    instance = mix.instance
    shares = np.array(instance.bucket_shares, dtype=np.float64)
    entries = []
    for gpu, buckets in routed_buckets(instance, gpus).items():
        j = instance.gpus.index(gpu)
        mine = list(buckets)
        share = float(shares[mine].sum())
        capacity = mix_capacity(instance.capacities()[j, mine], shares[mine] / share)
        peak = max(1, int(replicas_for_rate(mix.levels.peak_requests_per_s * share, capacity)))
        floor = min(mix.trough.replicas[j], peak)
        entries.append(UseEntry(gpu=gpu, option=PurchaseOption.ON_DEMAND, cloud=cloud,
                                region=region,
                                autoscale=Autoscale(min_replicas=floor, max_replicas=peak)))
    return PhaseUse(phase=mix.phase, entries=tuple(entries))
