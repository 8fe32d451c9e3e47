"""Owned servers whose lead time ends late: never delivered inside the horizon (the plan is
infeasible, not free), delivered too late to finish (the run starts at delivery and is cut at
the horizon like a rented run), and a run that never started in the simulation (infeasible
when in every replication, a warning when in some). Dates and hours checked by hand."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from costsim.domain.calendar import Calendar
from costsim.domain.phases import TrainingPhase
from costsim.domain.plans import OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.domain.uncertainty import Fixed, Uncertainty
from costsim.domain.workload import Task
from costsim.sim.montecarlo import PlanResult, Stats, plan_result, run_plan, simulate_block
from costsim.sim.prepare import TrainingPrep, prepare_plan
from costsim.sim.run_result import horizon_passed_over, recommend, simulate_scenario
from costsim.units import SECONDS_PER_DAY
from tests.domain.scenario_builders import llama_8b
from tests.sim.quiet_runs import without_interruptions

# 2027-01-01 + 3 months: the horizon ends 2027-04-01, 31 + 28 + 31 = 90 days
HORIZON_DAYS = 90
# servers.csv lead times: hgx-b200-8 20 weeks (140 days: 2027-05-21, after the horizon),
# hgx-h100-8 12 weeks (84 days: 2027-03-26, six days before its end)
H100_DELIVERY_DAYS = 84


def _scenario(server: str, gpu: str, *, spill: bool = False) -> Scenario:
    """Fine-tune llama-3-8b (LoRA) on 8 GPUs of one owned server bought on day one; no
    deadline. A rented plan beside it."""
    phase = TrainingPhase(name="train", model="assistant", task=Task.FINETUNE, tokens=2e11,
                          lora_rank=16)
    spill_pool = PurchaseOption.ON_DEMAND if spill else None
    own = Plan(name="own", owned=(OwnedPurchase(server=server, count=1,
                                                purchase=date(2027, 1, 1)),),
               uses=(PhaseUse(phase="train", entries=(UseEntry(
                   gpu=gpu, count=8, option=PurchaseOption.OWNED, spill=spill_pool),)),))
    rent = Plan(name="rent", uses=(PhaseUse(phase="train",
                                            entries=(UseEntry(gpu="H100", count=8),)),))
    return Scenario(name="late", calendar=Calendar(start=date(2027, 1, 1), horizon_months=3),
                    models=(llama_8b(),), phases=(phase,), plans=(own, rent),
                    uncertainty=Uncertainty(throughput_error=Fixed(value=1.0)))


def test_servers_delivered_after_the_horizon_make_the_plan_infeasible() -> None:
    scenario = _scenario("hgx-b200-8", "B200")
    assert scenario.calendar.horizon_s == HORIZON_DAYS * SECONDS_PER_DAY
    prep = prepare_plan(scenario, scenario.plans[0])
    assert prep.owned[0].available_s == 140 * SECONDS_PER_DAY
    assert prep.infeasible_reasons == (
        "plan 'own', phase 'train': needs 8 owned B200 GPU(s) but 0 are delivered before the "
        "horizon ends (2027-04-01) — 1 × hgx-b200-8 bought 2027-01-01 arrive 2027-05-21 (20 "
        "weeks' lead time): its work would never run inside the horizon (buy earlier, choose "
        "a server with a shorter lead time, or lengthen horizon_months)",)
    # run and compare rank it with the reason instead of as a $0 plan
    run = simulate_scenario(scenario, seed=1, replications=2)
    own = next(p for p in run.plans if p.name == "own")
    assert not own.feasible
    assert run.recommendation.plan == "rent"


def test_a_spill_pool_runs_the_work_while_the_servers_are_on_their_way() -> None:
    scenario = _scenario("hgx-b200-8", "B200", spill=True)
    assert prepare_plan(scenario, scenario.plans[0]).feasible


def test_servers_delivered_late_run_from_delivery_and_are_cut_at_the_horizon() -> None:
    """The servers arrive on day 84; the run (longer than six days) starts then and holds the
    8 GPUs for the horizon's last 6 days: 8 × 6 × 24 = 1,152 GPU-hours used inside the horizon
    (before: the run waited for a window it could finish in, never started, and used none)."""
    scenario = _scenario("hgx-h100-8", "H100")
    prep = without_interruptions(prepare_plan(scenario, scenario.plans[0]))
    assert prep.feasible, prep.infeasible_reasons
    assert prep.owned[0].available_s == H100_DELIVERY_DAYS * SECONDS_PER_DAY
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    assert train.steady_s > (HORIZON_DAYS - H100_DELIVERY_DAYS) * SECONDS_PER_DAY
    result = run_plan(prep, seed=0, replications=1)
    assert result.feasible
    (owned,) = [p for p in result.pools if p.option == "owned"]
    assert owned.used_gpu_hours == pytest.approx(8 * 6 * 24)
    assert result.timelines[0].end_s is None
    assert any("had not ended when the horizon ended (2027-04-01)" in w
               for w in result.warnings)


def test_a_run_that_never_started_is_infeasible_everywhere_and_a_warning_somewhere() -> None:
    """Replications whose phase started but whose run did not (no run record): in every
    replication the plan is infeasible, in one of two it carries the warning."""
    scenario = _scenario("hgx-h100-8", "H100")
    prep = without_interruptions(prepare_plan(scenario, scenario.plans[0]))
    reps = simulate_block(prep, seed=0, replications=2, indices=(0, 1))
    assert all(r.training for r in reps)
    never = [replace(r, training=()) for r in reps]
    assert all(r.timelines[0].start_s is not None for r in never)
    everywhere = plan_result(prep, never)
    assert not everywhere.feasible
    assert everywhere.infeasible_reasons == (
        "plan 'own', phase 'train': the training run never started within the horizon in any "
        "of 2 replications: its owned H100 GPUs were never free for the run before the "
        "horizon ended (2027-04-01)",)
    somewhere = plan_result(prep, [never[0], reps[1]])
    assert somewhere.feasible
    assert ("phase 'train': its training run never started within the horizon in 1 of 2 "
            "replications (its owned H100 GPUs were never free for the run before the horizon "
            "ended (2027-04-01)): it costs nothing there") in somewhere.warnings
    assert not any("never started" in w for w in plan_result(prep, reps).warnings)


def test_run_recommends_the_plan_that_finishes_over_one_the_horizon_cut() -> None:
    """The owned H100 plan pays six days of its servers (cheaper than renting the whole run)
    but trains only six of its ~21 days: the rented plan, which finishes, is recommended."""
    scenario = _scenario("hgx-h100-8", "H100")
    run = simulate_scenario(scenario, seed=1, replications=2)
    own, rent = (next(p for p in run.plans if p.name == name) for name in ("own", "rent"))
    assert own.cost_usd is not None
    assert rent.cost_usd is not None
    assert own.cost_usd.mean < rent.cost_usd.mean
    assert (own.horizon_cut_replications, rent.horizon_cut_replications) == (2, 0)
    assert run.recommendation.plan == "rent"
    assert dict(run.recommendation.passed_over)["own"] == (
        "unfinished: the horizon cut its work in 2 of 2 replications (a phase had not ended or "
        "never started by 2027-04-01): its cost leaves out the rest of the work, while other "
        "plans finish theirs")


def _result(name: str, mean: float, cut: int) -> PlanResult:
    return PlanResult(name=name, feasible=True, infeasible_reasons=(), replications=4,
                      cost_usd=Stats(mean=mean, p10=mean, p50=mean, p90=mean),
                      horizon_cut_replications=cut)


def test_a_cut_plan_is_passed_over_only_while_another_finishes() -> None:
    risk = RiskLimits()
    cheap_cut, dear = _result("cheap-cut", 100.0, 1), _result("dear", 500.0, 0)
    assert recommend((cheap_cut, dear), risk, horizon_end="2027-04-01").plan == "dear"
    # every plan cut: compared as they are (their warnings say what each leaves out)
    both_cut = (cheap_cut, replace(dear, horizon_cut_replications=4))
    assert horizon_passed_over(both_cut, risk, "2027-04-01") == {}
    assert recommend(both_cut, risk).plan == "cheap-cut"
    # a finishing plan outside the risk limits does not push the cut ones out
    over = replace(dear, p_over_budget=0.9)
    assert horizon_passed_over((cheap_cut, over), RiskLimits(max_p_over_budget=0.1),
                               "2027-04-01") == {}
