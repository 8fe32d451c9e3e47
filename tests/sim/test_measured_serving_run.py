"""A scenario whose serving capacity comes from a measured profile (DESIGN §12): ``run`` sizes
the fleet by it, the throughput error applies to predicted capacity only, and the summary and
report list the measured figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.perf_defaults import perf_defaults
from costsim.cli.run_table import render_run
from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.phases import ServingPhase
from costsim.report.summary import summary_json
from costsim.sim.run_result import simulate_scenario
from costsim.sim.serving_prep import ServingEntryPrep, replica_capacities
from tests.serving_scenario import measured_h100, serving_scenario


def _write(tmp_path: Path, extra: str, profile_rps: float | None) -> Path:
    if profile_rps is not None:
        # a benchmark file never names its GPU: the scenario entry gives it
        extra = measured_h100(tmp_path, profile_rps) + extra
    f = tmp_path / "s.yaml"
    f.write_text(serving_scenario("measured serving", peak_requests_per_s=60, diurnal=False,
                                  extra=extra))
    return f


def _arch():  # type: ignore[no-untyped-def]
    from costsim.catalog.models import load_preset

    return load_preset("llama-3-8b").architecture


def _run(path: Path):  # type: ignore[no-untyped-def]
    loaded = load_scenario_file(path)
    return loaded, simulate_scenario(loaded.scenario, seed=0, replications=2,
                                     inputs=loaded.resolved)


def test_measured_capacity_half_the_models_doubles_the_fleet(tmp_path: Path) -> None:
    predicted_dir, measured_dir = tmp_path / "p", tmp_path / "m"
    predicted_dir.mkdir()
    measured_dir.mkdir()
    loaded, base = _run(_write(predicted_dir, "", None))
    phase = loaded.scenario.phases[0]
    assert isinstance(phase, ServingPhase)
    model = replica_capacities(_arch(), get_gpu("H100"), phase, perf_defaults())
    half = model.sizing_requests_per_s[0] / 0.7 / 2  # u · max = half the model's capacity
    _, measured = _run(_write(measured_dir, "", half))
    replica = replica_capacities(_arch(), get_gpu("H100"), phase, perf_defaults(),
                                 measured=load_scenario_file(measured_dir / "s.yaml")
                                 .scenario.measurements.serving)
    assert replica.sizing_requests_per_s[0] == pytest.approx(model.sizing_requests_per_s[0] / 2)
    assert replica.bucket_basis(0).value == "measured"
    cost_ratio = measured.plans[0].cost_usd.mean / base.plans[0].cost_usd.mean
    assert cost_ratio == pytest.approx(2.0, rel=0.2)  # ⌈60/c⌉ replicas: about twice as many
    summary = summary_json(measured, generated_at="x")
    used = summary["inputs"]["measured_inputs"]
    assert used["files"]["serving"] == [str(measured_dir / "bench.csv")]
    (line,) = used["used"]["h100"]
    assert line["phase"] == "serve"
    assert line["gpu"] == "H100"
    assert line["basis"] == "measured"
    assert line["source"] == "bench.csv row 2 (offline run)"
    assert "measured_inputs" not in summary_json(base, generated_at="x")["inputs"]
    text = render_run(measured, None)
    assert "Measured inputs: bench.csv replaced 1 model figure(s)" in text
    assert "Measured inputs" not in render_run(base, None)


def test_throughput_error_applies_to_predicted_capacity_only(tmp_path: Path) -> None:
    """A slow engine (t = 0.5) costs the predicted fleet more replicas (its autoscaler scales
    on the load its replicas turn out to serve); the measured fleet keeps its measurement."""
    slow = "uncertainty:\n  throughput_error: {dist: fixed, value: 0.5}\n"
    attainment, cost = {}, {}
    for name, rps in (("predicted", None), ("measured", 20.0)):
        for error in ("", slow):
            folder = tmp_path / f"{name}{bool(error)}"
            folder.mkdir()
            _, run = _run(_write(folder, error, rps))
            attainment[name, bool(error)] = run.plans[0].metrics.slo_attainment
            cost[name, bool(error)] = run.plans[0].cost_usd.mean
    assert attainment["measured", True] == attainment["measured", False]
    assert cost["measured", True] == cost["measured", False]
    assert cost["predicted", True] > 1.5 * cost["predicted", False]


def test_service_capacity_at_scales_only_the_predicted_share() -> None:
    def entry(share: float) -> ServingEntryPrep:
        return ServingEntryPrep(source=None, gpus_per_replica=1,  # type: ignore[arg-type]
                                sizing_capacity_s=7.0, service_capacity_s=10.0,
                                request_share=1.0, prompt_tokens=1.0, output_tokens=1.0,
                                min_replicas=1, max_replicas=None, scale_up_delay_s=0.0,
                                predicted_share=share)
    assert entry(1.0).service_capacity_at(0.8) == 10.0 * 0.8
    assert entry(0.0).service_capacity_at(0.8) == 10.0
    # half the work on a measured bucket: 1/c = 0.5/10 + 0.5/(10 · 0.8)
    assert entry(0.5).service_capacity_at(0.8) == pytest.approx(1 / (0.05 + 0.05 / 0.8))
