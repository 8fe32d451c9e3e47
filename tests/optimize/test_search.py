"""The two-stage plan search: it never does worse than the scenario's own plans, it finds what an
exhaustive search finds, it respects the limits, and its screen is close to the simulator."""

from __future__ import annotations

import itertools
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from costsim.catalog.prices import price_book
from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.phases import ExperimentsPhase, GenericJob, TrainingPhase
from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.domain.uncertainty import Fixed, LogNormal, Uncertainty
from costsim.optimize.result import Objective, OptimizeResult, Origin
from costsim.optimize.search import optimize_scenario
from costsim.optimize.space import search_space
from tests.domain.scenario_builders import lifecycle

SCENARIOS = Path(__file__).parents[2] / "scenarios"
REPLICATIONS = 5


@cache
def shipped(name: str) -> Scenario:
    return load_scenario_file(SCENARIOS / f"{name}.yaml").scenario


@cache
def optimized(name: str, exhaustive: bool = False, top_k: int = 8) -> OptimizeResult:
    return optimize_scenario(shipped(name), seed=11, replications=REPLICATIONS,
                             exhaustive=exhaustive, top_k=top_k)


def _best_hand_written(result: OptimizeResult) -> float:
    values = [r.objective_usd for r in result.ranked
              if r.candidate.origin is Origin.HAND_WRITTEN and r.within_limits]
    return min(v for v in values if v is not None)


def _same_plan(a: Plan, b: Plan) -> bool:
    return (a.uses, a.commitments, a.owned, a.cloud) == (b.uses, b.commitments, b.owned, b.cloud)


@pytest.mark.parametrize("name", [
    "seed-three-jobs", pytest.param("pretrain-70b-deadline", marks=pytest.mark.slow),
    pytest.param("seed-startup-4090", marks=pytest.mark.slow)])
def test_two_stage_search_finds_the_exhaustive_best(name: str) -> None:
    # two finalists from the screen against every plan of the space
    two_stage, exhaustive = optimized(name, top_k=2), optimized(name, True)
    assert exhaustive.exhaustive
    assert not two_stage.exhaustive
    hand = len(shipped(name).plans)
    # exhaustive simulates every plan of the space (and the hand-written ones)
    assert exhaustive.candidates_simulated >= exhaustive.exhaustive_candidates + hand
    assert two_stage.exhaustive_candidates == exhaustive.exhaustive_candidates
    assert two_stage.candidates_simulated < exhaustive.candidates_simulated
    assert two_stage.best is not None
    assert exhaustive.best is not None
    assert _same_plan(two_stage.best.candidate.plan, exhaustive.best.candidate.plan)
    assert two_stage.best.objective_usd == exhaustive.best.objective_usd


def test_the_optimized_plan_costs_no_more_than_the_best_hand_written_plan() -> None:
    result = optimized("seed-three-jobs")
    assert result.best is not None
    assert result.best.objective_usd is not None
    assert result.best.objective_usd <= _best_hand_written(result)
    # every hand-written plan was simulated, whatever the screen thought of it
    names = {r.result.name for r in result.ranked}
    assert {p.name for p in shipped("seed-three-jobs").plans} <= names
    assert result.run is not None
    assert result.run.replications == REPLICATIONS


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in SCENARIOS.glob("*.yaml")))
def test_every_shipped_scenario_optimizes_to_no_more_than_its_own_plans(name: str) -> None:
    result = optimize_scenario(shipped(name), seed=3, replications=3, top_k=4)
    assert result.best is not None
    assert result.best.objective_usd is not None
    assert result.best.objective_usd <= _best_hand_written(result)
    assert result.explanation


def test_candidate_names_are_unique_readable_and_stable() -> None:
    first = optimized("seed-three-jobs")
    again = optimize_scenario(shipped("seed-three-jobs"), seed=11, replications=REPLICATIONS)
    names = [r.result.name for r in first.ranked]
    assert len(set(names)) == len(names)
    assert sorted(names) == sorted(r.result.name for r in again.ranked)
    searched = [r for r in first.ranked if r.candidate.origin is Origin.SEARCH]
    assert searched
    assert all(r.result.name.startswith("opt-") for r in searched)
    # a name says what the plan runs on
    for r in searched:
        gpu = r.candidate.plan.uses[0].entries[0].gpu.lower()
        assert gpu in r.result.name


def test_progress_counts_every_simulation() -> None:
    calls: list[tuple[int, int]] = []
    result = optimize_scenario(shipped("seed-three-jobs"), seed=11, replications=2, top_k=2,
                               progress=lambda done, total: calls.append((done, total)))
    assert calls[-1][0] == calls[-1][1] == result.candidates_simulated * 2
    assert all(b[0] >= a[0] for a, b in itertools.pairwise(calls))


def _training_only(deadline_days: float) -> Scenario:
    """Fine-tune Llama-3-8B on 2e10 tokens alone, with a deadline, deterministic extra loss."""
    base = lifecycle()
    train = base.phase("train")
    assert isinstance(train, TrainingPhase)
    phase = replace(train, after=(), deadline_days=deadline_days,
                    allin_extra_loss=LogNormal(sigma=0.5, median=0.1))
    plan = Plan(name="h100-16", uses=(PhaseUse(phase="train", entries=(
        UseEntry(gpu="H100", count=16),)),))
    return replace(base, phases=(phase,), plans=(plan,), risk=RiskLimits())


def test_a_plan_outside_the_deadline_risk_limit_is_never_chosen() -> None:
    base = _training_only(deadline_days=2.5)
    # 4 H100s on spot: five times too slow for the deadline (the run takes ~9 days)
    slow = Plan(name="cheap-and-slow", uses=(PhaseUse(phase="train", entries=(
        UseEntry(gpu="H100", count=4, option=PurchaseOption.SPOT,
                 fallback=PurchaseOption.ON_DEMAND),)),))
    scenario = replace(base, plans=(*base.plans, slow))
    limit = 0.05
    result = optimize_scenario(scenario, seed=5, replications=8, top_k=4,
                               limits=RiskLimits(max_p_deadline_missed=limit))
    assert result.best is not None
    assert result.best.objective_usd is not None
    assert result.best.result.p_deadline_missed is not None
    assert result.best.result.p_deadline_missed <= limit
    ruled_out = {r.result.name: r for r in result.ranked if r.result.feasible
                 and not r.within_limits}
    assert "cheap-and-slow" in ruled_out
    cheap = ruled_out["cheap-and-slow"]
    assert cheap.why_not
    assert "P(deadline missed)" in cheap.why_not[0]
    # every plan within the limits ranks before every plan outside them
    inside = [r.within_limits for r in result.ranked]
    assert inside == sorted(inside, reverse=True)


def test_infeasible_plans_are_never_chosen() -> None:
    base = _training_only(deadline_days=30)
    broken = Plan(name="does-not-fit", uses=(PhaseUse(phase="train", entries=(
        UseEntry(gpu="T4", count=1),)),))
    scenario = replace(base, plans=(*base.plans, broken))
    result = optimize_scenario(scenario, seed=5, replications=4, top_k=2)
    last = result.ranked[-1]
    assert last.result.name == "does-not-fit"
    assert not last.result.feasible
    assert not last.within_limits
    assert last.why_not
    assert result.best is not None
    assert result.best.result.feasible


def test_no_feasible_candidate_gives_no_choice() -> None:
    scenario = _training_only(deadline_days=0.05)  # an hour: no run of 2e10 tokens makes it
    result = optimize_scenario(scenario, seed=5, replications=2, top_k=2,
                               limits=RiskLimits(max_p_deadline_missed=0.0))
    assert result.best is None
    assert "No candidate plan" in result.explanation
    assert result.pareto == ()


def test_objective_ranks_by_its_statistic() -> None:
    result = optimize_scenario(shipped("seed-three-jobs"), seed=11, replications=REPLICATIONS,
                               objective=Objective.P90, top_k=3)
    fit = [r for r in result.ranked if r.within_limits]
    assert [r.objective_usd for r in fit] == sorted(r.objective_usd or 0 for r in fit)
    assert all(r.result.cost_usd is not None and r.objective_usd == r.result.cost_usd.p90
               for r in fit)


def test_pareto_front_is_non_dominated() -> None:
    result = optimized("seed-three-jobs")
    front = result.pareto
    assert front
    assert result.best in front
    for a in front:
        for b in result.ranked:
            if not b.within_limits or b is a:
                continue
            assert a.objective_usd is not None
            assert b.objective_usd is not None
            assert a.result.finish_s is not None
            assert b.result.finish_s is not None
            assert not (b.objective_usd < a.objective_usd
                        and b.result.finish_s.p90 < a.result.finish_s.p90)


def test_explanation_says_what_it_buys_costs_and_saves() -> None:
    result = optimized("seed-three-jobs")
    assert result.best is not None
    text = result.explanation
    assert result.best.result.name in text
    assert "less than the best hand-written plan" in text
    assert f"${result.best.objective_usd:,.0f}" in text


def test_the_search_space_holds_only_what_fits() -> None:
    scenario = shipped("seed-three-jobs")  # 12 GiB jobs with 16 GiB of host RAM
    space = search_space(scenario, price_book(scenario.prices.overrides))
    gpus = {c.use.entries[0].gpu for c in space.choices("vision-jobs")}
    # a generic job's GPU-hours hold on the GPUs the scenario's plans name, not on a T4
    assert gpus == {"A100", "A10G"}
    assert space.size == len(space.choices("vision-jobs"))
    phase = scenario.phases[0]
    assert isinstance(phase, ExperimentsPhase)
    assert isinstance(phase.job, GenericJob)
    bigger = replace(phase.job, gpu_memory_gib=30.0)
    small = replace(scenario, phases=(replace(phase, job=bigger),))
    fits_30 = {c.use.entries[0].gpu for c in search_space(
        small, price_book(scenario.prices.overrides)).choices("vision-jobs")}
    assert fits_30 == {"A100"}  # 30 GiB does not fit the A10G's 24 GB


def test_a_model_job_is_rated_on_every_catalog_gpu_it_fits() -> None:
    """The performance model rates a model job's hours per GPU, so the whole catalog enters."""
    scenario = shipped("lifecycle-assistant")  # QLoRA jobs on Llama-3-8B, plans on A10G
    space = search_space(scenario, price_book(scenario.prices.overrides))
    gpus = {c.use.entries[0].gpu for c in space.choices("prototype")}
    assert {"A10G", "L4", "H100", "A100-80GB"} <= gpus


def test_reservation_round_sizes_commitments_on_simulated_demand() -> None:
    # The shipped $1.2M budget holds no plan within the risk limits at this seed since issue 18's
    # fourth serving round (vLLM's KV-bound decode, slower); the round is checked with the
    # budget raised by half, so that on-demand finalists are within the limits again.
    scenario = shipped("inference-growth")
    assert scenario.budget_usd is not None
    result = optimize_scenario(replace(scenario, budget_usd=1.5 * scenario.budget_usd), seed=11,
                               replications=REPLICATIONS, top_k=8)
    assert result.reservations, "the finalist renting H100s on demand is sized"
    reserved = [r for r in result.ranked if r.candidate.origin is Origin.RESERVATION]
    assert reserved
    sizing = max(result.reservations, key=lambda s: s.aggressive.savings_usd)
    plan = reserved[0].candidate.plan
    added = [c for c in plan.commitments if c.gpu == sizing.gpu]
    assert added
    assert {c.count for c in added} <= {sizing.aggressive.gpus, sizing.balanced.gpus}
    # serving runs from the scenario's start: the commitments start with it, renewed yearly
    assert min(c.start for c in added) == shipped("inference-growth").calendar.start
    assert len({c.start for c in added}) == sizing.terms_owed


def test_uncertainty_free_screen_is_close_to_the_simulator() -> None:
    """With nothing uncertain the screen and the simulator see the same project: the screen's
    cost of each phase is within the band of its simulated cost (experiments: Poisson job
    counts, ±5 %; serving: the same hourly autoscaling, ±2 %; training: Poisson faults on the
    Daly expectation, ±5 %)."""
    from costsim.optimize.screen import screen_space

    quiet = Uncertainty(throughput_error=Fixed(value=1.0))
    base = lifecycle(uncertainty=quiet)
    bands = {"prototype": 0.05, "train": 0.05, "serve": 0.02}
    for name, band in bands.items():
        phase = replace(base.phase(name), after=())
        if isinstance(phase, TrainingPhase):
            phase = replace(phase, allin_extra_loss=Fixed(value=0.0))
        scenario = replace(base, phases=(phase,), plans=(Plan(name="p", uses=(
            base.plans[0].use_of(name),)),))
        space = search_space(scenario, price_book())
        screened = dict(screen_space(scenario, space, RiskLimits()))[name]
        on_demand = [e for e in screened if e.choice.use.entries[0].option.value == "on-demand"]
        picks = on_demand[:2]
        plans = tuple(Plan(name=f"c{i}", uses=(e.choice.use,), owned=e.choice.owned)
                      for i, e in enumerate(picks))
        from costsim.sim.run_result import simulate_scenario

        run = simulate_scenario(replace(scenario, plans=plans), seed=3, replications=20)
        for estimate, result in zip(picks, run.plans, strict=True):
            assert result.ledger is not None
            simulated = result.ledger.by_phase()[name]
            assert estimate.cost_usd == pytest.approx(simulated, rel=band), (
                name, estimate.choice.slug)


def test_the_optimizer_searches_within_quotas() -> None:
    from costsim.domain.quotas import Quota
    from costsim.sim.prepare import TrainingPrep, prepare_plan

    scenario = _training_only(deadline_days=30)
    free = optimize_scenario(scenario, seed=5, replications=4, top_k=2)
    assert free.best is not None
    first = free.best.candidate.plan
    prep = prepare_plan(scenario, first)
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    pool = train.source.rental or train.source.implied_commitment
    assert pool is not None
    # a quota on that GPU in that cloud below what the first plan holds forbids it
    quota = Quota(cloud=pool.offering.cloud, gpu=train.source.gpu, max_gpus=train.gpus - 1)
    within = replace(scenario, quotas=(quota,))
    limited = optimize_scenario(within, seed=5, replications=4, top_k=2)
    assert limited.best is not None
    assert not _same_plan(limited.best.candidate.plan, first)
    for ranked in limited.ranked:
        if _same_plan(ranked.candidate.plan, first):  # offered only as the hand-written plan
            assert not ranked.result.feasible
            assert any("exceeds the quota" in why for why in ranked.why_not)
        elif ranked.result.feasible:  # every plan the search built holds the quota
            assert prepare_plan(within, ranked.candidate.plan).feasible


def test_explanation_is_written_in_the_display_currency() -> None:
    """Issue 21 item 5: a scenario shown in EUR gets the sentence in euros ($ × the rate)."""
    from costsim.domain.currency import Currency
    from costsim.optimize.explain import explain

    result = optimized("seed-three-jobs")
    assert result.best is not None
    assert result.best.objective_usd is not None
    eur = Currency(code="EUR", fx_rate_per_usd=0.5)
    text = explain(result.best, result.ranked, Objective.MEAN, eur)
    assert f"€{eur.amount(result.best.objective_usd):,.0f}" in text
    assert "$" not in text
    assert explain(result.best, result.ranked, Objective.MEAN) == result.explanation
