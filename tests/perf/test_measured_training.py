"""A measured training rate replaces the model's steady state for its case and scales to other
GPU counts by the model's own ratio (perf/measured_training.py, DESIGN §12)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.measurements import Basis, TrainingPoint
from costsim.domain.performance import PerfDefaults
from costsim.domain.workload import Quant, Task, TrainingFramework
from costsim.errors import InputError
from costsim.perf.layouts import LayoutConstraints
from costsim.perf.measured_training import (
    estimate_measured_training_run,
    point_tokens_per_s,
    predicted_at_point,
)
from costsim.perf.setups import training_setup
from costsim.perf.train_estimate import estimate_training_run

ARCH = load_preset("llama-3-8b").architecture
H100 = get_gpu("H100")
TOKENS = 1e11
BATCH_SEQS = 512


def _base(framework: TrainingFramework = TrainingFramework.MEGATRON_LM):  # type: ignore[no-untyped-def]
    return training_setup(ARCH, H100, task=Task.TRAIN, precision=None, seq_len=8192,
                          lora_rank=None, quant=Quant.NONE, source="test", framework=framework)


FIXED = LayoutConstraints(global_batch_seqs=BATCH_SEQS)


def _point(gpus: int, tokens_per_s: float | None = None, **extra: object) -> TrainingPoint:
    fields: dict[str, object] = {"model": "llama-3-8b", "architecture": ARCH, "gpu": "H100",
                                 "gpus": gpus, "seq_len": 8192, "tokens_per_s": tokens_per_s,
                                 "source": f"runs.csv line {gpus}"}
    fields.update(extra)
    return TrainingPoint(**fields)  # type: ignore[arg-type]


def _run(gpus: int, points: list[TrainingPoint], defaults: PerfDefaults,
         base=None):  # type: ignore[no-untyped-def]
    return estimate_measured_training_run(ARCH, H100, gpus, TOKENS, base or _base(), FIXED,
                                          measured=points, defaults=defaults,
                                          price_usd_per_gpu_hour=2.0)


def test_a_run_at_the_measured_count_takes_the_measured_rate(defaults: PerfDefaults) -> None:
    model = estimate_training_run(ARCH, H100, 64, TOKENS, _base(), FIXED, defaults=defaults,
                                  price_usd_per_gpu_hour=2.0)
    half = model.step.tokens_per_s / 2
    est = _run(64, [_point(64, half)], defaults)
    assert est.basis is Basis.MEASURED
    assert est.profile_source == "runs.csv line 64"
    assert est.step.tokens_per_s == pytest.approx(half)
    assert est.goodput.steady_wall_time_s == pytest.approx(TOKENS / half)
    assert est.step.mfu == pytest.approx(model.step.mfu / 2)
    assert est.predicted_tokens_per_s == pytest.approx(model.step.tokens_per_s)
    # goodput still applies on top of the measured steady time
    assert est.goodput.wall_time_s > est.goodput.steady_wall_time_s
    assert est.gpu_hours == pytest.approx(est.goodput.wall_time_s * 64 / 3600)
    assert est.cost_usd == pytest.approx(est.gpu_hours * 2.0)
    assert est.step.step_time_s == pytest.approx(model.step.step_time_s * 2)


def test_a_step_time_or_an_mfu_converts_with_the_models_flops(defaults: PerfDefaults) -> None:
    timed = _point(64, step_time_s=10.0, global_batch_tokens=512 * 8192.0)
    assert point_tokens_per_s(timed, H100) == pytest.approx(512 * 8192 / 10.0)
    model = estimate_training_run(ARCH, H100, 64, TOKENS, _base(), FIXED, defaults=defaults,
                                  price_usd_per_gpu_hour=0.0)
    by_mfu = _point(64, mfu=model.step.mfu)
    assert point_tokens_per_s(by_mfu, H100) == pytest.approx(model.step.tokens_per_s)


@settings(max_examples=6, deadline=None)
@given(measured_at=st.sampled_from([16, 32, 128]), share=st.floats(0.3, 0.95))
def test_other_counts_scale_exactly_by_the_models_ratio(measured_at: int, share: float,
                                                        defaults: PerfDefaults) -> None:
    at_point = predicted_at_point(_point(measured_at, 1.0), ARCH, H100, _base(),
                                  BATCH_SEQS * 8192.0, network=defaults.network_for("H100"),
                                  defaults=defaults)
    assert at_point is not None
    measured = share * at_point
    model = estimate_training_run(ARCH, H100, 64, TOKENS, _base(), FIXED, defaults=defaults,
                                  price_usd_per_gpu_hour=0.0)
    est = _run(64, [_point(measured_at, measured)], defaults)
    assert est.basis is Basis.PREDICTED_ADJUSTED
    assert est.step.tokens_per_s == pytest.approx(measured * model.step.tokens_per_s / at_point)


def test_the_nearest_count_wins_and_an_exact_one_beats_all(defaults: PerfDefaults) -> None:
    points = [_point(8, 50_000.0), _point(32, 150_000.0), _point(256, 900_000.0)]
    assert "line 32" in _run(64, points, defaults).profile_source
    exact = _run(64, [*points, _point(64, 250_000.0)], defaults)
    assert exact.basis is Basis.MEASURED
    assert exact.step.tokens_per_s == 250_000.0


@pytest.mark.parametrize("other", [
    {"gpu": "A100-80GB"},
    {"framework": TrainingFramework.PYTORCH_FSDP},
    {"architecture": load_preset("llama-3-70b").architecture},
])
def test_another_gpu_framework_or_model_leaves_the_prediction(other: dict[str, object],
                                                              defaults: PerfDefaults) -> None:
    est = _run(64, [_point(64, 100_000.0, **other)], defaults)
    assert est.basis is Basis.PREDICTED
    assert est.profile_source == ""


def test_lora_runs_keep_the_prediction(defaults: PerfDefaults) -> None:
    base = replace(_base(), task=Task.FINETUNE, lora=training_setup(
        ARCH, H100, task=Task.FINETUNE, precision=None, seq_len=8192, lora_rank=16,
        quant=Quant.NONE, source="test").lora)
    est = _run(64, [_point(64, 100_000.0)], defaults, base=base)
    assert est.basis is Basis.PREDICTED


def test_a_rate_above_the_gpus_peak_is_refused(defaults: PerfDefaults) -> None:
    with pytest.raises(InputError, match="above the GPU's peak"):
        _run(64, [_point(64, 50_000_000.0)], defaults)
