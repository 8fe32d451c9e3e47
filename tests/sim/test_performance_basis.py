"""Each phase's performance basis (prior, measured, mixed, stated) and the error drawn on it,
as :mod:`costsim.sim.performance_basis` reads it from the prepared plan: the defaults' out-of-
sample errors for predicted figures, none for measured ones, the scenario's own
``uncertainty.throughput_error`` where it sets one, and P10/P90 equal to the draws'."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.perf_defaults import allin_loss_defaults
from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.uncertainty import Distribution, Fixed, LogNormal, Normal, Triangular, Uniform
from costsim.sim.draws import draw
from costsim.sim.performance_basis import Z90, p10_p90, performance_bases
from costsim.sim.prepare import TrainingPrep, prepare_plan
from costsim.sim.results import PerformanceBasis

SCENARIO = """\
name: basis
start: 2027-01-01
horizon_months: 2
models:
  main: {{preset: llama-3-8b}}
{extra}
phases:
  - {{name: research, kind: experiments, duration_months: 1, arrivals_per_day: 2,
     job: {{gpus: 1, gpu_memory_gib: 20, gpu_hours: 3}}}}
  - {{name: train, kind: training, model: main, tokens: 2e9}}
  - {{name: serve, kind: serving, duration_months: 1, model: main,
     load: {{peak_requests_per_s: 20, diurnal: false}},
     requests: [{{prompt_tokens: 1000, output_tokens: 200, share: 0.5}},
                {{prompt_tokens: 4000, output_tokens: 500, share: 0.5}}]}}
plans:
  - name: h100
    use: {{research: {{gpu: H100}}, train: {{gpu: H100, count: 8}}, serve: {{gpu: H100}}}}
"""
BENCH_HEADER = "model,prompt_tokens,output_tokens,request_rate,requests_per_s,source\n"


def _bases(tmp_path: Path, extra: str = "") -> dict[str, PerformanceBasis]:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(extra=extra))
    scenario = load_scenario_file(path).scenario
    prep = prepare_plan(scenario, scenario.plans[0])
    assert prep.feasible, prep.infeasible_reasons
    return {b.phase: b for b in performance_bases(prep)}


def _factors(sigma: float) -> tuple[float, float]:
    return math.exp(-Z90 * sigma), math.exp(Z90 * sigma)


def test_default_uncertainty_is_the_prior_with_the_shipped_out_of_sample_errors(
        tmp_path: Path) -> None:
    loss = allin_loss_defaults()
    bases = _bases(tmp_path)
    expected = {"train": ("training", loss.training_sigma, "training_error_sigma"),
                "serve": ("serving", loss.serving_sigma, "serving_error_sigma"),
                "research": ("experiments", loss.throughput_error_sigma,
                             "throughput_error_sigma")}
    for phase, (kind, sigma, key) in expected.items():
        basis = bases[phase]
        assert (basis.kind, basis.basis, basis.error) == (kind, "prior", "prior")
        assert basis.sigma == pytest.approx(sigma, abs=1e-12)
        assert (basis.p10_factor, basis.p90_factor) == pytest.approx(_factors(sigma))
        assert basis.predicted_share == 1.0
        assert key in basis.source
    # the shipped defaults as the docs quote them (docs/performance.md): σε 0.4899, σ_serve
    # 0.625 (×0.45–×2.23), the shared 0.111
    assert bases["train"].sigma == pytest.approx(0.4899, abs=1e-9)
    assert bases["serve"].sigma == pytest.approx(0.625, abs=1e-9)
    assert (round(bases["serve"].p10_factor, 2), round(bases["serve"].p90_factor, 2)) == (
        0.45, 2.23)
    assert bases["research"].sigma == pytest.approx(0.111, abs=1e-12)
    assert "scenario states" in bases["research"].source  # a generic job's GPU-hours


def test_a_stated_throughput_error_replaces_the_defaults_everywhere(tmp_path: Path) -> None:
    bases = _bases(tmp_path, "uncertainty:\n  throughput_error: {dist: lognormal, sigma: 0.1}")
    for basis in bases.values():
        assert (basis.basis, basis.error, basis.sigma) == ("stated", "stated", 0.1)
        assert (basis.p10_factor, basis.p90_factor) == pytest.approx(_factors(0.1))
        assert "uncertainty.throughput_error" in basis.source


def test_a_stated_triangular_error_has_no_log_sd_and_its_own_percentiles(
        tmp_path: Path) -> None:
    bases = _bases(tmp_path, "uncertainty:\n  throughput_error: "
                             "{dist: triangular, low: 0.6, mode: 0.9, high: 1.1}")
    basis = bases["serve"]
    assert basis.basis == "stated"
    assert basis.sigma is None
    # F(x) = (x−a)²/((b−a)(c−a)) below the mode: F(0.6 + √(0.1·0.5·0.3)) = 0.1
    assert basis.p10_factor == pytest.approx(0.6 + math.sqrt(0.1 * 0.5 * 0.3))
    assert basis.p90_factor == pytest.approx(1.1 - math.sqrt(0.1 * 0.5 * 0.2))


def _measure_serving(tmp_path: Path, rows: str, extra: str = "") -> dict[str, PerformanceBasis]:
    (tmp_path / "bench.csv").write_text(BENCH_HEADER + rows)
    return _bases(tmp_path, "measurements:\n  serving:\n"
                            "    - {path: bench.csv, gpu: NVIDIA H100 80GB HBM3}\n" + extra)


def test_a_wholly_measured_serving_phase_is_measured_even_with_a_stated_error(
        tmp_path: Path) -> None:
    rows = "llama-3-8b,1000,200,inf,8,offline run\nllama-3-8b,4000,500,inf,2,offline run\n"
    for extra in ("", "uncertainty:\n  throughput_error: {dist: lognormal, sigma: 0.1}\n"):
        bases = _measure_serving(tmp_path, rows, extra)
        serve = bases["serve"]
        assert (serve.basis, serve.error, serve.sigma) == ("measured", "none", 0.0)
        assert (serve.p10_factor, serve.p90_factor, serve.predicted_share) == (1.0, 1.0, 0.0)
        assert "bench.csv" in serve.source
        assert bases["train"].basis == ("prior" if not extra else "stated")


def test_a_fleet_part_measured_part_predicted_is_mixed_with_its_predicted_share(
        tmp_path: Path) -> None:
    # the H100 measured fast on short requests and very slow on long ones: the short ones
    # go to the measured H100s, the long ones to the L4s, whose capacity is predicted
    rows = "llama-3-8b,1000,200,inf,50,offline run\nllama-3-8b,4000,500,inf,0.01,offline run\n"
    (tmp_path / "bench.csv").write_text(BENCH_HEADER + rows)
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(extra="measurements:\n  serving:\n"
                                          "    - {path: bench.csv, gpu: NVIDIA H100 80GB HBM3}")
                    .replace("serve: {gpu: H100}", "serve: {fleet: [{gpu: H100}, {gpu: L4}]}"))
    scenario = load_scenario_file(path).scenario
    prep = prepare_plan(scenario, scenario.plans[0])
    assert prep.feasible, prep.infeasible_reasons
    serve = {b.phase: b for b in performance_bases(prep)}["serve"]
    assert (serve.basis, serve.error) == ("mixed", "prior")
    assert 0.0 < serve.predicted_share < 1.0
    assert serve.sigma == pytest.approx(allin_loss_defaults().serving_sigma)
    assert (serve.p10_factor, serve.p90_factor) == pytest.approx(_factors(serve.sigma))
    assert "serving_error_sigma" in serve.source
    assert "bench.csv" in serve.source


def test_a_predicted_adjusted_serving_size_says_so(tmp_path: Path) -> None:
    # one measured size: the other is the model scaled by its ratio (no error drawn on it)
    serve = _measure_serving(tmp_path, "llama-3-8b,1000,200,inf,8,offline run\n")["serve"]
    assert serve.basis == "measured"
    assert "predicted-adjusted" in serve.source


def test_a_measured_training_rate_is_measured(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    path = plain / "s.yaml"
    path.write_text(SCENARIO.format(extra=""))
    scenario = load_scenario_file(path).scenario
    train = prepare_plan(scenario, scenario.plans[0]).phases["train"]
    assert isinstance(train, TrainingPrep)
    (tmp_path / "runs.csv").write_text("model,gpu,gpus,tokens_per_s,source\n"
                                       f"llama-3-8b,H100,8,{train.tokens_per_s / 2:.1f},ours\n")
    bases = _bases(tmp_path, "measurements: {training: [runs.csv]}")
    assert (bases["train"].basis, bases["train"].sigma) == ("measured", 0.0)
    assert "runs.csv line 2 (ours)" in bases["train"].source
    assert bases["serve"].basis == "prior"


DISTRIBUTIONS = [LogNormal(sigma=0.3, median=0.9), Normal(mean=1.0, sd=0.2, low=0.9),
                 Uniform(low=0.5, high=1.5), Triangular(low=0.6, mode=0.9, high=1.1),
                 Fixed(value=0.8)]


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: type(d).__name__)
def test_p10_p90_are_those_of_the_simulators_draws(dist: Distribution) -> None:
    rng = np.random.default_rng(7)
    values = np.array([draw(dist, rng) for _ in range(20_000)])
    low, high = p10_p90(dist)
    assert np.percentile(values, 10) == pytest.approx(low, rel=0.02)
    assert np.percentile(values, 90) == pytest.approx(high, rel=0.02)


@settings(max_examples=50, deadline=None)
@given(st.floats(0.0, 3.0), st.floats(0.1, 10.0))
def test_a_lognormals_range_is_symmetric_in_log_about_its_median(sigma: float,
                                                                  median: float) -> None:
    low, high = p10_p90(LogNormal(sigma=sigma, median=median))
    assert low <= median <= high
    assert math.log(high / median) == pytest.approx(math.log(median / low), abs=1e-9)
    assert math.log(high / low) == pytest.approx(2 * Z90 * sigma, abs=1e-9)
