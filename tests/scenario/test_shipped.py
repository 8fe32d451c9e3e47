"""Every file in scenarios/ validates, tells its story, and simulates without error."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.cli.scenario_names import load_scenario_file
from costsim.sim.run_result import simulate_scenario

SCENARIOS = Path(__file__).parents[2] / "scenarios"
FILES = sorted(SCENARIOS.glob("*.yaml"))


def test_the_issue_scenarios_are_shipped() -> None:
    names = {p.stem for p in FILES}
    assert {"lifecycle-assistant", "pretrain-70b-deadline", "inference-growth",
            "buy-vs-rent-8xh100", "seed-three-jobs", "seed-startup-4090"} <= names
    # scenarios/ holds only runnable scenarios (and their README)
    assert {p.name for p in SCENARIOS.iterdir()} == {p.name for p in FILES} | {"README.md"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_shipped_scenario_validates_and_runs(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    story = [line for line in text.splitlines()[:30] if line.startswith("#")]
    assert len(story) >= 8, f"{path.name} starts with its story in comments"
    loaded = load_scenario_file(path)
    run = simulate_scenario(loaded.scenario, seed=7, replications=5)
    assert [plan.name for plan in run.plans] == [p.name for p in loaded.scenario.plans]
    feasible = [plan for plan in run.plans if plan.feasible]
    assert feasible, f"{path.name}: no feasible plan"
    for plan in feasible:
        assert plan.cost_usd is not None
        assert plan.cost_usd.p50 > 0


def test_the_flagship_matches_the_issue() -> None:
    """Prototype 2 months at >= 10 jobs/day, >= 10B tokens of a 7-13B model on H100/A100, a
    year of diurnal serving peaking >= 20 req/s with mixed sizes on small and large cards;
    plans on demand, reserved, spot with checkpoints, bought servers."""
    from costsim.domain.phases import ExperimentsPhase, ServingPhase, TrainingPhase
    from costsim.domain.pricing import PurchaseOption

    scenario = load_scenario_file(SCENARIOS / "lifecycle-assistant.yaml").scenario
    prototype, train, serve = scenario.phases
    assert isinstance(prototype, ExperimentsPhase)
    assert prototype.duration_months == 2
    assert prototype.arrivals_per_day >= 10
    assert isinstance(train, TrainingPhase)
    assert train.tokens >= 1e10
    assert 7e9 <= scenario.model(train.model).architecture.params().total <= 13e9
    assert isinstance(serve, ServingPhase)
    assert serve.duration_months == 12
    assert serve.load.diurnal
    assert serve.load.peak_requests_per_s >= 20
    assert len(serve.requests) > 1
    serving_gpus = {e.gpu for p in scenario.plans for e in p.use_of("serve").entries}
    assert {"L4", "A10G", "H100"} <= serving_gpus
    options = {e.option for p in scenario.plans for u in p.uses for e in u.entries}
    assert {PurchaseOption.ON_DEMAND, PurchaseOption.SPOT, PurchaseOption.OWNED} <= options
    assert any(o.is_reserved for o in options)
    assert {e.gpu for p in scenario.plans for e in p.use_of("fine-tune").entries} <= {
        "H100", "A100"}


def test_a_quoted_reservation_is_the_price_a_run_uses_and_says_so() -> None:
    loaded = load_scenario_file(SCENARIOS / "inference-growth.yaml")
    run = simulate_scenario(loaded.scenario, seed=1, replications=2, plans=("reserve-2-quoted",))
    (plan,) = run.plans
    reserved = [p for p in plan.prices if p.option == "reserved-1y-no-upfront"]
    assert reserved
    for price in reserved:
        assert price.pool == "aws us-east-1 p5.4xlarge"
        assert price.rate_usd_per_gpu_hour == pytest.approx(3.10)
        assert price.source.startswith("quote in inference-growth.yaml:")
        assert price.effective_date == "2026-11-18"
        assert not price.estimate
