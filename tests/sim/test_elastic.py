"""Elastic experiment jobs on a rental pool as a memoized value (issue 20,
costsim/sim/elastic.py) book exactly what the runner's own drawing and booking books."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.cli.scenario_names import load_scenario_file
from costsim.sim import elastic, phase_runs
from costsim.sim.montecarlo import simulate_block
from costsim.sim.prepare import PreparedPlan, prepare_plan

FLAGSHIP = Path(__file__).resolve().parents[2] / "scenarios" / "lifecycle-assistant.yaml"


@pytest.fixture(scope="module")
def preps() -> list[PreparedPlan]:
    scenario = load_scenario_file(FLAGSHIP).scenario
    return [prepare_plan(scenario, plan) for plan in scenario.plans
            if plan.name in ("all-on-demand", "buy-servers")]


def test_the_memoized_jobs_equal_the_runners_own_booking(
        preps: list[PreparedPlan], monkeypatch: pytest.MonkeyPatch) -> None:
    elastic.rented_jobs.cache_clear()
    memoized = [simulate_block(p, seed=3, replications=3, indices=range(3)) for p in preps]
    assert elastic.rented_jobs.cache_info().hits >= 3  # the second plan replayed the first's
    monkeypatch.setattr(phase_runs, "_rented_jobs", lambda *args: None)
    own = [simulate_block(p, seed=3, replications=3, indices=range(3)) for p in preps]
    assert memoized == own
    assert all(rep.queue_waits.jobs > 0 for block in own for rep in block)


def test_a_phase_with_no_arrivals_books_nothing(preps: list[PreparedPlan]) -> None:
    prep = preps[0].phases["prototype"]
    assert isinstance(prep, phase_runs.ExperimentsPrep)
    pool = prep.source.rental
    assert pool is not None
    spec = elastic.JobsSpec(start_s=0.0, duration_s=86_400.0, rate_per_s=0.0,
                            gpu_hours=prep.gpu_hours, gpus=prep.need.gpus, throughput_error=1.0,
                            startup_s=120.0, max_concurrent_jobs=None, paid_gpus=1,
                            billing=pool.billing, calendar=preps[0].scenario.calendar,
                            hours=100)
    jobs = elastic.rented_jobs(spec, (1, (0,), ("a",)), (1, (0,), ("b",)))
    assert jobs.booking is None
    assert jobs.used_gpu_hours == 0.0
    assert jobs.waits.jobs == 0
    assert jobs.end_s == 86_400.0
