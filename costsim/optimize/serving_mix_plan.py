"""The serving-mix program for a scenario's serving phase, and its answer as a plan's use entry.

Capacities come from the simulator's own replica sizing
(:func:`costsim.sim.serving_prep.replica_capacities`), prices from the price book as the
simulator's rental pools take them, load levels from the phase's hourly load profile
(:mod:`costsim.sim.load`). The use entry hands the fleet to the simulator, which routes each
request bucket whole to the cheapest GPU type per request: where the program splits a bucket
across types (to fill a replica's spare capacity), the simulator approximates it by whole-bucket
routing, and a type the program only uses to fill such gaps gets no entry (docs/optimizer.md).
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
from costsim.sim.capacity import price_factor
from costsim.sim.fleet import mix_capacity
from costsim.sim.load import hourly_rates, resolve_shape
from costsim.sim.pools import rental_pool
from costsim.sim.serving_prep import replica_capacities
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


def load_levels(phase: ServingPhase, sim_defaults: SimAssumptions, start_day: date) -> LoadLevels:
    """Trough, median and peak of the phase's hourly rates (its profile, growth included) over
    its duration from ``start_day``."""
    hours = max(1, math.ceil(phase.duration_months * HOURS_PER_MONTH))
    rates = hourly_rates(resolve_shape(phase.load, sim_defaults), start_day, 0.0, hours)
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
            replica = replica_capacities(arch, gpu, phase, defaults,
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
    start with the calendar: the weekday pattern shifts, the levels barely move)."""
    levels = load_levels(phase, sim_defaults, scenario.calendar.start)
    trough, median, peak = solve_levels(instance, levels.rates())
    return ServingMix(phase=phase.name, instance=instance, levels=levels, trough=trough,
                      median=median, peak=peak)


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
    """The solved fleet as the phase's on-demand use entries (``gpus``: a fleet of one's
    choosing instead, e.g. the best single type). Bounds per entry: at least the program's
    trough replicas of that type, at most what the simulator's routing needs at the peak rate
    (:func:`costsim.perf.sizing.replicas_for_rate`, as the simulator sizes it)."""
    instance = mix.instance
    chosen = gpus if gpus is not None else [g for g, r in zip(instance.gpus, mix.peak.replicas,
                                                              strict=True) if r > 0]
    shares = np.array(instance.bucket_shares, dtype=np.float64)
    entries = []
    for gpu, buckets in routed_buckets(instance, chosen).items():
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
