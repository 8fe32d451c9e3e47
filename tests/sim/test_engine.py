"""Whole replications of hand-checkable worlds, and the properties a finance reader relies on."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date

import pytest

from costsim.domain.calendar import Calendar
from costsim.domain.phases import ExperimentsPhase, GenericJob, TrainingPhase
from costsim.domain.plans import Commitment, OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.scenario import Scenario, ScenarioPrices
from costsim.domain.uncertainty import Fixed, LogNormal, Uncertainty
from costsim.domain.workload import Task
from costsim.sim.engine import simulate_replication
from costsim.sim.ledger import Category
from costsim.sim.montecarlo import run_plan
from costsim.sim.prepare import TrainingPrep, prepare_plan
from costsim.sim.streams import replication_seeds
from costsim.units import HOURS_PER_YEAR, SECONDS_PER_HOUR
from tests.domain.scenario_builders import lifecycle, llama_8b
from tests.sim.quiet_runs import without_interruptions

ROOT = replication_seeds(0, 1)[0]


def _train_only(entry: UseEntry, *, commitments: tuple[Commitment, ...] = (),
                months: int = 6, **scenario: object) -> Scenario:
    phase = TrainingPhase(name="train", model="assistant", task=Task.FINETUNE, tokens=5e9,
                          lora_rank=16)
    plan = Plan(name="p", uses=(PhaseUse(phase="train", entries=(entry,)),),
                commitments=commitments)
    exact = Uncertainty(throughput_error=Fixed(value=1.0))  # the model taken at its word
    return Scenario(name="t", calendar=Calendar(start=date(2027, 1, 1), horizon_months=months),
                    models=(llama_8b(),), phases=(phase,), plans=(plan,),
                    **{"uncertainty": exact, **scenario})  # type: ignore[arg-type]


def test_a_run_without_failures_takes_the_performance_models_steady_time() -> None:
    scenario = _train_only(UseEntry(gpu="H100", count=8))
    prep = without_interruptions(prepare_plan(scenario, scenario.plans[0]))
    rep = simulate_replication(prep, ROOT, 0)
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    timeline = rep.timelines[0]
    assert timeline.end_s is not None
    assert timeline.start_s is not None
    startup = prep.sim_defaults.instance_startup_s  # rented instances boot first
    assert timeline.end_s - timeline.start_s == pytest.approx(startup + train.steady_s)
    # billed on whole 8-GPU instances from launch (the cloud's billing increment applied), at
    # the pool's rate
    pool = train.source.rental
    assert pool is not None
    billed_h = pool.billing.billed_hours(startup + train.steady_s)
    assert billed_h == pytest.approx((startup + train.steady_s) / SECONDS_PER_HOUR, abs=1.0)
    (record,) = rep.training
    assert record.cost_usd == rep.ledger.by_phase()["train"]
    compute = rep.ledger.by_category()[Category.COMPUTE]
    assert compute == pytest.approx(8 * billed_h * pool.rate_usd_per_gpu_hour, abs=0.05)
    # the rest is the checkpoint kept in object storage until the horizon's end
    assert set(rep.ledger.by_category()) == {Category.COMPUTE, Category.STORAGE}


def test_an_implied_reservation_books_use_idle_and_stranded_hours_exactly() -> None:
    entry = UseEntry(gpu="H100", count=8, option=PurchaseOption.RESERVED_1Y_NO_UPFRONT,
                     cloud="aws")
    scenario = _train_only(entry)
    prep = without_interruptions(prepare_plan(scenario, scenario.plans[0]))
    rep = simulate_replication(prep, ROOT, 0)
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    pool = train.source.implied_commitment
    assert pool is not None
    rate = pool.rate_usd_per_gpu_hour
    used_h = 8 * train.steady_s / SECONDS_PER_HOUR
    horizon_h = scenario.calendar.horizon_s / SECONDS_PER_HOUR
    by_cat = rep.ledger.by_category()
    assert by_cat[Category.COMPUTE] == pytest.approx(used_h * rate, abs=0.05)
    assert by_cat[Category.RESERVED_IDLE] == pytest.approx((8 * horizon_h - used_h) * rate,
                                                           abs=0.05)
    assert by_cat[Category.STRANDED_COMMITMENT] == pytest.approx(
        8 * (HOURS_PER_YEAR - horizon_h) * rate, abs=0.05)
    (use,) = [p for p in rep.pools if p.option == "reserved-1y-no-upfront"]
    assert use.utilization == pytest.approx(used_h / (8 * horizon_h))
    assert sum(c for c, _ in rep.reserved_by_month) == pytest.approx(8 * horizon_h)
    reservation = sum(by_cat[c] for c in (Category.COMPUTE, Category.RESERVED_IDLE,
                                          Category.STRANDED_COMMITMENT))
    assert reservation == pytest.approx(pool.obligation_usd, abs=0.1)


def test_ledger_lines_add_up_and_only_the_residual_is_negative() -> None:
    scenario = lifecycle()
    rep = simulate_replication(prepare_plan(scenario, scenario.plans[0]), ROOT, 0)
    assert round(sum(line.amount_usd for line in rep.ledger.lines) * 100) == round(
        rep.cost_usd * 100)
    assert round(sum(m.cash_usd for m in rep.ledger.months) * 100) == round(
        rep.ledger.cash_usd * 100)
    for line in rep.ledger.lines:
        if line.key.category is not Category.RESIDUAL_VALUE:
            assert line.amount_usd >= 0, line
    assert {t.phase for t in rep.timelines} == {"prototype", "train", "serve"}


def test_raising_prices_never_lowers_the_cost() -> None:
    base = lifecycle()
    costs = []
    for pct in (0.0, 10.0, 50.0):
        scenario = replace(base, prices=ScenarioPrices(gpu_price_change_pct=(
            ("A10G", pct), ("H100", pct), ("L4", pct))))
        costs.append(simulate_replication(prepare_plan(scenario, scenario.plans[0]), ROOT,
                                          0).cost_usd)
    assert costs == sorted(costs)
    assert costs[2] > costs[0]


def test_more_reserved_capacity_never_raises_on_demand_hours() -> None:
    on_demand_hours = []
    for count in (8, 16, 32):
        commitment = Commitment(gpu="H100", count=count, term_years=1,
                                payment=Payment.NO_UPFRONT, start=date(2027, 1, 1), cloud="aws")
        entry = UseEntry(gpu="H100", count=32, option=PurchaseOption.RESERVED_1Y_NO_UPFRONT,
                         spill=PurchaseOption.ON_DEMAND, cloud="aws")
        scenario = _train_only(entry, commitments=(commitment,))
        rep = simulate_replication(prepare_plan(scenario, scenario.plans[0]), ROOT, 0)
        on_demand_hours.append(sum(line.gpu_hours for line in rep.ledger.lines
                                   if line.key.option == "on-demand"))
    assert on_demand_hours == sorted(on_demand_hours, reverse=True)
    assert on_demand_hours[-1] == 0


def test_queued_prototype_jobs_wait_when_the_fixed_fleet_is_full() -> None:
    busy = ExperimentsPhase(name="proto", duration_months=0.5, arrivals_per_day=40,
                            job=GenericJob(gpu_memory_gib=30, gpu_hours=Fixed(value=8)))
    plan = Plan(name="p", uses=(PhaseUse(phase="proto", entries=(
        UseEntry(gpu="A100-80GB", count=8, cloud="aws"),)),))
    scenario = Scenario(name="q", calendar=Calendar(start=date(2027, 1, 1), horizon_months=2),
                        models=(), phases=(busy,), plans=(plan,))
    rep = simulate_replication(prepare_plan(scenario, plan), ROOT, 0)
    # 8 GPUs x 2 jobs (N+1: 3 x 30 GiB > 76 GiB usable, so 2 a GPU) = 16 slots; 40 jobs of
    # 8 h a day need 13.3 slots on average: bursts queue
    assert rep.queue_waits.waited > 0
    assert rep.queue_waits.max_s > 0


def test_a_queue_still_draining_at_the_horizon_books_its_reservation_use() -> None:
    """The fixed fleet is held from the phase's start: a reservation whose jobs never catch up
    within the horizon is booked as used, not as idle."""
    flood = ExperimentsPhase(name="proto", duration_months=1.5, arrivals_per_day=200,
                             job=GenericJob(gpu_memory_gib=30, gpu_hours=Fixed(value=8)))
    entry = UseEntry(gpu="A100-80GB", count=8, option=PurchaseOption.RESERVED_1Y_NO_UPFRONT,
                     cloud="aws")
    plan = Plan(name="p", uses=(PhaseUse(phase="proto", entries=(entry,)),))
    scenario = Scenario(name="q", calendar=Calendar(start=date(2027, 1, 1), horizon_months=2),
                        models=(), phases=(flood,), plans=(plan,))
    rep = simulate_replication(prepare_plan(scenario, plan), ROOT, 0)
    assert rep.timelines[0].end_s is None  # still draining when the horizon ends
    used = rep.reserved_gpu_hours_used / rep.reserved_gpu_hours_committed
    assert used == pytest.approx(1.0, abs=0.01)  # held from the start to the horizon's end
    assert rep.ledger.by_phase()["proto"] > 0


def test_a_plan_commitment_holds_the_largest_job_run_on_it() -> None:
    """8-GPU experiment jobs on a plan's reservation of 8 H100s: the commitment buys one 8-GPU
    instance (1-GPU instances would be cheaper per GPU but could never run a job)."""
    jobs = ExperimentsPhase(name="lab", duration_months=3, arrivals_per_day=1,
                            job=GenericJob(gpu_memory_gib=40, gpus=8, gpu_hours=Fixed(value=64)))
    commitment = Commitment(gpu="H100", count=8, term_years=1, payment=Payment.NO_UPFRONT,
                            start=date(2027, 1, 1))
    entry = UseEntry(gpu="H100", count=8, option=PurchaseOption.RESERVED_1Y_NO_UPFRONT)
    plan = Plan(name="p", uses=(PhaseUse(phase="lab", entries=(entry,)),),
                commitments=(commitment,))
    scenario = Scenario(name="lab", calendar=Calendar(start=date(2027, 1, 1), horizon_months=6),
                        models=(), phases=(jobs,), plans=(plan,))
    prep = prepare_plan(scenario, plan)
    assert prep.feasible, prep.infeasible_reasons
    (pool,) = prep.commitments
    assert pool.offering.gpus_per_instance == 8


def test_a_run_on_owned_servers_costs_its_use_share_of_them() -> None:
    """Owned hardware is booked plan-wide; a training run's cost is that cost per in-service
    GPU-hour times the GPU-hours it used (what nothing used stays with the plan)."""
    entry = UseEntry(gpu="H100", count=16, option=PurchaseOption.OWNED)
    scenario = _train_only(entry, months=12)
    plan = replace(scenario.plans[0], owned=(OwnedPurchase(server="hgx-h100-8", count=2,
                                                           purchase=date(2027, 1, 1)),))
    scenario = replace(scenario, plans=(plan,))
    rep = simulate_replication(prepare_plan(scenario, plan), ROOT, 0)
    (use,) = rep.pools
    owned_cost = sum(line.amount_usd for line in rep.ledger.lines
                     if line.key.phase == "" and line.key.option == "owned")
    (record,) = rep.training
    expected = rep.ledger.by_phase().get("train", 0.0) + owned_cost * (
        use.used_gpu_hours / use.paid_gpu_hours)
    assert record.cost_usd == pytest.approx(expected, abs=0.02)
    assert 0 < record.cost_usd < owned_cost
    assert dict(rep.phase_costs)["train"] == record.cost_usd


def test_same_seed_same_result_in_one_process_or_two() -> None:
    scenario = lifecycle(uncertainty=Uncertainty(throughput_error=LogNormal(sigma=0.1),
                                                 failure_rate_scale=LogNormal(sigma=0.3)))
    prep = prepare_plan(scenario, scenario.plans[0])
    one = run_plan(prep, seed=7, replications=6, workers=1)
    two = run_plan(prep, seed=7, replications=6, workers=2)
    assert one == two
    other = run_plan(prep, seed=8, replications=6, workers=1)
    assert other.cost_usd != one.cost_usd


def test_a_plan_that_cannot_work_is_reported_with_every_reason() -> None:
    scenario = lifecycle()
    uses = list(scenario.plans[0].uses)
    uses[1] = PhaseUse(phase="train", entries=(UseEntry(gpu="T4", count=1),))
    plan = replace(scenario.plans[0], uses=tuple(uses))
    prep = prepare_plan(replace(scenario, plans=(plan,)), plan)
    assert not prep.feasible
    assert any("train" in reason and "T4" in reason for reason in prep.infeasible_reasons)
    result = run_plan(prep, seed=0, replications=3)
    assert result.feasible is False
    assert result.cost_usd is None


def test_the_model_error_is_drawn_unless_the_scenario_fixes_it() -> None:
    scenario = lifecycle()
    prep = prepare_plan(scenario, scenario.plans[0])
    roots = replication_seeds(3, 2)
    draws = [dict(simulate_replication(prep, root, i).draws) for i, root in enumerate(roots)]
    assert draws[0]["throughput_error"] != draws[1]["throughput_error"]
    fixed = lifecycle(uncertainty=Uncertainty(throughput_error=Fixed(value=1.0)))
    rep = simulate_replication(prepare_plan(fixed, fixed.plans[0]), roots[0], 0)
    assert dict(rep.draws)["throughput_error"] == 1.0


def test_commitments_no_phase_uses_and_missing_servers_make_a_plan_infeasible() -> None:
    """A plan that cannot work is a result, not a file error: every reason is reported."""
    scenario = lifecycle()
    stray = Commitment(gpu="B200", count=8, term_years=1, payment=Payment.NO_UPFRONT,
                       start=date(2027, 3, 1), cloud="aws")
    uses = list(scenario.plans[0].uses)
    uses[1] = PhaseUse(phase="train", entries=(UseEntry(gpu="H100", count=16,
                                                         option=PurchaseOption.OWNED),))
    plan = replace(scenario.plans[0], uses=tuple(uses), commitments=(stray,))
    prep = prepare_plan(replace(scenario, plans=(plan,)), plan)
    assert not prep.feasible
    assert any("B200" in r and "no phase" in r for r in prep.infeasible_reasons)
    assert any("owned" in r and "H100" in r for r in prep.infeasible_reasons)


def test_monte_carlo_summary_is_consistent() -> None:
    scenario = lifecycle(uncertainty=Uncertainty(throughput_error=LogNormal(sigma=0.2)))
    result = run_plan(prepare_plan(scenario, scenario.plans[0]), seed=1, replications=20)
    cost = result.cost_usd
    assert cost is not None
    assert cost.p10 <= cost.p50 <= cost.p90
    assert result.ledger is not None
    assert result.ledger.cost_usd == cost.mean
    assert result.p_over_budget == 0.0
    assert result.pools
    assert all(0 < pool.utilization <= 1 for pool in result.pools)
    assert len(result.reserved_by_month) == 18
    assert result.cost_per_million_tokens_usd is not None
    assert result.cost_per_million_tokens_usd > 0
    assert math.isfinite(result.npv_usd_mean or math.nan)


def test_cumulative_cash_bands_rise_and_end_at_the_mean_cash() -> None:
    scenario = lifecycle(uncertainty=Uncertainty(throughput_error=LogNormal(sigma=0.2)))
    result = run_plan(prepare_plan(scenario, scenario.plans[0]), seed=1, replications=20)
    bands = result.cumulative_cash_usd_by_month
    assert result.ledger is not None
    assert [month for month, _ in bands] == [row.month for row in result.ledger.months]
    assert all(s.p10 <= s.p50 <= s.p90 for _, s in bands)
    means = [s.mean for _, s in bands]
    assert means == sorted(means)  # cash paid so far never falls
    assert means[-1] == pytest.approx(result.cash_usd_mean, abs=0.01)
    assert bands[-1][1].p10 < bands[-1][1].p90  # the draws spread the serving months


def test_a_record_with_its_cost_equals_dataclasses_replace() -> None:
    """The engine sets each phase record's cost by copying its slots: the same object
    ``dataclasses.replace`` gives, every field included (a new field is copied too)."""
    from costsim.sim.engine import _with_cost
    from costsim.sim.results import FleetProfile, ServingRecord, TrainingRunRecord

    run = TrainingRunRecord(phase="train", gpus=16, wall_s=3.5e5, gpu_hours=1555.5, faults=2,
                            preemptions=1, lost_work_s=900.0, cost_usd=0.0,
                            block_overrun_s=12.0)
    serve = ServingRecord(phase="serve", requests=1e6, served_within_slo=9.9e5,
                          tokens_served=5e8, output_tokens_served=1e8, replica_hours=800.0,
                          cost_usd=0.0, replicas_by_hour=(1, 2), preemptions=3,
                          fleet=FleetProfile(first_day=2, daily_peak=(2,),
                                             by_clock_hour=(1.5,) * 24))
    for record in (run, serve):
        costed = _with_cost(record, 1234.56)
        assert costed == replace(record, cost_usd=1234.56)
        assert type(costed) is type(record)
        assert record.cost_usd == 0.0  # the original is left as it was
