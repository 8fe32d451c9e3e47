"""The up-front work estimate: jobs, serving hours and events per plan-replication, and a time
that is long exactly for the scenarios that are (1,000 plans, 100,000 jobs a day)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from costsim.domain.phases import ExperimentsPhase
from costsim.domain.plans import PhaseUse, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Triangular, Uncertainty
from costsim.sim.work import (
    DAYS_PER_MONTH,
    HOURS_PER_CALENDAR_MONTH,
    combine,
    estimate_work,
    plan_work,
)
from tests.domain.scenario_builders import lifecycle

MINUTE = 60.0


def _with_arrivals(per_day: float, **changes: object) -> Scenario:
    base = lifecycle(**changes)
    prototype = base.phases[0]
    assert isinstance(prototype, ExperimentsPhase)
    return replace(base, phases=(replace(prototype, arrivals_per_day=per_day),
                                 *base.phases[1:]))


def test_jobs_and_serving_hours_are_the_scenarios_own() -> None:
    scenario = lifecycle(uncertainty=Uncertainty(
        job_arrivals_scale=Triangular(low=0.5, mode=1.0, high=1.5)))
    work = plan_work(scenario, scenario.plans[0])
    assert work.jobs == pytest.approx(12 * 2 * DAYS_PER_MONTH)  # mean scale 1
    assert work.queued_jobs == 0  # an elastic on-demand pool: no queue, no SimPy events
    assert work.events == 0
    assert work.serving_hours == pytest.approx(12 * HOURS_PER_CALENDAR_MONTH)


def test_jobs_queued_for_owned_or_reserved_gpus_raise_events() -> None:
    scenario = lifecycle()
    plan = scenario.plans[0]
    owned = replace(plan, uses=(PhaseUse(phase="prototype", entries=(UseEntry(
        gpu="A10G", option=PurchaseOption.RESERVED_1Y_NO_UPFRONT, count=4),)),
        *plan.uses[1:]))
    work = plan_work(scenario, owned)
    assert work.queued_jobs == work.jobs > 0
    assert work.events == pytest.approx(3 * work.jobs)
    assert work.seconds_per_replication > plan_work(scenario, plan).seconds_per_replication


def test_a_small_scenario_is_not_long() -> None:
    estimate = estimate_work(lifecycle(), replications=200, workers=4)
    assert estimate.plan_replications == 200
    assert estimate.seconds < MINUTE


def test_a_thousand_plans_are_long_at_two_thousand_replications() -> None:
    base = lifecycle()
    many = replace(base, plans=tuple(replace(base.plans[0], name=f"plan-{i}")
                                     for i in range(1000)))
    estimate = estimate_work(many, replications=2000, workers=4)
    assert estimate.plan_replications == 2_000_000
    assert estimate.seconds > 30 * MINUTE
    only_two = estimate_work(many, replications=2000, workers=4, plans=["plan-0", "plan-1"])
    assert only_two.seconds < MINUTE


def test_a_hundred_thousand_jobs_a_day_take_minutes_and_are_long_at_ten_thousand() -> None:
    # jobs cost ~0.2 µs each since the block draws (issue 20): 200 replications of 100,000
    # arrivals a day for two months (12M jobs each) are about a minute on 4 workers, not hours
    scenario = _with_arrivals(100_000)
    estimate = estimate_work(scenario, replications=200, workers=4)
    assert estimate.jobs == pytest.approx(100_000 * 2 * DAYS_PER_MONTH * 200)
    assert MINUTE / 2 < estimate.seconds < 5 * MINUTE
    assert estimate_work(scenario, replications=10_000, workers=4).seconds > 30 * MINUTE


def test_workers_divide_the_replications_and_variants_add_up() -> None:
    scenario = _with_arrivals(10_000)
    one = estimate_work(scenario, replications=100, workers=1)
    four = estimate_work(scenario, replications=100, workers=4)
    assert four.seconds < one.seconds / 3
    assert estimate_work(scenario, replications=1, workers=8).workers == 1
    both = combine([one, one])
    assert both.plan_replications == 2 * one.plan_replications
    assert both.seconds == pytest.approx(2 * one.seconds)
    finalists = estimate_work(scenario, replications=100, extra_plans=8)
    assert len(finalists.plans) == 9
    assert finalists.seconds == pytest.approx(9 * one.seconds)
