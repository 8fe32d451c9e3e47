"""The work a simulation will do, estimated before it starts (issue 19 item 8).

A cheap pre-pass over the scenario, without preparing any plan: per plan and replication, the
experiment jobs expected (arrivals per day × the phase's days in the horizon × the mean of
``job_arrivals_scale``), the serving hours (the phase's hours in the horizon), and the
simulator events counted for the jobs that queue for a fixed pool (owned or reserved GPUs with
a count); then seconds from measured costs per
unit of work. The CLI prints the expected time before starting when it is long, so a scenario
of 1,000 plans or 100,000 jobs a day says so up front instead of running for hours in silence.

The costs per unit are process CPU seconds measured by ``benchmarks/bench_work_units.py``
(``run_plan`` on one process, variants of the test suite's lifecycle scenario at 10
replications, best of 2; a 2-core development machine under load, 2026-12-02, after issue 20's
block draws, closed-form FIFO queue and tiled serving load): an elastic experiment job ~0.17 µs
(1,200 arrivals a day against 12); a job queued for a fixed pool ~0.43 µs (the same on 320
reserved L4s: the closed-form queue, no SimPy event a job; the events it reports are still
counted, ~3 a job, for the run's event total); a serving hour ~0.5 µs (six months of serving
against twelve; a second request size adds nothing measurable: the tiled load is one shape for
all); a training phase ~0.04 ms; ~1.7 ms per replication otherwise; preparing a plan ~0.05 s
warm (the flagship; first calls load the catalog). Before issue 20 they were 15 µs, 75 µs, 0.5
µs per request size, 5 ms, 30 ms and 0.3 s. They are orders of magnitude, not a benchmark: the
estimate says minutes or hours, not seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from costsim.domain.phases import ExperimentsPhase, ServingPhase, TrainingPhase
from costsim.domain.plans import Plan
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Distribution
from costsim.units import HOURS_PER_DAY

DAYS_PER_MONTH = 365.25 / 12
HOURS_PER_CALENDAR_MONTH = DAYS_PER_MONTH * HOURS_PER_DAY

SECONDS_PER_ELASTIC_JOB = 0.2e-6
SECONDS_PER_QUEUED_JOB = 0.5e-6
EVENTS_PER_QUEUED_JOB = 3.0  # counted, not simulated one by one (costsim.sim.fifo)
SECONDS_PER_SERVING_HOUR = 0.5e-6
SECONDS_PER_TRAINING_PHASE = 0.05e-3
SECONDS_PER_REPLICATION = 2e-3
SECONDS_TO_PREPARE_A_PLAN = 0.1


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanWork:
    """One plan's work per replication."""

    plan: str
    jobs: float  # experiment jobs expected per replication
    queued_jobs: float  # of which queue for a fixed pool (SimPy events)
    serving_hours: float  # hours of serving simulated per replication (all phases)
    events: float  # simulator events expected per replication
    seconds_per_replication: float


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkEstimate:
    """The whole run's work: plans × replications, and the time expected on ``workers``."""

    plans: tuple[PlanWork, ...]
    replications: int
    workers: int
    seconds: float

    @property
    def plan_replications(self) -> int:
        """Plans × replications (× variants for a sweep)."""
        return len(self.plans) * self.replications

    @property
    def jobs(self) -> float:
        """Experiment jobs simulated in all, over every plan and replication."""
        return sum(p.jobs for p in self.plans) * self.replications

    @property
    def serving_hours(self) -> float:
        """Serving hours simulated in all."""
        return sum(p.serving_hours for p in self.plans) * self.replications

    @property
    def events(self) -> float:
        """Simulator events expected in all."""
        return sum(p.events for p in self.plans) * self.replications


def estimate_work(scenario: Scenario, *, replications: int, workers: int = 1,
                  plans: Sequence[str] | None = None, extra_plans: int = 0) -> WorkEstimate:
    """The work of simulating ``plans`` (default: all) of ``scenario`` ``replications`` times
    on ``workers`` processes, and ``extra_plans`` more plans of the same phases (the
    optimizer's finalists: each as much work as the chosen plans on average).

    Workers split each plan's replications, so they divide the replications' time, not the
    plans' preparation.
    """
    chosen = [p for p in scenario.plans if plans is None or p.name in plans]
    work = tuple(plan_work(scenario, plan) for plan in chosen)
    if extra_plans > 0 and work:
        work += (_average(work, "(a finalist)"),) * extra_plans
    return _estimate(work, replications, workers)


def combine(estimates: Sequence[WorkEstimate]) -> WorkEstimate:
    """Several estimates of the same replications as one (a sweep's variants)."""
    if not estimates:
        raise ValueError("no estimates to combine")
    first = estimates[0]
    work = tuple(p for e in estimates for p in e.plans)
    return _estimate(work, first.replications, first.workers)


def _estimate(work: tuple[PlanWork, ...], replications: int, workers: int) -> WorkEstimate:
    parallel = max(1, min(workers, replications))
    seconds = sum(SECONDS_TO_PREPARE_A_PLAN
                  + replications * p.seconds_per_replication / parallel for p in work)
    return WorkEstimate(plans=work, replications=replications, workers=parallel,
                        seconds=seconds)


def _average(work: Sequence[PlanWork], name: str) -> PlanWork:
    n = len(work)
    return PlanWork(plan=name, jobs=sum(p.jobs for p in work) / n,
                    queued_jobs=sum(p.queued_jobs for p in work) / n,
                    serving_hours=sum(p.serving_hours for p in work) / n,
                    events=sum(p.events for p in work) / n,
                    seconds_per_replication=sum(p.seconds_per_replication for p in work) / n)


def plan_work(scenario: Scenario, plan: Plan) -> PlanWork:
    """One plan's work per replication, from the phases it runs."""
    horizon_months = float(scenario.calendar.horizon_months)
    arrivals = _mean(scenario.uncertainty.job_arrivals_scale)
    uses = {use.phase: use for use in plan.uses}
    jobs = queued = hours = 0.0
    training = 0
    for phase in scenario.phases:
        if isinstance(phase, ExperimentsPhase):
            days = min(phase.duration_months, horizon_months) * DAYS_PER_MONTH
            expected = max(0.0, phase.arrivals_per_day * arrivals * days)
            jobs += expected
            use = uses.get(phase.name)
            if use is not None and any(_fixed_pool(entry.option, entry.count)
                                       for entry in use.entries):
                queued += expected
        elif isinstance(phase, ServingPhase):
            phase_hours = min(phase.duration_months, horizon_months) * HOURS_PER_CALENDAR_MONTH
            hours += phase_hours
        elif isinstance(phase, TrainingPhase):
            training += 1
    events = queued * EVENTS_PER_QUEUED_JOB
    seconds = (SECONDS_PER_REPLICATION + (jobs - queued) * SECONDS_PER_ELASTIC_JOB
               + queued * SECONDS_PER_QUEUED_JOB + hours * SECONDS_PER_SERVING_HOUR
               + training * SECONDS_PER_TRAINING_PHASE)
    return PlanWork(plan=plan.name, jobs=jobs, queued_jobs=queued, serving_hours=hours,
                    events=events, seconds_per_replication=seconds)


def _fixed_pool(option: PurchaseOption, count: int | None) -> bool:
    """Owned or reserved GPUs of a fixed count: jobs queue for them (SimPy processes)."""
    return count is not None and option not in (PurchaseOption.ON_DEMAND, PurchaseOption.SPOT)


def _mean(distribution: Distribution) -> float:
    """The distribution's mean (a normal's is a field, the others' a method)."""
    mean = distribution.mean
    return float(mean() if callable(mean) else mean)
