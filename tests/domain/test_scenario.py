"""A scenario built in code is held to the file's rules: names exist, no cycles, dates in the
horizon, every plan says how each phase runs."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from costsim.domain.phases import (
    ExperimentsPhase,
    GenericJob,
    LoadProfile,
    RequestBucket,
    ServingPhase,
    TrainingPhase,
)
from costsim.domain.plans import Commitment, OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.scenario import DataSizes, ScenarioPrices
from costsim.domain.uncertainty import Fixed
from costsim.domain.workload import ParallelLayout
from costsim.errors import ScenarioError
from tests.domain.scenario_builders import lifecycle


def _plan(**changes: object) -> Plan:
    return replace(lifecycle().plans[0], **changes)  # type: ignore[arg-type]


def test_the_lifecycle_scenario_orders_its_phases_by_dependency() -> None:
    scenario = lifecycle()
    assert [p.name for p in scenario.phase_order()] == ["prototype", "train", "serve"]
    shuffled = lifecycle(phases=tuple(reversed(scenario.phases)))
    assert [p.name for p in shuffled.phase_order()] == ["prototype", "train", "serve"]


def test_a_cycle_in_after_is_an_error_naming_the_phases() -> None:
    scenario = lifecycle()
    proto = replace(scenario.phases[0], after=("serve",))
    with pytest.raises(ScenarioError, match=r"phases\.after.*cycle.*prototype"):
        lifecycle(phases=(proto, *scenario.phases[1:]))


def test_unknown_after_and_model_names_suggest_the_known_ones() -> None:
    scenario = lifecycle()
    train = replace(scenario.phases[1], after=("prototyp",))
    with pytest.raises(ScenarioError, match=r"phases\.train\.after.*'prototyp'.*'prototype'"):
        lifecycle(phases=(scenario.phases[0], train, scenario.phases[2]))
    train = replace(scenario.phases[1], model="asistant")
    with pytest.raises(ScenarioError, match=r"phases\.train\.model.*did you mean 'assistant'"):
        lifecycle(phases=(scenario.phases[0], train, scenario.phases[2]))


def test_every_plan_must_cover_every_phase() -> None:
    plan = _plan(uses=lifecycle().plans[0].uses[:2])
    with pytest.raises(ScenarioError, match=r"plans\.all-on-demand\.use.*serve"):
        lifecycle(plans=(plan,))


def test_empty_plans_and_duplicate_names_are_errors() -> None:
    with pytest.raises(ScenarioError, match="plans: needs at least one plan"):
        lifecycle(plans=())
    with pytest.raises(ScenarioError, match="'all-on-demand' is used twice"):
        lifecycle(plans=(_plan(), _plan()))


def test_only_serving_mixes_gpu_types() -> None:
    uses = list(lifecycle().plans[0].uses)
    uses[1] = PhaseUse(phase="train", entries=(UseEntry(gpu="H100", count=8),
                                                UseEntry(gpu="A100-80GB", count=8)))
    with pytest.raises(ScenarioError, match="only a serving phase may mix GPU types"):
        lifecycle(plans=(_plan(uses=tuple(uses)),))
    uses[1] = lifecycle().plans[0].uses[1]
    uses[2] = PhaseUse(phase="serve", entries=(UseEntry(gpu="L4"), UseEntry(gpu="H100")))
    assert len(lifecycle(plans=(_plan(uses=tuple(uses)),)).plans[0].uses[2].entries) == 2


def test_commitment_and_purchase_dates_must_fall_in_the_horizon() -> None:
    late = Commitment(gpu="L4", count=8, term_years=1, payment=Payment.NO_UPFRONT,
                      start=date(2029, 1, 1))
    with pytest.raises(ScenarioError, match=r"commitments\.0\.start.*horizon"):
        lifecycle(plans=(_plan(commitments=(late,)),))
    early = OwnedPurchase(server="hgx-h100-8", count=1, purchase=date(2026, 12, 1))
    with pytest.raises(ScenarioError, match=r"owned\.0\.purchase.*horizon"):
        lifecycle(plans=(_plan(owned=(early,)),))


def test_spill_needs_a_capacity_bound_option_and_fallback_backs_spot() -> None:
    with pytest.raises(ScenarioError, match="spill"):
        UseEntry(gpu="H100", spill=PurchaseOption.ON_DEMAND)
    with pytest.raises(ScenarioError, match="fallback"):
        UseEntry(gpu="H100", fallback=PurchaseOption.ON_DEMAND)


def test_a_fixed_layout_must_match_the_plans_gpu_count() -> None:
    scenario = lifecycle()
    train = replace(scenario.phases[1], layout=ParallelLayout(tp=2, dp=4))
    with pytest.raises(ScenarioError, match="needs 8 GPUs, the plan gives 16"):
        lifecycle(phases=(scenario.phases[0], train, scenario.phases[2]))


@pytest.mark.parametrize(
    ("make", "key"),
    [
        (lambda: TrainingPhase(name="t", model="m", tokens=float("inf")), "phases.t.tokens"),
        (lambda: TrainingPhase(name="t", model="m", tokens=-5), "phases.t.tokens"),
        (lambda: ExperimentsPhase(name="e", duration_months=1, arrivals_per_day=0,
                                  job=GenericJob(gpu_memory_gib=12, gpu_hours=Fixed(value=1))),
         "arrivals_per_day"),
        (lambda: GenericJob(gpu_memory_gib=12, gpu_hours=Fixed(value=-1)), "job.gpu_hours"),
        (lambda: LoadProfile(peak_requests_per_s=1e308), "peak_requests_per_s"),
        (lambda: ServingPhase(name="s", duration_months=1, model="m",
                              load=LoadProfile(peak_requests_per_s=1),
                              requests=(RequestBucket(share=0.5, prompt_tokens=10,
                                                      output_tokens=10),)),
         "shares must add up to 1"),
        (lambda: DataSizes(dataset_gb=-1), "data.dataset_gb"),
        (lambda: ScenarioPrices(gpu_price_change_pct=(("H100", -100.0),)),
         "gpu_price_change_pct.H100"),
        (lambda: lifecycle(budget_usd=float("nan")), "budget_usd"),
    ],
)
def test_numbers_out_of_their_documented_range_name_their_key(make: object, key: str) -> None:
    with pytest.raises(ScenarioError, match=key):
        make()  # type: ignore[operator]


def test_price_factor_applies_only_to_the_named_gpu() -> None:
    prices = ScenarioPrices(gpu_price_change_pct=(("H100", -20.0),))
    assert prices.price_factor("H100") == pytest.approx(0.8)
    assert prices.price_factor("A100") == 1.0
