"""The serving model's out-of-sample error (costsim/data/allin_loss.csv ``serving_error_sigma``,
docs/performance.md "The serving model's error out of sample"): with the default uncertainty a
predicted serving capacity draws a serving-only factor on top of the shared throughput error,
once per replication and phase; a measured capacity keeps its measurement, and a scenario's own
``throughput_error`` replaces both."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import costsim.sim.prepare as prepare_module
from costsim.catalog.perf_defaults import allin_loss_defaults
from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.performance import AllinLossAssumptions
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import LogNormal
from costsim.sim.montecarlo import PlanResult, run_plan
from costsim.sim.prepare import NO_MODEL_ERROR, ServingPrep, prepare_plan
from costsim.sim.streams import replication_seeds
from tests.serving_scenario import H100_PLAN, measured_h100, serving_scenario

PLANS = H100_PLAN + """\
  - name: h100-reserved
    use: {serve: {gpu: H100, option: reserved, term: 1y, count: 5}}
"""
SetSigma = Callable[[float], None]
OWN_ERROR = "uncertainty:\n  throughput_error: {dist: lognormal, sigma: 0.1}\n"


def _scenario(tmp_path: Path, *, measured_rps: float | None = None, extra: str = "") -> Scenario:
    if measured_rps is not None:
        extra = measured_h100(tmp_path, measured_rps) + extra
    path = tmp_path / "s.yaml"
    path.write_text(serving_scenario("serving error", peak_requests_per_s=60, diurnal=True,
                                     plans=PLANS, extra=extra))
    return load_scenario_file(path).scenario


@pytest.fixture
def serving_sigma(monkeypatch: pytest.MonkeyPatch) -> SetSigma:
    """Set the shipped serving_error_sigma the preparation reads."""
    shipped = allin_loss_defaults()

    def set_sigma(sigma: float) -> None:
        loss = dataclasses.replace(shipped, serving_error_sigma=sigma)
        monkeypatch.setattr(prepare_module, "allin_loss_defaults", lambda: loss)

    return set_sigma


def _serving_prep(scenario: Scenario) -> ServingPrep:
    prep = prepare_plan(scenario, scenario.plans[0]).phases["serve"]
    assert isinstance(prep, ServingPrep)
    return prep


def _run(scenario: Scenario, replications: int = 40, seed: int = 3,
         workers: int = 1, plan: int = 0) -> PlanResult:
    return run_plan(prepare_plan(scenario, scenario.plans[plan]), seed=seed,
                    replications=replications, workers=workers)


def test_the_shipped_default_is_the_held_out_error() -> None:
    """0.6250 from the four rated held-out sets, on top of the shared 0.111."""
    loss = allin_loss_defaults()
    assert loss.serving_error_sigma == pytest.approx(0.6250)
    assert "held-out" in loss.sources["serving_error_sigma"]
    assert loss.serving_sigma == loss.serving_error_sigma
    assert math.hypot(loss.throughput_error_sigma, loss.serving_extra_sigma) == pytest.approx(
        loss.serving_error_sigma)


@given(low=st.floats(0.0, 2.0), high=st.floats(0.0, 2.0), shared=st.floats(0.0, 1.0))
def test_the_serving_only_factor_completes_the_serving_sigma(low: float, high: float,
                                                             shared: float) -> None:
    """σ_extra = √(max(σ_serve, σ)² − σ²): never negative, the product of the two lognormals
    has the serving sigma (floored at the shared one), and it grows with σ_serve."""
    def loss(serving: float) -> AllinLossAssumptions:
        return AllinLossAssumptions(extra_loss_median=0.1, extra_loss_sigma=0.1,
                                    throughput_error_sigma=shared, serving_error_sigma=serving)
    small, large = loss(min(low, high)), loss(max(low, high))
    for each in (small, large):
        assert each.serving_extra_sigma >= 0
        assert math.hypot(shared, each.serving_extra_sigma) == pytest.approx(
            max(each.serving_error_sigma, shared), abs=1e-12)
    assert small.serving_extra_sigma <= large.serving_extra_sigma


def test_predicted_capacity_draws_the_serving_only_error(tmp_path: Path) -> None:
    prep = _serving_prep(_scenario(tmp_path))
    assert prep.model_error == LogNormal(sigma=allin_loss_defaults().serving_extra_sigma)
    assert prep.entries[0].predicted_share == 1.0


def test_a_scenario_throughput_error_replaces_both(tmp_path: Path,
        serving_sigma: SetSigma) -> None:
    scenario = _scenario(tmp_path, extra=OWN_ERROR)
    assert _serving_prep(scenario).model_error is NO_MODEL_ERROR
    before = _run(scenario)
    serving_sigma(1.5)
    assert _run(scenario) == before


def test_measured_capacity_keeps_its_measurement(tmp_path: Path,
        serving_sigma: SetSigma) -> None:
    """A fully measured fleet draws no serving error: its cost band and SLO attainment are
    the same whatever serving_error_sigma is (the predicted fleet, scaling on the load its
    replicas turn out to serve, pays another band)."""
    (tmp_path / "m").mkdir()
    (tmp_path / "p").mkdir()
    measured = _scenario(tmp_path / "m", measured_rps=20.0)
    predicted = _scenario(tmp_path / "p")
    assert _serving_prep(measured).entries[0].predicted_share == 0.0
    assert _serving_prep(measured).model_error is NO_MODEL_ERROR
    runs = {}
    for sigma in (0.111, 1.5):
        serving_sigma(sigma)
        runs[sigma] = (_run(measured), _run(predicted))
    (m_low, p_low), (m_high, p_high) = runs[0.111], runs[1.5]
    assert m_low == m_high
    assert m_low.cost_usd == m_high.cost_usd
    assert p_low.cost_usd is not None
    assert p_high.cost_usd is not None
    assert p_high.cost_usd.p90 > p_low.cost_usd.p90


def test_slo_attainment_falls_as_the_serving_sigma_grows(tmp_path: Path,
        serving_sigma: SetSigma) -> None:
    """On the same futures (the factor is exp(σ·Z) of one stream), a wider error leaves more
    replications of a fixed fleet (a reservation of the predicted peak's replicas, no spill)
    short of capacity at the peak: the mean attainment does not rise with σ, and at the floor
    (no serving-only factor) it is the shared error's alone."""
    scenario = _scenario(tmp_path)
    attainment = []
    for sigma in (0.0, 0.111, 0.3, 0.6413, 1.0):
        serving_sigma(sigma)
        metrics = _run(scenario, plan=1).metrics
        assert metrics is not None
        assert metrics.slo_attainment is not None
        attainment.append(metrics.slo_attainment)
    assert attainment[0] == attainment[1]  # both at the floor: no serving-only factor
    assert attainment == sorted(attainment, reverse=True)
    assert attainment[-1] < attainment[1]


def test_the_draw_is_once_per_replication_and_phase_and_reproducible(tmp_path: Path) -> None:
    """Its own stream: the same seed gives the same run in one process or two, another seed
    another one; the draw differs between replications."""
    from costsim.sim.draws import draw_named

    scenario = _scenario(tmp_path)
    prep = _serving_prep(scenario)
    roots = replication_seeds(3, 2)
    factors = [draw_named(prep.model_error, root, "phase", "serve", "serving-model-error")
               for root in roots]
    assert factors[0] != factors[1]
    one = _run(scenario, replications=6, seed=7)
    assert _run(scenario, replications=6, seed=7, workers=2) == one
    assert _run(scenario, replications=6, seed=8).metrics != one.metrics


def test_spot_reclaims_of_a_measured_fleet_lose_what_it_measurably_serves(
        tmp_path: Path) -> None:
    """A reclaimed spot replica of a measured fleet loses the requests its measured capacity
    would have served: no throughput error enters, whatever the scenario draws."""
    attainment = []
    for value in (1.0, 0.5):
        folder = tmp_path / str(value)
        folder.mkdir()
        extra = f"uncertainty:\n  throughput_error: {{dist: fixed, value: {value}}}\n"
        plans = PLANS.replace("use: {serve: {gpu: H100}}",
                              "use: {serve: {gpu: H100, option: spot}}")
        path = folder / "s.yaml"
        path.write_text(serving_scenario("serving error", peak_requests_per_s=60, diurnal=True,
                                         plans=plans,
                                         extra=measured_h100(folder, 20.0) + extra))
        scenario = load_scenario_file(path).scenario
        result = _run(scenario, replications=10)
        assert result.metrics is not None
        attainment.append(result.metrics.slo_attainment)
    assert attainment[0] == attainment[1]
    assert attainment[0] is not None
    assert attainment[0] < 1.0  # reclaims did cost requests
