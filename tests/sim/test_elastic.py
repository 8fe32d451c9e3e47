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


@pytest.fixture(scope="module")
def spot_preps(tmp_path_factory: pytest.TempPathFactory) -> list[PreparedPlan]:
    """The flagship's spot plan (its prototype retries on spot) and a copy whose prototype
    restarts preempted jobs on an on-demand fallback."""
    text = FLAGSHIP.read_text(encoding="utf-8")
    spot = "prototype: {gpu: A10G, option: spot, cloud: aws}"
    assert spot in text
    text = text.replace("  - name: buy-servers", "  - name: spot-fallback\n    use:\n      "
                        "prototype: {gpu: A10G, option: spot, fallback: on-demand, cloud: aws}"
                        "\n      fine-tune: {gpu: H100, count: 16}\n      serve: {gpu: L4}\n\n"
                        "  - name: buy-servers")
    path = tmp_path_factory.mktemp("spot") / "spot.yaml"
    path.write_text(text, encoding="utf-8")
    scenario = load_scenario_file(path).scenario
    return [prepare_plan(scenario, plan) for plan in scenario.plans
            if plan.name in ("spot-checkpoints", "spot-fallback")]


def test_the_memoized_spot_jobs_equal_the_runners_own_booking(
        spot_preps: list[PreparedPlan], monkeypatch: pytest.MonkeyPatch) -> None:
    """Lost attempts, spot and fallback bookings replayed from the value book what the
    runner's own drawing books, with and without a fallback; a plan run again replays."""
    elastic.spot_jobs.cache_clear()
    memoized = [simulate_block(p, seed=5, replications=4, indices=range(4))
                for p in spot_preps]
    again = [simulate_block(p, seed=5, replications=4, indices=range(4)) for p in spot_preps]
    assert elastic.spot_jobs.cache_info().hits >= 8
    monkeypatch.setattr(phase_runs, "_spot_jobs", lambda *args: None)
    own = [simulate_block(p, seed=5, replications=4, indices=range(4)) for p in spot_preps]
    assert memoized == own == again
    lines = {line.key.category.value for block in own for rep in block
             for line in rep.ledger.lines if line.key.phase == "prototype"}
    assert "spot-lost-work" in lines  # the reclaims were booked
    options = {line.key.option for line in own[1][0].ledger.lines
               if line.key.phase == "prototype"}
    assert options == {"spot", "on-demand"}  # the fallback took restarted jobs
