"""The reservation round also sizes an instance-family savings plan on the simulated demand,
where the cloud the phase rents on sells one; the variant runs as sized."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from costsim.catalog.prices import price_book
from costsim.domain.calendar import Calendar
from costsim.domain.phases import LoadProfile, RequestBucket, ServingPhase, Slo
from costsim.domain.plans import Autoscale, PhaseUse, Plan, UseEntry
from costsim.domain.scenario import Scenario
from costsim.optimize.reservation_round import reservation_round, variant_notes
from costsim.sim.ledger import Category
from costsim.sim.montecarlo import run_plan
from costsim.sim.prepare import prepare_plan
from tests.domain.scenario_builders import llama_8b


def _serving(cloud: str) -> Scenario:
    phase = ServingPhase(name="serve", duration_months=12, model="assistant",
                         load=LoadProfile(peak_requests_per_s=20, diurnal=True),
                         requests=(RequestBucket(share=1.0, prompt_tokens=800,
                                                 output_tokens=250),),
                         slo=Slo(ttft_p95_s=2.0, tpot_p95_s=0.1))
    plan = Plan(name="rent", cloud=cloud, uses=(PhaseUse(phase="serve", entries=(UseEntry(
        gpu="L4", autoscale=Autoscale(min_replicas=1, max_replicas=64)),)),))
    return Scenario(name="s", calendar=Calendar(start=date(2027, 1, 1), horizon_months=12),
                    models=(llama_8b(),), phases=(phase,), plans=(plan,))


def test_a_savings_plan_is_sized_where_the_rented_cloud_sells_one() -> None:
    scenario = _serving("aws")
    plan = scenario.plans[0]
    result = run_plan(prepare_plan(scenario, plan), seed=0, replications=3)
    _, variants = reservation_round(scenario, plan, result, price_book())
    (spend,) = [v for v in variants if v.savings_plan is not None]
    sp = spend.savings_plan
    assert sp is not None
    assert (sp.cloud, sp.family, sp.start) == ("aws", "L4", date(2027, 1, 1))
    # c GPUs at the plan's rate: c x r_od x (1 - d), with r_od the rented L4's on-demand rate
    rate = next(p.rate_usd_per_gpu_hour for p in result.prices if p.option == "on-demand")
    assert sp.usd_per_hour == round(spend.level.gpus * rate * (1 - spend.sizing.discount), 2)
    assert spend.level.savings_usd > 0
    assert "savings plan" in variant_notes(spend)[0]
    # the variant keeps renting on demand; the plan covers it up to the commitment
    assert spend.plan.uses == plan.uses
    ran = run_plan(prepare_plan(scenario, spend.plan), seed=0, replications=3)
    assert ran.ledger is not None
    covered = [x for x in ran.ledger.lines
               if x.key.option.startswith("savings-plan") and x.key.category is Category.COMPUTE]
    assert covered
    assert covered[0].gpu_hours > 0
    assert ran.cost_usd is not None
    assert result.cost_usd is not None
    assert ran.cost_usd.mean < result.cost_usd.mean


@pytest.mark.parametrize("cloud", ["lambda"])
def test_no_savings_plan_where_the_cloud_sells_none(cloud: str) -> None:
    scenario = _serving(cloud)
    plan = scenario.plans[0]
    result = run_plan(prepare_plan(scenario, plan), seed=0, replications=2)
    _, variants = reservation_round(scenario, replace(plan), result, price_book())
    assert all(v.savings_plan is None for v in variants)
