"""The search space: for each phase of a scenario, the ways it can run that fit in memory and
that the price book sells (issue 11 item 1).

Feasibility is the simulator's own: each choice is prepared by
:func:`costsim.sim.prepare.prepare_plan` on a *probe* — the scenario cut down to that one phase
(its ``after`` links dropped) with a one-phase plan — so a GPU the model does not fit, an option
no offering sells, a job no node holds or an SLO no replica meets rules a choice out for the same
reason ``run`` would report, and the probe's preparation (training layout and steady time,
serving capacities, a job's node) is what the screen (:mod:`costsim.optimize.screen`) prices.
Phases are independent in a probe: each choice brings its own capacity (an implied commitment
bought when the phase starts, or its own servers), so a whole plan is any one choice per phase.

Per phase kind:

* experiments: every catalog GPU whose job fits, elastic (one job-sized instance per job),
  on demand or on spot with an on-demand fallback. A *generic* job (``gpu_memory_gib`` and
  ``gpu_hours``, no model) states its GPU-hours without saying how they change with the GPU,
  so the search keeps to the GPU types the scenario's own plans run that phase on and varies
  only how they are bought: on a slower card the same hours would be a guess (a T4 does not
  finish an A100's 8 GPU-hours in 8 hours), and the cheapest card would always win;
* training: the training front's options (GPU type × count × purchase option; owned only where
  a shipped server carries the GPU, reserved only where its term can pay for the run);
* serving: every GPU type that serves the phase within its SLO as one elastic on-demand fleet,
  with autoscale bounds from the load profile, and the Mélange-style mix of those types.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from costsim.catalog.gpus import canonical_gpu_name, gpu_catalog
from costsim.catalog.perf_defaults import perf_defaults
from costsim.catalog.prices import PriceBook
from costsim.catalog.sim_defaults import sim_assumptions
from costsim.domain.phases import (
    ExperimentsPhase,
    GenericJob,
    Phase,
    ServingPhase,
    TrainingPhase,
)
from costsim.domain.plans import Autoscale, Commitment, OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.domain.simulation import SimAssumptions
from costsim.domain.uncertainty import Fixed, LogNormal, Normal, Triangular, Uniform
from costsim.errors import CostsimError
from costsim.optimize.choice import PhaseChoice
from costsim.optimize.serving_mix_plan import (
    ServingMix,
    mix_instance,
    mix_use,
    solve_serving_mix,
)
from costsim.optimize.training_choices import training_choices
from costsim.optimize.training_front import TrainingFront
from costsim.perf.sizing import replicas_for_rate
from costsim.sim.load import hourly_rates, resolve_shape
from costsim.sim.performance_basis import capacity_error
from costsim.sim.prepare import PhasePrep, ServingPrep, prepare_plan
from costsim.units import HOURS_PER_MONTH

PROBE_PLAN = "probe"


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchSpace:
    """Every phase's memory-feasible choices (in the scenario's phase order)."""

    phases: tuple[tuple[str, tuple[PhaseChoice, ...]], ...]
    probed: int  # probe plans prepared (choices tried, feasible or not)
    cloud: str | None  # the cloud every candidate rents in (None: the cheapest offering)
    region: str | None
    serving_mixes: tuple[ServingMix, ...] = ()
    training_fronts: tuple[TrainingFront, ...] = ()

    @property
    def size(self) -> int:
        """Whole plans in the space: the product of the per-phase choice counts."""
        return math.prod(len(choices) for _, choices in self.phases)

    def choices(self, phase: str) -> tuple[PhaseChoice, ...]:
        """The choices of ``phase``."""
        return dict(self.phases)[phase]


def pinned_location(scenario: Scenario) -> tuple[str | None, str | None]:
    """The cloud and region every hand-written plan pins (a contract, a data-residency rule),
    else (None, None): candidates then rent the cheapest offering anywhere."""
    clouds = {(plan.cloud, plan.region) for plan in scenario.plans}
    if len(clouds) == 1:
        cloud, region = next(iter(clouds))
        if cloud is not None:
            return cloud, region
    return None, None


def search_space(scenario: Scenario, book: PriceBook, limits: RiskLimits | None = None
                 ) -> SearchSpace:
    """The per-phase choices of ``scenario`` (each prepared on a probe); ``limits`` (default:
    the scenario's) decide which training options meet the deadline."""
    limits = limits if limits is not None else scenario.risk
    fronts: list[TrainingFront] = []
    cloud, region = pinned_location(scenario)
    prober = _Prober(scenario, book, cloud, region)
    phases: list[tuple[str, tuple[PhaseChoice, ...]]] = []
    mixes: list[ServingMix] = []
    for phase in scenario.phase_order():
        if isinstance(phase, ExperimentsPhase):
            choices = _experiments(prober, phase)
        elif isinstance(phase, TrainingPhase):
            choices, front = training_choices(scenario, phase, book, prober.probe, cloud=cloud,
                                              region=region, max_p_deadline_missed=(
                                                  limits.max_p_deadline_missed))
            fronts.append(front)
        else:
            choices, mix = _serving(prober, phase)
            if mix is not None:
                mixes.append(mix)
        phases.append((phase.name, tuple(choices)))
    return SearchSpace(phases=tuple(phases), probed=prober.probed, cloud=cloud, region=region,
                       serving_mixes=tuple(mixes), training_fronts=tuple(fronts))


class _Prober:
    """Prepares one-phase probe plans with the simulator's own preparation."""

    def __init__(self, scenario: Scenario, book: PriceBook, cloud: str | None,
                 region: str | None) -> None:
        self.scenario, self.book, self.cloud, self.region = scenario, book, cloud, region
        self.defaults = perf_defaults()
        self.sim_defaults = sim_assumptions()
        self.probed = 0

    def probe(self, phase: Phase, use: PhaseUse, commitments: tuple[Commitment, ...],
              owned: tuple[OwnedPurchase, ...]) -> PhasePrep | None:
        """The simulator's preparation of ``use`` for ``phase`` alone; None when it cannot
        run (memory, offering, SLO: the reasons ``run`` would give)."""
        self.probed += 1
        plan = Plan(name=PROBE_PLAN, uses=(use,), commitments=commitments, owned=owned,
                    cloud=self.cloud, region=self.region)
        try:
            alone = dataclasses.replace(self.scenario, phases=(dataclasses.replace(
                phase, after=()),), plans=(plan,))
        except CostsimError:
            return None
        prepared = prepare_plan(alone, plan, book=self.book, defaults=self.defaults,
                                sim_defaults=self.sim_defaults)
        return prepared.phases.get(phase.name) if prepared.feasible else None


def _experiments(prober: _Prober, phase: ExperimentsPhase) -> list[PhaseChoice]:
    choices = []
    for gpu in _experiment_gpus(prober.scenario, phase):
        for option, fallback, tag, words in (
                (PurchaseOption.ON_DEMAND, None, "", "on demand"),
                (PurchaseOption.SPOT, PurchaseOption.ON_DEMAND, "-spot",
                 "spot (on-demand fallback)")):
            use = PhaseUse(phase=phase.name, entries=(UseEntry(gpu=gpu, option=option,
                                                               fallback=fallback),))
            prep = prober.probe(phase, use, (), ())
            if prep is not None:
                choices.append(PhaseChoice(phase=phase.name, label=f"{gpu} {words}, a job per "
                                           "instance", slug=_slug(gpu) + tag, use=use,
                                           prep=prep))
    return choices


def _serving(prober: _Prober, phase: ServingPhase) -> tuple[list[PhaseChoice], ServingMix | None]:
    trough, peak = rate_bounds(prober.scenario, phase, prober.sim_defaults)
    choices = []
    for gpu in _catalog_gpus():
        use = PhaseUse(phase=phase.name, entries=(UseEntry(gpu=gpu),))
        prep = prober.probe(phase, use, (), ())
        if not isinstance(prep, ServingPrep) or len(prep.entries) != 1:
            continue
        entry = prep.entries[0]
        low = max(1, int(replicas_for_rate(trough, entry.sizing_capacity_s)))
        # the maximum leaves the load-based autoscaler room for an engine slower than
        # predicted (the simulator sizes on the drawn capacity): the peak at the capacity's
        # low plausible end
        high = max(low, int(replicas_for_rate(peak, entry.sizing_capacity_at(
            capacity_low_factor(prober.scenario, prep)))))
        if entry.quota_replicas is not None:  # the quota caps the fleet (DESIGN §13)
            low, high = min(low, entry.quota_replicas), min(high, entry.quota_replicas)
        sized = PhaseUse(phase=phase.name, entries=(UseEntry(
            gpu=gpu, autoscale=Autoscale(min_replicas=low, max_replicas=high)),))
        # the bounds change nothing the preparation computed but the entry's own bounds
        sized_prep = dataclasses.replace(prep, entries=(dataclasses.replace(
            entry, source=dataclasses.replace(entry.source, entry=sized.entries[0]),
            min_replicas=low, max_replicas=high),))
        choices.append(PhaseChoice(
            phase=phase.name, label=f"{gpu} on demand, {low}–{high} replicas",
            slug=_slug(gpu), use=sized, prep=sized_prep,
            notes=(f"{phase.name}: {entry.gpus_per_replica} GPU(s) per replica, "
                   f"{entry.sizing_capacity_s:.2f} requests/s each at the SLO",)))
    mix = _mix(prober, phase, [c.use.entries[0].gpu for c in choices])
    if mix is not None:
        use = mix_use(mix, cloud=None, region=None)
        prep = prober.probe(phase, use, (), ()) if len(use.entries) > 1 else None
        if isinstance(prep, ServingPrep) and len(prep.entries) > 1:
            use, prep = _mix_bounded(use, prep, peak,
                                     capacity_low_factor(prober.scenario, prep))
            gpus = "+".join(e.gpu for e in use.entries)
            choices.append(PhaseChoice(
                phase=phase.name, label=f"GPU mix {gpus} on demand (serving-mix program)",
                slug="mix-" + "-".join(_slug(e.gpu) for e in use.entries), use=use,
                prep=prep, notes=(f"{phase.name}: Mélange-style mix at the peak: "
                                  f"${mix.peak.cost_usd_per_hour:,.2f}/h; traffic shares of the "
                                  f"{mix.routing_level} solution, "
                                  f"${mix.routing_usd_per_hour:,.2f}/h over the load profile",)))
    return choices, mix


def _mix_bounded(use: PhaseUse, prep: ServingPrep, peak: float, low_factor: float
                 ) -> tuple[PhaseUse, ServingPrep]:
    """The mix's entries with the autoscaler's maximum raised to the highest plausible peak
    (the program solves the profile at its mean growth) at the capacity's low plausible end
    (``low_factor``, :func:`capacity_low_factor`), as the single-type fleets are."""
    entries, preps = [], []
    for entry in prep.entries:
        high = max(1, int(replicas_for_rate(peak * entry.request_share,
                                            entry.sizing_capacity_at(low_factor))))
        high = max(high, entry.max_replicas or 0, entry.min_replicas)
        if entry.quota_replicas is not None:
            high = min(high, entry.quota_replicas)
        use_entry = dataclasses.replace(entry.source.entry, autoscale=dataclasses.replace(
            entry.source.entry.autoscale or Autoscale(), max_replicas=high))
        entries.append(use_entry)
        preps.append(dataclasses.replace(entry, max_replicas=high, source=dataclasses.replace(
            entry.source, entry=use_entry)))
    return (PhaseUse(phase=use.phase, entries=tuple(entries)),
            dataclasses.replace(prep, entries=tuple(preps)))


def _mix(prober: _Prober, phase: ServingPhase, gpus: list[str]) -> ServingMix | None:
    if len(gpus) < 2:
        return None
    try:
        instance = mix_instance(prober.scenario, phase, gpus, prober.book, prober.defaults,
                                cloud=prober.cloud, region=prober.region)
        return solve_serving_mix(prober.scenario, phase, instance, prober.sim_defaults)
    except CostsimError:
        return None


# How far below its median the low plausible end of a lognormal capacity error lies, in
# log-sds: 2, the growth range's "mean ∓ 2 sd" of rate_bounds (about 2.3 % of draws lie below)
_LOW_SDS = 2.0


def capacity_low_factor(scenario: Scenario, prep: ServingPrep) -> float:
    """The low plausible end (at most 1) of the factor the simulator draws on a serving
    phase's predicted capacity: the scenario's own ``throughput_error`` where it sets one (a
    lognormal's median · e^(−2σ), a uniform's or triangular's low, a fixed value), else the
    shared throughput error times the serving model's own (prepare.ServingPrep.model_error),
    median 1 and σ = √(σ_t² + σ_serve,extra²), at e^(−2σ). An
    autoscaler's maximum at the peak at this capacity lets the fleet grow as a load-based
    autoscaler would in all but the slowest futures (docs/optimizer.md)."""
    own = scenario.uncertainty.throughput_error
    if own is None:  # the defaults: one lognormal of σ = √(σ_t² + σ_serve,extra²)
        own = capacity_error(None, prep.model_error)
    if isinstance(own, LogNormal):
        low = own.median * math.exp(-_LOW_SDS * own.sigma)
    elif isinstance(own, Normal):  # not a factor's (the scenario refuses it): its 2-sd end
        low = own.mean - _LOW_SDS * own.sd
    elif isinstance(own, Uniform | Triangular):
        low = own.low
    else:  # fixed
        low = own.value
    # a non-positive end (a normal's tail) cannot size a fleet: keep the tightest positive one
    return min(1.0, low) if low > 0 else min(1.0, math.exp(-_LOW_SDS))


def rate_bounds(scenario: Scenario, phase: ServingPhase, sim_defaults: SimAssumptions
                ) -> tuple[float, float]:
    """The lowest and highest hourly rates the phase may see: its profile at the bottom and
    the top of the scenario's growth range (a normal's mean ∓ 2 sd within its bounds, a
    uniform's or triangular's low and high), so the autoscaler's bounds neither hold replicas
    a plausible future does not need nor cap one it does."""
    growth = scenario.uncertainty.demand_growth_pct_per_month
    own = phase.load.growth_pct_per_month
    low = high = own
    if isinstance(growth, Fixed):
        low = high = growth.value
    elif isinstance(growth, Normal):
        low = growth.mean - 2 * growth.sd if growth.low is None else max(
            growth.low, growth.mean - 2 * growth.sd)
        high = growth.mean + 2 * growth.sd if growth.high is None else min(
            growth.high, growth.mean + 2 * growth.sd)
    elif isinstance(growth, Uniform | Triangular):
        low, high = growth.low, growth.high
    hours = max(1, math.ceil(phase.duration_months * HOURS_PER_MONTH))

    def rates(pct: float) -> np.ndarray:
        shape = resolve_shape(phase.load, sim_defaults, pct)
        return hourly_rates(shape, scenario.calendar.start, 0.0, hours)

    return float(rates(low).min()), float(rates(high).max())


def _experiment_gpus(scenario: Scenario, phase: ExperimentsPhase) -> Iterable[str]:
    """The GPU types an experiments phase may run on: the catalog for a model job (the
    performance model rates its hours on each GPU); for a generic job, the types the scenario's
    plans give the phase (module docstring), in the order the plans name them."""
    if not isinstance(phase.job, GenericJob):
        return _catalog_gpus()
    named = [canonical_gpu_name(entry.gpu) for plan in scenario.plans
             for entry in plan.use_of(phase.name).entries]
    return list(dict.fromkeys(named))


def _catalog_gpus() -> Iterable[str]:
    return (gpu.name for gpu in gpu_catalog())


def _slug(gpu: str) -> str:
    return gpu.lower().replace(" ", "")
