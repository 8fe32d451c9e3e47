"""Savings plans and capacity blocks in whole replications: a training run on its block (within
the window and past it) and on demand under a savings plan, checked against hand arithmetic."""

from __future__ import annotations

from datetime import date

import pytest

from costsim.domain.calendar import Calendar
from costsim.domain.commitments import CapacityBlock, SavingsPlan
from costsim.domain.phases import TrainingPhase
from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.pricing import Payment
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Fixed, Uncertainty
from costsim.domain.workload import Task
from costsim.sim.engine import simulate_replication
from costsim.sim.ledger import Category
from costsim.sim.montecarlo import block_warnings, tally_of
from costsim.sim.prepare import PreparedPlan, TrainingPrep, prepare_plan
from costsim.sim.streams import replication_seeds
from costsim.units import HOURS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR
from tests.domain.scenario_builders import llama_8b
from tests.sim.quiet_runs import without_interruptions

ROOT = replication_seeds(0, 1)[0]
# the published AWS block rate of a p5.48xlarge (price_capacity_blocks.csv), per GPU-hour
BLOCK_USD_PER_GPU_HOUR = 39.33 / 8


def _scenario(*, blocks: tuple[CapacityBlock, ...] = (),
              savings_plans: tuple[SavingsPlan, ...] = (), tokens: float = 2e9) -> Scenario:
    phase = TrainingPhase(name="train", model="assistant", task=Task.FINETUNE, tokens=tokens,
                          lora_rank=16)
    plan = Plan(name="p", cloud="aws",
                uses=(PhaseUse(phase="train", entries=(UseEntry(gpu="H100", count=8),)),),
                capacity_blocks=blocks, savings_plans=savings_plans)
    return Scenario(name="t", calendar=Calendar(start=date(2027, 1, 1), horizon_months=2),
                    models=(llama_8b(),), phases=(phase,), plans=(plan,),
                    uncertainty=Uncertainty(throughput_error=Fixed(value=1.0)))


def _quiet(scenario: Scenario) -> PreparedPlan:
    """The plan prepared, its run without faults, checkpoints or extra loss: it takes the
    performance model's steady time exactly."""
    prep = prepare_plan(scenario, scenario.plans[0])
    assert prep.feasible, prep.infeasible_reasons
    return without_interruptions(prep)


def _steady_s(prep: PreparedPlan) -> float:
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    return train.steady_s


def _lines(prep: PreparedPlan) -> dict[tuple[str, str, str], tuple[float, float]]:
    rep = simulate_replication(prep, ROOT, 0)
    return {(x.key.phase, x.key.option, x.key.category.value): (x.amount_usd, x.gpu_hours)
            for x in rep.ledger.lines}


def test_a_training_run_inside_its_block_uses_it_and_the_rest_of_the_window_idles() -> None:
    block = CapacityBlock(gpu="H100", count=8, cloud="aws", start=date(2027, 1, 3), days=7)
    prep = _quiet(_scenario(blocks=(block,)))
    steady = _steady_s(prep)
    assert steady < 7 * SECONDS_PER_DAY  # the run fits the window
    rep = simulate_replication(prep, ROOT, 0)
    timeline = rep.timelines[0]
    # ready on 1 January, it waits for the window that opens on the 3rd, and needs no start-up
    assert timeline.start_s == 0.0
    assert timeline.end_s == pytest.approx(2 * SECONDS_PER_DAY + steady)
    lines = {(x.key.phase, x.key.option, x.key.category.value): (x.amount_usd, x.gpu_hours)
             for x in rep.ledger.lines}
    used_h = 8 * steady / SECONDS_PER_HOUR
    amount, hours = lines[("train", "capacity-block", "compute")]
    assert hours == pytest.approx(used_h)
    assert amount == pytest.approx(used_h * BLOCK_USD_PER_GPU_HOUR, abs=0.01)
    idle, idle_h = lines[("", "capacity-block", "reserved-idle")]
    assert idle_h == pytest.approx(8 * 7 * 24 - used_h)
    # the block's whole price: 8 GPUs x 168 h x $4.91625 = $6,607.44, nothing on demand
    assert amount + idle == pytest.approx(6607.44, abs=0.01)
    assert not any(option == "on-demand" for _, option, _ in lines)
    assert rep.ledger.months[0].cash_usd >= 6607.44  # paid up front, in January


def test_a_run_that_outlasts_its_block_finishes_on_demand_after_a_restart() -> None:
    # a one-day block for a run of several days: the block's 192 GPU-hours are used whole
    # ($943.92), the rest runs on the phase's own on-demand pool from the block's end, after
    # half a checkpoint interval of lost work, a restart and an instance start-up
    block = CapacityBlock(gpu="H100", count=8, cloud="aws", start=date(2027, 1, 1), days=1)
    prep = _quiet(_scenario(blocks=(block,), tokens=2e10))
    steady = _steady_s(prep)
    assert steady > SECONDS_PER_DAY
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    relaunch = train.interval_s / 2 + train.restart_s + prep.sim_defaults.instance_startup_s
    rep = simulate_replication(prep, ROOT, 0)
    assert rep.timelines[0].end_s == pytest.approx(steady + relaunch)
    lines = {(x.key.phase, x.key.option, x.key.category.value): (x.amount_usd, x.gpu_hours)
             for x in rep.ledger.lines}
    assert lines[("train", "capacity-block", "compute")] == (943.92, pytest.approx(192.0))
    assert lines[("", "capacity-block", "reserved-idle")][0] == 0.0
    pool = train.source.rental
    assert pool is not None
    over_h = pool.billing.billed_hours(steady + relaunch - SECONDS_PER_DAY)
    amount, hours = lines[("train", "on-demand", "compute")]
    assert hours == pytest.approx(8 * over_h)
    assert amount == pytest.approx(8 * over_h * pool.rate_usd_per_gpu_hour, abs=0.01)
    assert rep.training[0].block_overrun_s == pytest.approx(steady - SECONDS_PER_DAY)
    (warning,) = block_warnings(prep, tally_of(prep, [rep]))
    assert "outlasted its capacity block in 1 of 1" in warning
    assert "on-demand" in warning


def test_a_block_the_run_cannot_use_is_paid_idle_and_said_so() -> None:
    # the plan trains on AWS; a GCP calendar-mode block is on another cloud: the run goes on
    # demand at AWS and the whole block (8 GPUs x 48 h) idles
    block = CapacityBlock(gpu="H100", count=8, cloud="gcp", start=date(2027, 1, 1), days=2)
    prep = _quiet(_scenario(blocks=(block,)))
    (pool,) = prep.capacity_blocks
    assert pool.rate.estimate  # GCP's block rate is an upper-bound estimate
    rep = simulate_replication(prep, ROOT, 0)
    lines = {(x.key.phase, x.key.option, x.key.category.value): (x.amount_usd, x.gpu_hours)
             for x in rep.ledger.lines}
    assert ("train", "capacity-block", "compute") not in lines
    idle, idle_h = lines[("", "capacity-block", "reserved-idle")]
    assert idle_h == pytest.approx(8 * 48)
    assert idle == pytest.approx(8 * 48 * pool.rate.usd_per_gpu_hour, abs=0.01)
    assert ("train", "on-demand", "compute") in lines
    (warning,) = block_warnings(prep, tally_of(prep, [rep]))
    assert "used by no training run" in warning


def test_a_savings_plan_covers_on_demand_training_up_to_its_commitment() -> None:
    # $20/h on an 8-H100 run whose on-demand rate at the plan's discount is above $20/h: each
    # full hour of the run, $20 is billed at the plan's rate and the rest stays on demand;
    # every other hour of the term is idle; used + idle + stranded = $20 x 8,760 h
    sp = SavingsPlan(cloud="aws", usd_per_hour=20.0, term_years=1, payment=Payment.NO_UPFRONT,
                     start=date(2027, 1, 1), family="H100")
    prep = _quiet(_scenario(savings_plans=(sp,)))
    (pool,) = prep.savings_plans
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    rental = train.source.rental
    assert rental is not None
    discount = pool.discount(rental.name)
    assert discount is not None
    plan_rate_per_hour = 8 * rental.rate_usd_per_gpu_hour * (1 - discount)
    assert plan_rate_per_hour > 20.0
    rep = simulate_replication(prep, ROOT, 0)
    lines = {(x.key.phase, x.key.option, x.key.category.value): (x.amount_usd, x.gpu_hours)
             for x in rep.ledger.lines}
    used, used_h = lines[("train", sp.option, "compute")]
    on_demand, on_demand_h = lines[("train", "on-demand", "compute")]
    idle = lines[("", sp.option, "reserved-idle")][0]
    stranded = lines[("", sp.option, "stranded-commitment")][0]
    assert used + idle + stranded == pytest.approx(20.0 * HOURS_PER_YEAR, abs=0.02)
    assert stranded == pytest.approx(20.0 * (HOURS_PER_YEAR - 1416), abs=0.01)
    billed_h = rental.billing.billed_hours(prep.sim_defaults.instance_startup_s
                                           + _steady_s(prep))
    # GPU-hours split between the plan and on demand, as the commitment allows
    assert used_h + on_demand_h == pytest.approx(8 * billed_h)
    # hour by hour from the start: a full hour is covered 20/plan_rate, the last partial
    # hour's smaller charge may fit the commitment whole
    expected_h, left_s = 0.0, billed_h * SECONDS_PER_HOUR
    while left_s > 0:
        gpu_hours = 8 * min(1.0, left_s / SECONDS_PER_HOUR)
        expected_h += gpu_hours * min(1.0, 20.0 / (plan_rate_per_hour * gpu_hours / 8))
        left_s -= SECONDS_PER_HOUR
    assert used_h == pytest.approx(expected_h)
    assert used == pytest.approx(used_h * rental.rate_usd_per_gpu_hour * (1 - discount),
                                 abs=0.01)
    assert on_demand == pytest.approx(on_demand_h * rental.rate_usd_per_gpu_hour, abs=0.01)
    assert Category.RESERVED_IDLE in rep.ledger.by_category()
