"""The analytic screen: the expected cost of each phase choice without the simulator's event
loop, and the best few whole plans by their summed estimates (issue 11 item 2, stage 1).

Each choice is priced from its probe preparation (:mod:`costsim.optimize.space`) with the rules
the simulator books by, in expectation over the scenario's uncertainty means
(docs/optimizer.md "The screen" gives the equations):

* experiments, elastic: jobs = arrivals/day × E[arrivals factor] × days; each job is billed its
  run time plus the instance start-up, rounded by the cloud's minimum and increment, on its
  job-sized instances: cost = jobs × E[billed h] × GPUs paid × rate;
* training: the Daly expectation of the hardware all-in time over checkpoint segments, the spot
  preemptions (restart each, the reacquire window on the on-demand fallback), × (1 + x) for the
  extra loss beyond faults; rented: GPUs paid × rate × hours; reserved: the commitment's whole
  obligation; owned: capex less the book value at the horizon, power at the measured
  utilization, colocation, maintenance and staff from delivery. A quadrature over the extra
  loss and throughput error gives P(deadline missed);
* serving: the phase's hourly rates (its profile at the mean growth), replicas per hour by the
  simulator's autoscaling rule per fleet entry, vectorized over the hours:
  Σ_h replicas_h × GPUs paid per replica × rate.

Rentals are priced with the scenario's mean price drift in the month of use. Not in the screen
(the simulator prices them): storage and data transfer (the same for every candidate up to the
storage cloud), a fixed experiment fleet's queue, the spread of the uncertainty beyond its mean
(except the training run's extra loss and throughput error, integrated for P(deadline missed)).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costsim.catalog.sim_defaults import sim_assumptions
from costsim.domain.phases import ExperimentsPhase, ServingPhase, TrainingPhase
from costsim.domain.plans import Plan
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.domain.simulation import SimAssumptions
from costsim.domain.uncertainty import Distribution, LogNormal
from costsim.optimize.choice import PhaseChoice
from costsim.optimize.space import SearchSpace
from costsim.sim.draws import draw
from costsim.sim.fleet import replicas_for
from costsim.sim.load import hourly_rates, resolve_shape
from costsim.sim.pools import DAYS_PER_MONTH, OwnedPool, RentalPool, owned_pool
from costsim.sim.prepare import ExperimentsPrep, ServingPrep, TrainingPrep
from costsim.units import HOURS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR

# Quadrature points over the job sizes, the extra loss and the throughput error: a fixed,
# seeded sample (the screen is deterministic); 512 points put the mean within ~1 % for the
# calibrated extra loss (log-sd 1.55), well inside the screen's other approximations
QUADRATURE_POINTS = 512
QUADRATURE_SEED = 20_250_101
# A choice is combined only when it meets the deadline with at most this probability of
# missing it, unless the limits give their own (an expected finish within the deadline)
DEFAULT_DEADLINE_RISK = 0.5
# Choices per phase that enter the combination (the best by screen cost); with a sum of
# independent phase costs, the best K plans are all combinations of each phase's best K
PER_PHASE = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceEstimate:
    """A phase choice and its analytic estimate."""

    choice: PhaseChoice
    cost_usd: float  # expected cost of the phase (with the capacity the choice buys)
    duration_s: float  # expected time from the phase's start to its end
    p_deadline_missed: float | None  # training with a deadline; None otherwise
    meets_deadline: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Combination:
    """One choice per phase, as a whole plan, and the summed screen cost."""

    estimates: tuple[ChoiceEstimate, ...]  # in phase order
    cost_usd: float

    def plan(self, name: str, cloud: str | None, region: str | None) -> Plan:
        """The combination as a plan called ``name``."""
        choices = [e.choice for e in self.estimates]
        return Plan(name=name, uses=tuple(c.use for c in choices),
                    commitments=tuple(x for c in choices for x in c.commitments),
                    owned=tuple(x for c in choices for x in c.owned), cloud=cloud,
                    region=region)

    @classmethod
    def of(cls, estimates: Sequence[ChoiceEstimate]) -> Combination:
        """The combination of ``estimates`` (one per phase, in phase order)."""
        return cls(estimates=tuple(estimates),
                   cost_usd=math.fsum(e.cost_usd for e in estimates))

    def order(self) -> tuple[float, str]:
        """Sort key: screen cost, then name."""
        return self.cost_usd, self.slug

    @property
    def slug(self) -> str:
        """The choices' short names joined, for the candidate's name."""
        return ".".join(e.choice.slug for e in self.estimates)


def screen_space(scenario: Scenario, space: SearchSpace, limits: RiskLimits
                 ) -> tuple[tuple[str, tuple[ChoiceEstimate, ...]], ...]:
    """Every choice of every phase estimated, cheapest first; each phase starts when the
    cheapest choices of the phases it follows end (their expected durations)."""
    sim = sim_assumptions()
    ends: dict[str, float] = {}
    out = []
    for name, choices in space.phases:
        phase = scenario.phase(name)
        start = max((ends[d] for d in phase.after), default=0.0)
        estimates = sorted((estimate(scenario, c, start, sim, limits) for c in choices),
                           key=lambda e: (not e.meets_deadline, e.cost_usd, e.choice.slug))
        ends[name] = start + (estimates[0].duration_s if estimates else 0.0)
        out.append((name, tuple(estimates)))
    return tuple(out)


def best_combinations(screened: Sequence[tuple[str, Sequence[ChoiceEstimate]]], count: int,
                      per_phase: int = PER_PHASE) -> list[Combination]:
    """``count`` whole plans from each phase's best ``per_phase`` choices that meet its
    deadline (all of them when none does), cheapest first by summed screen cost.

    The screen's error is largest where a phase's cost is (a year of serving), so each phase's
    runners-up enter with the other phases at their best, before the cheapest remaining sums
    fill the rest: the Monte Carlo then decides between the choices the screen ranks close.
    """
    shortlists = []
    for _, estimates in screened:
        meeting = [e for e in estimates if e.meets_deadline]
        shortlists.append((meeting or list(estimates))[:max(per_phase, 1)])
    if not shortlists or not all(shortlists):
        return []
    best = [s[0] for s in shortlists]
    chosen = {Combination.of(best)}
    for p, shortlist in enumerate(shortlists):
        for alternative in shortlist[1:]:
            chosen.add(Combination.of([alternative if q == p else b
                                       for q, b in enumerate(best)]))
    ordered = sorted(chosen, key=Combination.order)[:count]
    for combo in all_combinations(shortlists):
        if len(ordered) >= count:
            break
        if combo not in ordered:
            ordered.append(combo)
    return sorted(ordered, key=Combination.order)


def all_combinations(per_phase: Sequence[Sequence[ChoiceEstimate]]) -> list[Combination]:
    """Every combination of one estimate per phase, cheapest first (ties by name)."""
    return sorted((Combination.of(pick) for pick in itertools.product(*per_phase)),
                  key=Combination.order)


def estimate(scenario: Scenario, choice: PhaseChoice, start_s: float, sim: SimAssumptions,
             limits: RiskLimits) -> ChoiceEstimate:
    """The analytic estimate of ``choice`` for a phase starting at ``start_s``."""
    prep = choice.prep
    if isinstance(prep, ExperimentsPrep):
        cost, duration = _experiments(scenario, prep, start_s, sim)
        return ChoiceEstimate(choice=choice, cost_usd=cost, duration_s=duration,
                              p_deadline_missed=None, meets_deadline=True)
    if isinstance(prep, ServingPrep):
        cost, duration = _serving(scenario, prep, start_s, sim)
        return ChoiceEstimate(choice=choice, cost_usd=cost, duration_s=duration,
                              p_deadline_missed=None, meets_deadline=True)
    return _training(scenario, choice, prep, start_s, sim, limits)


def _experiments(scenario: Scenario, prep: ExperimentsPrep, start_s: float,
                 sim: SimAssumptions) -> tuple[float, float]:
    phase: ExperimentsPhase = prep.phase
    u = scenario.uncertainty
    duration = scenario.calendar.months_s(phase.duration_months)
    pool = prep.source.rental or prep.source.spill
    if pool is None:
        return math.nan, duration  # bounded fixed fleets are not screened
    # jobs arrive evenly over the phase: the mean drift factor over its hours
    drift = float(price_drift(scenario, start_s + np.arange(
        0.5, duration / SECONDS_PER_HOUR) * SECONDS_PER_HOUR).mean())
    if prep.nodes is not None:  # a fixed rented fleet, held for the phase
        gpus = prep.nodes * prep.node.gpus
        return (gpus * pool.rate_usd_per_gpu_hour * drift * duration / SECONDS_PER_HOUR,
                duration)
    jobs = phase.arrivals_per_day * u.job_arrivals_scale.mean * duration / SECONDS_PER_DAY
    throughput = _quadrature(u.throughput_error or LogNormal(sigma=0.0))
    sizes = np.maximum(_quadrature(prep.gpu_hours), 0.0)
    run_s = np.maximum(1.0, sizes / prep.need.gpus * SECONDS_PER_HOUR / throughput)
    rule = pool.billing
    billed_s = np.ceil(np.maximum(run_s + sim.instance_startup_s, rule.minimum_s)
                       / rule.increment_s - 1e-9) * rule.increment_s
    per_job = float(billed_s.mean()) / SECONDS_PER_HOUR * pool.gpus_paid_for(prep.need.gpus)
    return jobs * per_job * pool.rate_usd_per_gpu_hour * drift, duration


def _serving(scenario: Scenario, prep: ServingPrep, start_s: float, sim: SimAssumptions
             ) -> tuple[float, float]:
    phase: ServingPhase = prep.phase
    duration = scenario.calendar.months_s(phase.duration_months)
    horizon_h = math.ceil(scenario.calendar.horizon_s / SECONDS_PER_HOUR)
    h0 = int(start_s // SECONDS_PER_HOUR)
    hours = max(0, min(math.ceil(duration / SECONDS_PER_HOUR), horizon_h - h0))
    growth = scenario.uncertainty.demand_growth_pct_per_month
    shape = resolve_shape(phase.load, sim, None if growth is None else growth.mean)
    rates = hourly_rates(shape, scenario.calendar.start, start_s, hours)
    drift = price_drift(scenario, start_s + (np.arange(hours) + 0.5) * SECONDS_PER_HOUR)
    cost = 0.0
    for entry in prep.entries:
        replicas = replicas_for(rates * entry.request_share, entry.sizing_capacity_s,
                                entry.min_replicas, entry.max_replicas)
        pool = entry.source.price_pool
        if isinstance(pool, RentalPool):
            paid = pool.gpus_paid_for(entry.gpus_per_replica)
            held = float(replicas @ drift)
        else:
            paid = entry.gpus_per_replica
            held = float(replicas.sum())
        rate = 0.0 if pool is None else pool.rate_usd_per_gpu_hour
        cost += held * paid * rate
    return cost, duration


def _training(scenario: Scenario, choice: PhaseChoice, prep: TrainingPrep, start_s: float,
              sim: SimAssumptions, limits: RiskLimits) -> ChoiceEstimate:
    phase: TrainingPhase = prep.phase
    u = scenario.uncertainty
    src = prep.source
    pool = src.spill if src.bounded else src.rental
    throughput = _quadrature(u.throughput_error or LogNormal(sigma=0.0))
    extra = np.maximum(0.0, _quadrature(prep.extra_loss)) * u.allin_loss_scale.mean
    work = prep.steady_s * u.training_tokens_scale.mean / throughput
    remaining = work / (1 - prep.evaluation_fraction)
    # Daly's expectation per checkpoint segment of τ work + C checkpoint, faults at λ:
    # E[segment] = (1/λ + R)(e^{λ(τ+C)} − 1) (docs/simulator.md §2)
    lam = prep.faults_per_gpu_hour * prep.gpus * u.failure_rate_scale.mean / SECONDS_PER_HOUR
    segment = prep.interval_s + prep.checkpoint_s
    if lam > 0:
        hardware = remaining / prep.interval_s * (1 / lam + prep.restart_s) * math.expm1(
            lam * segment)
    else:
        hardware = remaining / prep.interval_s * segment
    fallback_share = 0.0
    if pool is not None and pool.option is PurchaseOption.SPOT:
        hazard = (pool.instances_for(prep.gpus) * pool.spot_hazard_per_instance_hour
                  * u.spot_hazard_scale.mean / SECONDS_PER_HOUR)
        # each preemption costs a restart and, with a fallback, moves the reacquire window to
        # on demand: a share h·w / (1 + h·w) of the time runs there
        window = hazard * sim.spot_reacquire_s
        fallback_share = window / (1 + window) if src.fallback is not None else 0.0
        spot_hazard = hazard * (1 - fallback_share)
        hardware = hardware / max(1e-6, 1 - spot_hazard * prep.restart_s)
        if src.fallback is None:
            hardware += hardware * spot_hazard * sim.spot_reacquire_s
    run_s = hardware * (1 + extra)
    wait_s = 0.0
    cost = 0.0
    rented = pool is not None and not src.bounded
    if rented:
        run_s = run_s + sim.instance_startup_s
    if src.implied_commitment is not None:
        cost += src.implied_commitment.obligation_usd
    if choice.owned:
        servers = [owned_pool(purchase, scenario.calendar) for purchase in choice.owned]
        delivered = max(p.available_s for p in servers)
        wait_s = max(0.0, delivered - start_s)
        cost += sum(_owned_cost(scenario, p, prep.gpus * float(run_s.mean()))
                    for p in servers)
    if rented and pool is not None:
        held_h = float(run_s.mean()) / SECONDS_PER_HOUR * float(
            price_drift(scenario, np.array([start_s]))[0])
        paid = pool.gpus_paid_for(prep.gpus)
        cost += paid * held_h * (1 - fallback_share) * pool.rate_usd_per_gpu_hour
        if src.fallback is not None and fallback_share:
            cost += (src.fallback.gpus_paid_for(prep.gpus) * held_h * fallback_share
                     * src.fallback.rate_usd_per_gpu_hour)
    total_s = wait_s + run_s
    p_miss = None
    meets = True
    if phase.deadline_days is not None:
        p_miss = float(np.mean(total_s > phase.deadline_days * SECONDS_PER_DAY))
        allowed = (limits.max_p_deadline_missed if limits.max_p_deadline_missed is not None
                   else DEFAULT_DEADLINE_RISK)
        meets = p_miss <= allowed
    return ChoiceEstimate(choice=choice, cost_usd=cost, duration_s=float(total_s.mean()),
                          p_deadline_missed=p_miss, meets_deadline=meets)


def price_drift(scenario: Scenario, t_s: np.ndarray) -> np.ndarray:
    """The expected rental price factor at times ``t_s``: the scenario's mean drift per year,
    compounded from the start by whole calendar months as the simulator books it."""
    drift = scenario.uncertainty.price_drift_pct_per_year.mean
    months = np.searchsorted(np.asarray(scenario.calendar.month_starts_s()), t_s,
                             side="right") - 1
    factors: np.ndarray = (1 + drift / 100) ** (np.maximum(months, 0) / 12)
    return factors


def _owned_cost(scenario: Scenario, pool: OwnedPool, used_gpu_s: float) -> float:
    """Owned servers over the horizon: capex less the book value at its end, power at the
    utilization the phase gives them, colocation, maintenance and staff from delivery (the
    simulator's ``book_owned``, in one sum)."""
    server, n = pool.server, pool.count
    in_service_s = max(0.0, scenario.calendar.horizon_s - pool.available_s)
    months = in_service_s / SECONDS_PER_DAY / DAYS_PER_MONTH
    years = in_service_s / SECONDS_PER_HOUR / HOURS_PER_YEAR
    utilization = min(1.0, used_gpu_s / (pool.gpus * in_service_s)) if in_service_s else 0.0
    capex = n * server.capex_usd
    return (capex - n * server.book_value_usd(months)
            + n * years * (server.power_cost_usd_per_year(utilization)
                           + server.colocation_usd_per_year
                           + server.maintenance_staff_usd_per_year))


@functools.lru_cache(maxsize=64)
def _quadrature(dist: Distribution) -> np.ndarray:
    """A fixed, seeded sample of ``dist`` (the screen's expectation and risk over it);
    callers never modify it."""
    rng = np.random.default_rng(QUADRATURE_SEED)
    return np.array([draw(dist, rng) for _ in range(QUADRATURE_POINTS)], dtype=np.float64)
