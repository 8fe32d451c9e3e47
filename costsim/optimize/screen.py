"""The analytic screen: the expected cost of each phase choice without the simulator's event
loop, and the best few whole plans by their summed estimates (issue 11 item 2, stage 1).

Each choice is priced from its probe preparation (:mod:`costsim.optimize.space`) with the rules
the simulator books by, in expectation over the scenario's uncertainty means
(docs/optimizer.md "The screen" gives the equations):

* experiments, elastic: jobs = arrivals/day × E[arrivals factor] × days; each job is billed its
  run time plus the instance start-up, rounded by the cloud's minimum and increment, on its
  job-sized instances: cost = jobs × E[billed h] × GPUs paid × rate;
* training, rented or reserved: the training front's rating
  (:mod:`costsim.optimize.training_front`: expected wall and billed time, P(deadline missed),
  the whole obligation of a reservation); owned: the same run model after the servers'
  delivery, and the servers' capex less the book value at the horizon's end, power at the
  utilization the run gives them, colocation, maintenance and staff from delivery;
* serving: the phase's hourly rates (its profile at the mean growth), replicas per hour by the
  simulator's autoscaling rule per fleet entry, vectorized over the hours:
  Σ_h replicas_h × GPUs paid per replica × rate.

Rentals are priced with the scenario's mean price drift in the month of use. A whole plan adds
the copies of its data between the clouds its choices run on (:func:`data_moves_usd`, the
simulator's rule). Not in the screen (the simulator prices them): storage and the plan's own
monthly egress (the same for every candidate up to the storage cloud), a fixed experiment
fleet's queue, the serving load's spread around its mean growth.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costsim.catalog.perf_defaults import allin_loss_defaults, perf_defaults
from costsim.catalog.servers import OWNED_CLOUD
from costsim.catalog.sim_defaults import sim_assumptions
from costsim.domain.measurements import Basis
from costsim.domain.phases import ExperimentsPhase, ServingPhase, TrainingPhase
from costsim.domain.plans import Plan
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.domain.simulation import SimAssumptions
from costsim.domain.uncertainty import Distribution, Fixed, LogNormal
from costsim.memory.estimate import shape_of
from costsim.optimize.choice import PhaseChoice
from costsim.optimize.space import SearchSpace
from costsim.optimize.training_time import RunInputs, expect_run, product, quadrature, run_factors
from costsim.sim.fleet import replicas_for
from costsim.sim.load import hourly_rates, resolve_shape
from costsim.sim.occupancy import interval_gpus
from costsim.sim.performance_basis import capacity_error
from costsim.sim.pools import DAYS_PER_MONTH, OwnedPool, RentalPool, owned_pool
from costsim.sim.prepare import ExperimentsPrep, ServingPrep, TrainingPrep
from costsim.sim.spot_jobs import expected_spot_job_s
from costsim.sim.transfer import data_moves, entry_clouds
from costsim.units import HOURS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR

# Each phase's best choices that enter with the other phases at their best (the best and three
# runners-up): with a sum of independent phase costs the cheapest sums alone would vary the
# cheapest phases first
PER_PHASE = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceEstimate:
    """A phase choice and its analytic estimate."""

    choice: PhaseChoice
    cost_usd: float  # expected cost of the phase (with the capacity the choice buys)
    duration_s: float  # expected time from the phase's start to its end
    p_deadline_missed: float | None  # training with a deadline; None otherwise
    meets_deadline: bool
    # what the plan's data moves cost (costsim.sim.transfer): the clouds the choice runs on,
    # the scenario's data set and the retained checkpoints the choice writes, in GB
    clouds: tuple[str, ...] = ()
    dataset_gb: float = 0.0
    checkpoint_gb: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Combination:
    """One choice per phase, as a whole plan, and the summed screen cost."""

    estimates: tuple[ChoiceEstimate, ...]  # in phase order
    cost_usd: float  # the choices' costs and the data moves between their clouds

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
                   cost_usd=math.fsum([*(e.cost_usd for e in estimates),
                                       data_moves_usd(estimates)]))

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
    """``count`` whole plans from the choices that meet each phase's deadline (all of them
    when none does), cheapest first by summed screen cost.

    The screen's error is largest where a phase's cost is (a year of serving), so each phase's
    ``per_phase`` − 1 runners-up enter with the other phases at their best (the second choices
    first, the costliest phase's first), before the cheapest remaining sums fill the rest: the
    Monte Carlo then decides between the choices the screen ranks close.
    """
    shortlists = []
    for _, estimates in screened:
        meeting = [e for e in estimates if e.meets_deadline]
        shortlists.append((meeting or list(estimates))[:max(count, 1)])
    if not shortlists or not all(shortlists):
        return []
    best = [s[0] for s in shortlists]
    ordered = [Combination.of(best)]
    # runners-up by rank, the costliest phase first (where the screen's error weighs most)
    by_cost = sorted(range(len(best)), key=lambda p: -best[p].cost_usd)
    for k in range(1, per_phase):
        for p in by_cost:
            if k < len(shortlists[p]) and len(ordered) < count:
                ordered.append(Combination.of([shortlists[p][k] if q == p else b
                                               for q, b in enumerate(best)]))
    cheapest = cheapest_combinations(shortlists, count)
    filled = _filled(ordered, cheapest, count)
    if len(filled) < count and len(cheapest) == count:  # equal combinations: take them all
        filled = _filled(ordered, all_combinations(shortlists), count)
    return sorted(filled, key=Combination.order)


def _filled(ordered: Sequence[Combination], combos: Sequence[Combination],
            count: int) -> list[Combination]:
    """``ordered`` and then the first of ``combos`` not in it, up to ``count`` in all."""
    out = list(ordered)
    for combo in combos:
        if len(out) >= count:
            break
        if combo not in out:
            out.append(combo)
    return out


def all_combinations(per_phase: Sequence[Sequence[ChoiceEstimate]]) -> list[Combination]:
    """Every combination of one estimate per phase, cheapest first (ties by name)."""
    return sorted((Combination.of(pick) for pick in itertools.product(*per_phase)),
                  key=Combination.order)


def cheapest_combinations(per_phase: Sequence[Sequence[ChoiceEstimate]],
                          count: int) -> list[Combination]:
    """The first ``count`` of :func:`all_combinations` (the same combinations in the same
    order), without building the whole product: ~100,000 combinations for the flagship's
    shortlists at ``--top`` 72, a few hundred of which can be among the cheapest.

    Combinations are drawn in the order of their choices' summed costs, a lower bound on their
    cost (the data moves add a non-negative amount; ``math.fsum`` rounds correctly, so a bound
    never exceeds the cost): from each phase's cheapest choice, a drawn combination's
    successors move one phase to its next dearer choice, a heap gives the lowest bound next
    (each phase's list sorted by cost, so a successor's bound is never below its
    predecessor's: every combination not yet drawn has a bound at least the heap's least).
    Once ``count`` are drawn and the least bound left exceeds the ``count``-th lowest cost drawn,
    every combination left costs more than each of the ``count`` cheapest, which are all drawn;
    sorted as :func:`all_combinations` sorts (cost, then name, then the product's order, which
    its stable sort keeps), they are its first ``count``. Lists not sorted by a finite cost
    (never from the screen) take the whole product."""
    if count < 1 or not per_phase or not all(per_phase):
        return []
    costs = [[e.cost_usd for e in estimates] for estimates in per_phase]
    if not all(math.isfinite(c) for row in costs for c in row) or any(
            row != sorted(row) for row in costs):
        return all_combinations(per_phase)[:count]

    def bound(index: tuple[int, ...]) -> float:
        return math.fsum(costs[p][i] for p, i in enumerate(index))

    first = (0,) * len(per_phase)
    frontier = [(bound(first), first)]
    seen = {first}
    drawn: list[tuple[float, str, tuple[int, ...], Combination]] = []
    lowest: list[float] = []  # the ``count`` lowest costs drawn, as a max-heap (negated)
    while frontier and (len(lowest) < count or frontier[0][0] <= -lowest[0]):
        low, index = heapq.heappop(frontier)
        combo = Combination.of([per_phase[p][i] for p, i in enumerate(index)])
        if not combo.cost_usd >= low:  # a negative data move: the bound fails, take it all
            return all_combinations(per_phase)[:count]
        drawn.append((combo.cost_usd, combo.slug, index, combo))
        heapq.heappush(lowest, -combo.cost_usd)
        if len(lowest) > count:
            heapq.heappop(lowest)
        for p in range(len(index)):
            if index[p] + 1 < len(per_phase[p]):
                after = (*index[:p], index[p] + 1, *index[p + 1:])
                if after not in seen:
                    seen.add(after)
                    heapq.heappush(frontier, (bound(after), after))
    drawn.sort(key=lambda d: d[:3])
    return [d[3] for d in drawn[:count]]


def data_moves_usd(estimates: Sequence[ChoiceEstimate]) -> float:
    """What copying the plan's data between the choices' clouds costs, by the simulator's rule
    (:mod:`costsim.sim.transfer`): each move carries the data set and the retained checkpoints
    of the training choices before it in phase order."""
    if not estimates:
        return 0.0
    moves = data_moves([(e.choice.phase, e.clouds) for e in estimates])
    written: dict[str, float] = {}
    total = 0.0
    for e in estimates:
        for move in (m for m in moves if m.phase == e.choice.phase):
            gb = e.dataset_gb + math.fsum(written.values())
            total += round(gb * move.usd_per_gb, 2)
        written[e.choice.phase] = e.checkpoint_gb
    return total


def estimate(scenario: Scenario, choice: PhaseChoice, start_s: float, sim: SimAssumptions,
             limits: RiskLimits) -> ChoiceEstimate:
    """The analytic estimate of ``choice`` for a phase starting at ``start_s``, with what its
    data moves need (the clouds it runs on, the checkpoints it keeps)."""
    rated = _estimate(scenario, choice, start_s, sim, limits)
    prep, phase = choice.prep, scenario.phase(choice.phase)
    if prep is None:  # a training option the front rated: its offering's cloud
        clouds: tuple[str, ...] = (OWNED_CLOUD,) if choice.rated is None or (
            choice.rated.cloud is None) else (choice.rated.cloud,)
    else:
        sources = ([e.source for e in prep.entries] if isinstance(prep, ServingPrep)
                   else [prep.source])
        clouds = tuple(c for source in sources for c in entry_clouds(source, ()))
    checkpoint_bytes = 0.0
    if isinstance(prep, TrainingPrep):
        checkpoint_bytes = prep.checkpoint_bytes
    elif isinstance(phase, TrainingPhase):  # the simulator's size: every parameter's state
        checkpoint_bytes = (shape_of(scenario.model(phase.model).architecture).params_total
                            * perf_defaults().goodput.checkpoint_bytes_per_param)
    return dataclasses.replace(
        rated, clouds=clouds, dataset_gb=scenario.data.dataset_gb,
        checkpoint_gb=scenario.data.checkpoints_retained * checkpoint_bytes / 1e9)


def _estimate(scenario: Scenario, choice: PhaseChoice, start_s: float, sim: SimAssumptions,
              limits: RiskLimits) -> ChoiceEstimate:
    prep = choice.prep
    if isinstance(prep, ExperimentsPrep):
        cost, duration = _experiments(scenario, prep, start_s, sim)
        return ChoiceEstimate(choice=choice, cost_usd=cost, duration_s=duration,
                              p_deadline_missed=None, meets_deadline=True)
    if isinstance(prep, ServingPrep):
        cost, duration = _serving(scenario, prep, start_s, sim)
        return ChoiceEstimate(choice=choice, cost_usd=cost, duration_s=duration,
                              p_deadline_missed=None, meets_deadline=True)
    return _training(scenario, choice, start_s, limits)


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
        0.5, duration / SECONDS_PER_HOUR) * SECONDS_PER_HOUR,
        pool.offering.effective_date).mean())
    if prep.nodes is not None:  # a fixed rented fleet, held for the phase
        gpus = prep.nodes * prep.node.gpus
        return (gpus * pool.rate_usd_per_gpu_hour * drift * duration / SECONDS_PER_HOUR,
                duration)
    jobs = phase.arrivals_per_day * u.job_arrivals_scale.mean * duration / SECONDS_PER_DAY
    # E over job sizes × throughput errors of each job's billed time (a product rule)
    (sizes, throughput), weights = product(
        quadrature(prep.gpu_hours), quadrature(u.throughput_error or LogNormal(
            sigma=allin_loss_defaults().throughput_error_sigma)))
    run_s = np.maximum(1.0, np.maximum(sizes, 0.0) / prep.need.gpus * SECONDS_PER_HOUR
                       / throughput)
    rule = pool.billing
    billed_s = np.ceil(np.maximum(run_s + sim.instance_startup_s, rule.minimum_s)
                       / rule.increment_s - 1e-9) * rule.increment_s
    usd_per_s = pool.rate_usd_per_gpu_hour * pool.gpus_paid_for(prep.need.gpus) / SECONDS_PER_HOUR
    fallback = prep.source.fallback
    if pool.option is PurchaseOption.SPOT:  # preempted attempts and restarts (sim/spot_jobs.py)
        hazard = pool.spot_hazard_per_s(prep.need.gpus, u.spot_hazard_scale.mean)
        held = [expected_spot_job_s(float(b), hazard, fallback=fallback is not None)
                for b in billed_s]
        fallback_usd_per_s = 0.0 if fallback is None else (
            fallback.rate_usd_per_gpu_hour * fallback.gpus_paid_for(prep.need.gpus)
            / SECONDS_PER_HOUR)
        per_job = float(weights @ np.array([spot * usd_per_s + back * fallback_usd_per_s
                                            for spot, back in held]))
    else:
        per_job = float(weights @ billed_s) * usd_per_s
    return jobs * per_job * drift, duration


def _serving(scenario: Scenario, prep: ServingPrep, start_s: float, sim: SimAssumptions
             ) -> tuple[float, float]:
    phase: ServingPhase = prep.phase
    duration = scenario.calendar.months_s(phase.duration_months)
    horizon_s = scenario.calendar.horizon_s
    # the simulator's buckets: the phase's exact span, its last (or first) hour pro rata
    _, cover = interval_gpus(math.ceil(horizon_s / SECONDS_PER_HOUR), start_s,
                             min(start_s + duration, horizon_s), 1.0)
    hours = cover.size
    growth = scenario.uncertainty.demand_growth_pct_per_month
    shape = resolve_shape(phase.load, sim, None if growth is None else growth.mean)
    rates = hourly_rates(shape, scenario.calendar.start, start_s, hours)
    if prep.api is not None:  # a pay-per-token API: the served requests at its price
        api = prep.api
        served = np.minimum(rates, api.capacity_requests_per_s) * cover * SECONDS_PER_HOUR
        return (float(served.sum()) * api.price.usd_per_request(api.prompt_tokens,
                                                                 api.output_tokens), duration)
    # The simulator's autoscaler sizes on each future's drawn capacity (load-based scaling), so
    # the expected replicas follow E[1/capacity]: the predicted share of the work at E[1/X] of
    # its prediction, X the factor drawn on it (the shared throughput draw times the serving
    # model's own: e^(σ²/2) for the default lognormal). Ranking at the median instead would
    # screen predicted fleets ~20 % cheaper than they simulate, against measured ones
    # (docs/optimizer.md, "The screen").
    inverse = _mean_inverse(capacity_error(scenario.uncertainty.throughput_error,
                                           prep.model_error))
    cost = 0.0
    for entry in prep.entries:
        replicas = replicas_for(rates * entry.request_share, entry.sizing_capacity_at(
            1.0 / inverse), entry.min_replicas, entry.max_replicas)
        pool = entry.source.price_pool
        if isinstance(pool, RentalPool):
            paid = pool.gpus_paid_for(entry.gpus_per_replica)
            drift = price_drift(scenario, start_s + (np.arange(hours) + 0.5) * SECONDS_PER_HOUR,
                                pool.offering.effective_date)
            held = float(replicas @ (drift * cover))
        else:
            paid = entry.gpus_per_replica
            held = float(replicas @ cover)
        rate = 0.0 if pool is None else pool.rate_usd_per_gpu_hour
        cost += held * paid * rate
    return cost, duration


def _mean_inverse(dist: Distribution) -> float:
    """E[1/X] of a positive throughput factor X, by the screen's quadrature (a lognormal's:
    e^(σ²/2) about its median)."""
    rule = quadrature(dist)
    return float(rule.weights @ (1.0 / np.maximum(rule.values, 1e-9)))


def _training(scenario: Scenario, choice: PhaseChoice, start_s: float, limits: RiskLimits
              ) -> ChoiceEstimate:
    """A rented or reserved run: the training front's rating. Owned servers: the front's run
    model (:func:`costsim.optimize.training_time.expect_run`) on the servers, after their
    delivery, and the servers' cost over the horizon."""
    rated = choice.rated
    if rated is not None:
        return ChoiceEstimate(choice=choice, cost_usd=rated.cost_usd,
                              duration_s=rated.wall_time_s,
                              p_deadline_missed=rated.p_deadline_missed,
                              meets_deadline=rated.meets_deadline)
    prep = choice.prep
    if not isinstance(prep, TrainingPrep):
        raise TypeError(f"choice '{choice.slug}' is neither rated nor prepared")
    phase: TrainingPhase = prep.phase
    block, allin = scenario.uncertainty, allin_loss_defaults()
    factors = run_factors(
        tokens_scale=block.training_tokens_scale,
        throughput_error=(Fixed(value=1.0) if prep.basis is Basis.MEASURED  # DESIGN §12
                          else block.throughput_error or LogNormal(
                              sigma=allin.training_sigma)),  # as training_front's default
        failure_scale=block.failure_rate_scale, hazard_scale=block.spot_hazard_scale,
        extra_loss=prep.extra_loss, allin_scale=block.allin_loss_scale)
    run = expect_run(RunInputs(
        steady_s=prep.steady_s, checkpoint_s=prep.checkpoint_s, interval_s=prep.interval_s,
        restart_s=prep.restart_s, evaluation_fraction=prep.evaluation_fraction,
        fault_rate_per_s=prep.faults_per_gpu_hour * prep.gpus / SECONDS_PER_HOUR), factors)
    servers = [owned_pool(purchase, scenario.calendar, scenario.servers)
               for purchase in choice.owned]
    wait_s = max([0.0, *(p.available_s - start_s for p in servers)])
    cost = sum(_owned_cost(scenario, p, prep.gpus * run.wall_s) for p in servers)
    p_miss, meets = None, True
    if phase.deadline_days is not None:
        deadline_s = phase.deadline_days * SECONDS_PER_DAY
        p_miss = run.p_longer_than(deadline_s - wait_s)
        meets = (p_miss <= limits.max_p_deadline_missed
                 if limits.max_p_deadline_missed is not None
                 else wait_s + run.wall_s <= deadline_s)
    return ChoiceEstimate(choice=choice, cost_usd=cost, duration_s=wait_s + run.wall_s,
                          p_deadline_missed=p_miss, meets_deadline=meets)


def price_drift(scenario: Scenario, t_s: np.ndarray, effective_date: str) -> np.ndarray:
    """The expected rental price factor at times ``t_s`` of a price dated ``effective_date``:
    the scenario's mean drift per year, compounded by whole calendar months from the price's
    date as the simulator books it."""
    drift = scenario.uncertainty.price_drift_pct_per_year.mean
    calendar = scenario.calendar
    index = np.clip(np.searchsorted(np.asarray(calendar.month_starts_s()), t_s, side="right")
                    - 1, 0, calendar.horizon_months - 1)
    priced = np.array([calendar.months_priced_since(effective_date, m)
                       for m in range(calendar.horizon_months)], dtype=np.float64)
    factors: np.ndarray = (1 + drift / 100) ** (priced[index] / 12)
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
