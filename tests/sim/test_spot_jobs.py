"""Experiment jobs on spot: preempted attempts are lost and restarted (sim/spot_jobs.py)."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pytest

from costsim.domain.calendar import Calendar
from costsim.domain.phases import ExperimentsPhase, GenericJob
from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Fixed, Uncertainty
from costsim.sim.engine import simulate_replication
from costsim.sim.ledger import Category
from costsim.sim.prepare import prepare_plan
from costsim.sim.spot_jobs import expected_spot_job_s, spot_job_attempts
from costsim.sim.streams import replication_seeds


def test_without_a_hazard_every_job_runs_once_on_spot() -> None:
    tries = spot_job_attempts(np.full(50, 3600.0), 0.0, fallback=True, reacquire_s=1800,
                              rng=np.random.default_rng(0))
    assert tries.lost_s.size == 0
    assert not tries.final_on_fallback.any()
    assert (tries.final_start_s == 0).all()


@pytest.mark.parametrize("fallback", [True, False])
def test_drawn_attempts_average_to_the_closed_form(fallback: bool) -> None:
    duration_s, hazard = 4 * 3600.0, 1 / (5 * 3600.0)  # a 4 h job, a reclaim every 5 h
    jobs = 40_000
    tries = spot_job_attempts(np.full(jobs, duration_s), hazard, fallback=fallback,
                              reacquire_s=0.0, rng=np.random.default_rng(1))
    spot_s = (tries.lost_s.sum() + duration_s * (~tries.final_on_fallback).sum()) / jobs
    fallback_s = duration_s * tries.final_on_fallback.sum() / jobs
    want_spot, want_fallback = expected_spot_job_s(duration_s, hazard, fallback=fallback)
    assert spot_s == pytest.approx(want_spot, rel=0.02)
    assert fallback_s == pytest.approx(want_fallback, rel=0.02, abs=1.0)
    if fallback:  # one lost attempt at most, then the fallback finishes the job
        assert np.bincount(tries.lost_job.astype(int), minlength=jobs).max() <= 1
        assert tries.final_on_fallback.sum() == tries.lost_s.size


def test_without_a_fallback_a_job_retries_after_the_reacquire_delay() -> None:
    tries = spot_job_attempts(np.full(2_000, 7200.0), 1 / 3600.0, fallback=False,
                              reacquire_s=900.0, rng=np.random.default_rng(2))
    lost_per_job = np.bincount(tries.lost_job.astype(int), minlength=2_000)
    # each job finishes after its lost attempts and one reacquire delay per loss
    lost_s = np.bincount(tries.lost_job.astype(int), weights=tries.lost_s, minlength=2_000)
    assert np.allclose(tries.final_start_s, lost_s + 900.0 * lost_per_job)
    assert lost_per_job.mean() == pytest.approx(math.expm1(2.0), rel=0.1)  # 1/p − 1 = e^(hD) − 1


def _spot_experiments(hazard_scale: float) -> Scenario:
    phase = ExperimentsPhase(name="proto", duration_months=1, arrivals_per_day=20,
                             job=GenericJob(gpu_memory_gib=12, gpu_hours=Fixed(value=8)))
    plan = Plan(name="p", uses=(PhaseUse(phase="proto", entries=(UseEntry(
        gpu="A10G", option=PurchaseOption.SPOT, fallback=PurchaseOption.ON_DEMAND,
        cloud="aws"),)),))
    return Scenario(name="s", calendar=Calendar(start=date(2027, 1, 1), horizon_months=2),
                    models=(), phases=(phase,), plans=(plan,),
                    uncertainty=Uncertainty(throughput_error=Fixed(value=1.0),
                                            spot_hazard_scale=Fixed(value=hazard_scale)))


def test_preempted_spot_jobs_book_lost_work_and_finish_on_the_fallback() -> None:
    root = replication_seeds(0, 1)[0]
    calm = simulate_replication(prepare_plan(_spot_experiments(1.0), _spot_experiments(
        1.0).plans[0]), root, 0)
    # ×2,000 the catalog's A10G hazard (7.5 % a month): about one reclaim per 5 instance-hours
    stormy_scenario = _spot_experiments(2_000.0)
    stormy = simulate_replication(prepare_plan(stormy_scenario, stormy_scenario.plans[0]),
                                  root, 0)

    def by(rep: object, category: Category, option: str) -> float:
        return sum(line.amount_usd for line in rep.ledger.lines  # type: ignore[attr-defined]
                   if line.key.category is category and line.key.option == option)

    assert by(stormy, Category.SPOT_LOST_WORK, "spot") > 0
    assert by(stormy, Category.COMPUTE, "on-demand") > 0  # restarts on the fallback
    assert stormy.cost_usd > calm.cost_usd
    assert by(calm, Category.COMPUTE, "on-demand") < by(stormy, Category.COMPUTE, "on-demand")
