"""The shipped stack factors equal their derivation from published same-code pairs, and they
move the step model as documented (docs/performance.md "Stack"; issue 18 item 2)."""

from __future__ import annotations

import csv
import math
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.domain.architecture import Architecture
from costsim.domain.performance import PerfDefaults, StackFactors
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Recompute, Task, TrainingSetup
from costsim.memory.estimate import shape_of
from costsim.memory.shape import ModelShape
from costsim.perf.layouts import LayoutConstraints
from costsim.perf.train_estimate import estimate_training_run
from costsim.perf.training import estimate_training_step
from tests.perf import test_validation as base
from tests.perf import test_validation_extra as extra
from tests.perf.conftest import arch

DATA = Path(__file__).parents[1] / "data"
with (DATA / "training_stack_pairs.csv").open(encoding="utf-8") as _handle:
    PAIRS = list(csv.DictReader(_handle))


def _geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def _tokens_per_gpu(row: dict[str, str], side: str, gpu: str, defaults: PerfDefaults) -> float:
    fixed = LayoutConstraints(tp=1, pp=1, zero=3, recompute=Recompute(row[f"recompute_{side}"]),
                              global_batch_seqs=int(row[f"batch_{side}"]))  # FSDP full shard
    setup = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout(),
                          seq_len=int(row["seq_len"]))
    est = estimate_training_run(arch(row["arch"]), get_gpu(gpu), int(row["gpus"]), 1e9, setup,
                                fixed, defaults=defaults, price_usd_per_gpu_hour=1.0)
    return est.step.tokens_per_s / est.gpus


def test_fp8_factor_is_the_geometric_mean_of_the_published_pairs(
        defaults: PerfDefaults) -> None:
    ratios = [float(r["figure_a"]) / float(r["figure_b"]) for r in PAIRS if r["kind"] == "fp8"]
    assert len(ratios) == 6
    assert defaults.training.stack.precision_factor[Dtype.FP8] == pytest.approx(
        _geomean(ratios), abs=0.001)


def test_memory_factor_is_what_the_model_misses_on_40_gb(defaults: PerfDefaults) -> None:
    """(measured / predicted on A100-40GB) / (the same on A100-80GB), the model run without
    the memory factor: its geometric mean is the shipped factor."""
    neutral = replace(defaults.training.stack, memory_small_factor=1.0)
    plain = replace(defaults, training=replace(defaults.training, stack=neutral))
    ratios = [(float(r["figure_a"]) / _tokens_per_gpu(r, "a", "A100", plain))
              / (float(r["figure_b"]) / _tokens_per_gpu(r, "b", "A100-80GB", plain))
              for r in PAIRS if r["kind"] == "memory"]
    assert len(ratios) == 7
    assert defaults.training.stack.memory_small_factor == pytest.approx(_geomean(ratios),
                                                                         abs=0.005)


def test_legacy_and_current_calibration_rows_are_centred_alike(defaults: PerfDefaults) -> None:
    """After the era split, the Megatron-LM 2021 / BLOOM 2022 rows and the llm-foundry 2023 A100
    rows have the same mean log error (within 3 %): the era factor is their ratio, and η∞
    Ampere is the current rows' centre."""
    def error(figures: tuple[float, float]) -> float:
        predicted, published = figures
        return published / predicted

    legacy = [error(base.predicted_andreported_figure(r, defaults))
              for r in ("C1", "C2", "C3", "C4")]
    legacy += [error(extra.predicted_andreported_figure(r, defaults)) for r in extra.MEGATRON]
    current = [error(base.predicted_andreported_figure("C5", defaults))]
    current += [error(extra.predicted_andreported_figure(r, defaults))
                for r in ("X5", "X6", "X9", "X10", "X11", "X12", "X13")]
    assert _geomean(legacy) == pytest.approx(1.0, abs=0.03)
    assert _geomean(current) == pytest.approx(1.0, abs=0.03)


def _step(defaults: PerfDefaults, gpu: str, precision: Dtype, year: int | None = None,
          model: str = "mpt-7b-2k") -> float:
    shape_arch = arch(model)
    setup = TrainingSetup(task=Task.TRAIN, precision=precision,
                          layout=ParallelLayout(dp=8, zero=3), micro_batch=4, seq_len=2048,
                          framework_year=year)
    step = estimate_training_step(_shape(shape_arch), get_gpu(gpu), setup,
                                  network=defaults.network_for(gpu),
                                  assumptions=defaults.training)
    return step.tokens_per_s


def _shape(model: Architecture) -> ModelShape:
    return shape_of(model)


def test_fp8_runs_faster_than_bf16_but_far_from_twice(defaults: PerfDefaults) -> None:
    ratio = _step(defaults, "H100", Dtype.FP8) / _step(defaults, "H100", Dtype.BF16)
    assert 1.05 < ratio < 1.3


def test_a_2022_stack_on_a100_runs_at_the_legacy_factor(defaults: PerfDefaults) -> None:
    ratio = (_step(defaults, "A100-80GB", Dtype.BF16, year=2022)
             / _step(defaults, "A100-80GB", Dtype.BF16))
    assert ratio == pytest.approx(defaults.training.stack.legacy_factor, rel=0.03)
    # fp16 on A100 without a year is inferred to be that legacy stack.
    assert _step(defaults, "A100-80GB", Dtype.FP16) == pytest.approx(
        _step(defaults, "A100-80GB", Dtype.FP16, year=2021))


def test_forty_gb_card_runs_slower_than_eighty_on_the_same_layout(
        defaults: PerfDefaults) -> None:
    ratio = _step(defaults, "A100", Dtype.BF16) / _step(defaults, "A100-80GB", Dtype.BF16)
    # Same peak; the 80 GB card has 31 % more bandwidth, which this compute-bound step barely
    # uses: what remains is the memory factor.
    assert ratio == pytest.approx(defaults.training.stack.memory_small_factor, rel=0.02)


WIDTHS = ("mpt-1b", "mpt-3b", "mpt-7b-2k", "mpt-13b", "mpt-30b", "mpt-70b")  # h 2048..8192


@pytest.mark.parametrize("precision", [Dtype.BF16, Dtype.FP16, Dtype.FP8])
@pytest.mark.parametrize("gpu", ["A100", "A100-80GB", "H100", "V100-32GB"])
def test_efficiency_never_falls_with_width(gpu: str, precision: Dtype,
                                           defaults: PerfDefaults) -> None:
    """MFU on one GPU at fixed tokens per GEMM is non-decreasing in the hidden size, under every
    stack factor (they scale η, never its dependence on width)."""
    if get_gpu(gpu).dense_tflops(precision) is None:
        pytest.skip(f"{gpu} has no {precision.value}")
    setup = TrainingSetup(task=Task.TRAIN, precision=precision, layout=ParallelLayout(),
                          micro_batch=4, seq_len=2048)
    mfus = [estimate_training_step(_shape(arch(name)), get_gpu(gpu), setup,
                                   network=defaults.network_for(gpu),
                                   assumptions=defaults.training).mfu for name in WIDTHS]
    assert mfus == sorted(mfus)


def test_stack_factors_default_to_neutral() -> None:
    assert StackFactors().factor(generation="volta", precision=Dtype.FP8, memory_gib=16) == 1.0
