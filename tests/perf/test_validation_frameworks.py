"""Published runs of frameworks other than the Megatron-class calibration, and LoRA against
full fine-tuning (tests/data/training_runs_frameworks.csv): predicted with default assumptions
and the row's ``--framework``, within the tolerance each row states with its reason.

* F1–F2: torchtitan (PyTorch FSDP2) Llama 3.1 8B on 8 and 128 H100s, tokens/s/GPU, the
  published layout (FSDP full shard, local batch 2, selective checkpointing, seq 8192). The
  pytorch-fsdp factor comes from A100 runs (perf_framework_benchmarks.csv), so these H100 rows
  check it on another GPU generation rather than restate it.
* F3: NeMo's LoRA and SFT throughput on the same layout: their ratio checks what LoRA computes.
* F4: NeMo AutoModel (PyTorch backend) Llama 3.3 70B LoRA on 8 H100s, TP 2 × PP 4: an H100
  LoRA run of non-Megatron code, tokens/s/GPU.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import (
    ALL_LINEAR,
    LoraConfig,
    ParallelLayout,
    Recompute,
    Task,
    TrainingFramework,
    TrainingSetup,
)
from costsim.memory.estimate import shape_of
from costsim.perf.training import TrainingStep, estimate_training_step
from tests.perf.conftest import reported_figure, row_tolerance

DATA = Path(__file__).parents[1] / "data"

with (DATA / "training_runs_frameworks.csv").open(encoding="utf-8") as _handle:
    ROWS = {row["id"]: row for row in csv.DictReader(_handle)}

THROUGHPUT = ("F1", "F2")
LORA_THROUGHPUT = ("F4",)
# NeMo 2 LoRA defaults: adapters on every linear layer of a block, rank (dim) 32.
NEMO_LORA = LoraConfig(rank=32, targets=(ALL_LINEAR,))
# NeMo AutoModel's Llama 70B LoRA benchmark: match_all_linear, dim 16.
AUTOMODEL_LORA = LoraConfig(rank=16, targets=(ALL_LINEAR,))


def tolerance(row_id: str) -> float:
    """The row's stated tolerance as a fraction."""
    return row_tolerance(ROWS[row_id])


def _run(row_id: str, defaults: PerfDefaults, task: Task = Task.TRAIN,
         lora: LoraConfig | None = None) -> TrainingStep:
    """The step of the published layout. It ran, so it is scored directly: costsim's memory
    engine rates Korthikanti's selective recomputation, which keeps more than torchtitan's
    op-level policy (82.4 GiB published on a 96 GB GPU), and would call F1 too big."""
    row = ROWS[row_id]
    gpus = int(row["gpus"])
    tp, pp = int(row["tp"]), int(row["pp"])
    layout = ParallelLayout(tp=tp, pp=pp, dp=gpus // (tp * pp), zero=int(row["zero"]))
    micro_batch = int(row["micro_batch"])
    setup = TrainingSetup(task=task, precision=Dtype.BF16, layout=layout,
                          seq_len=int(row["seq_len"]), lora=lora, micro_batch=micro_batch,
                          grad_accum=int(row["global_batch_seqs"]) // (micro_batch * layout.dp),
                          recompute=Recompute(row["recompute"]),
                          framework=TrainingFramework(row["framework"]))
    model = load_preset(row["arch"]).architecture
    return estimate_training_step(shape_of(model), get_gpu(row["gpu"]), setup,
                                  network=defaults.network_for(row["gpu"]),
                                  assumptions=defaults.training, arch=model)


def predicted_and_reported(row_id: str, defaults: PerfDefaults) -> tuple[float, float]:
    """(predicted, reported) on the row's basis."""
    text = ROWS[row_id]["reported"]
    if row_id in THROUGHPUT:
        step = _run(row_id, defaults)
        return step.tokens_per_s / step.gpus, reported_figure(r"([\d,]+) tokens/s/GPU", text)
    if row_id in LORA_THROUGHPUT:
        step = _run(row_id, defaults, Task.FINETUNE, AUTOMODEL_LORA)
        return step.tokens_per_s / step.gpus, reported_figure(r"([\d,.]+) tokens/s/GPU", text)
    full = _run(row_id, defaults, Task.FINETUNE)
    lora = _run(row_id, defaults, Task.FINETUNE, NEMO_LORA)
    return lora.tokens_per_s / full.tokens_per_s, reported_figure(r"= ([\d.]+)", text)


def test_every_framework_row_is_checked() -> None:
    assert set(ROWS) == {*THROUGHPUT, *LORA_THROUGHPUT, "F3"}
    assert all(row["tolerance_reason"].strip() and row["source"].strip()
               for row in ROWS.values())


# Outside its stated tolerance (+31 %, stated ±25 % before comparing): the model
# over-predicts torchtitan on 8 H100s as it over-predicts llm-foundry's 8-H100 MPT-7B (C6,
# +15 %). The source's GPUs run at a 500 W limit (700 W nominal) with a peak it puts "between
# SXM and NVL"; at the NVL peak (835 TFLOPS) the prediction is 10.6 % high. Kept as a strict
# xfail so that a change that explains it shows up.
#
# F4 (+137 %) is not a 500 W artefact: NeMo's own Megatron-based LoRA of a 70B on the same 8 H100s
# and layout publishes 2,557 tokens/s/GPU in FP8 (performance_summary.md @070a0bb), in line with
# the Megatron-class prediction here (1,442 in BF16); AutoModel's PyTorch path ran that job at
# 176 model TFLOPS/GPU (18 % MFU). One factor per framework label cannot hold both torchtitan's
# pre-training (0.92 of Megatron) and this LoRA run (~0.4): see docs/performance.md §4.
KNOWN_MISSES = {"F1": "8 x 500 W H100: +31 % against a stated ±25 % (docs/performance.md §4)",
                "F4": "AutoModel 70B LoRA: +137 % against a stated ±25 % (docs/performance.md §4)"}


@pytest.mark.parametrize("row_id", [
    pytest.param(r, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[r]))
    if r in KNOWN_MISSES else r for r in sorted(ROWS)])
def test_framework_rows_within_their_stated_tolerance(row_id: str,
                                                      defaults: PerfDefaults) -> None:
    predicted, reported = predicted_and_reported(row_id, defaults)
    assert predicted == pytest.approx(reported, rel=tolerance(row_id)), (row_id, predicted,
                                                                         reported)


def test_the_framework_changes_only_the_compute_rate(defaults: PerfDefaults) -> None:
    """The same run under the Megatron-class calibration is faster by about the factor."""
    titan = _run("F1", defaults)
    ROWS["F1x"] = {**ROWS["F1"], "framework": "megatron-lm"}
    try:
        calibrated = _run("F1x", defaults)
    finally:
        del ROWS["F1x"]
    factor = defaults.training.framework_factor(TrainingFramework.PYTORCH_FSDP)
    assert titan.compute_s == pytest.approx(calibrated.compute_s / factor, rel=1e-9)
    assert titan.mfu < calibrated.mfu
