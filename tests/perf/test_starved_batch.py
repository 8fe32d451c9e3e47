"""A default batch that fits the fleet, and the warning for one that starves it (issue 17)."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Task, TrainingSetup
from costsim.perf.starved_batch import IDLE_SHARE_LIMIT, batch_ladder, idle_share
from costsim.perf.train_estimate import (
    LayoutConstraints,
    TrainingEstimate,
    estimate_training_run,
)

DATA = Path(__file__).parents[1] / "data"
with (DATA / "training_runs_llama3.csv").open(encoding="utf-8") as _handle:
    L4 = next(row for row in csv.DictReader(_handle) if row["id"] == "L4")
CARD_GPU_HOURS = 30.84e6  # L4's "reported": the Llama 3.1 model card's 405B training time

PRETRAIN = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout(),
                         seq_len=8192)


def _estimate(model: str, gpus: int, tokens: float, defaults: PerfDefaults,
              fixed: LayoutConstraints | None = None) -> TrainingEstimate:
    return estimate_training_run(load_preset(model).architecture, get_gpu("H100"), gpus,
                                 tokens, PRETRAIN, fixed or LayoutConstraints(),
                                 defaults=defaults, price_usd_per_gpu_hour=1.0)


def _starved(est: TrainingEstimate) -> list[str]:
    return [w for w in est.warnings if w.startswith("batch starves the fleet")]


def test_llama_405b_on_16k_h100_gets_a_batch_that_fits_the_fleet(
        defaults: PerfDefaults) -> None:
    """Issue 17's goal: without a batch, `estimate train --model llama-3.1-405b --gpu H100
    --gpus 16384 --tokens 15.6e12 --seq-len 8192` gave 4M tokens, pp 32, a 60 % bubble, 12.7 %
    MFU and 103M GPU-hours against the model card's 30.84M."""
    assert "30.84M" in L4["reported"]
    est = _estimate("llama-3.1-405b", int(L4["gpus"]), float(L4["tokens"]), defaults)
    assert est.setup.global_batch * est.setup.seq_len == 16 * 2**20  # Llama 3's own 16M
    assert est.step.mfu >= 0.30
    assert abs(est.gpu_hours / CARD_GPU_HOURS - 1) <= 0.35
    assert not _starved(est)
    assert est.global_batch_basis.startswith("default for pre-training: 16M tokens")


def test_llama_3_8b_on_64_h100_keeps_about_4m_tokens(defaults: PerfDefaults) -> None:
    est = _estimate("llama-3-8b", 64, 1e12, defaults)
    assert est.setup.global_batch * est.setup.seq_len <= 4.2e6
    assert "Llama 2" in est.global_batch_basis


def test_a_tiny_batch_on_a_huge_fleet_is_called_out_with_one_that_is_not(
        defaults: PerfDefaults) -> None:
    tiny = _estimate("llama-3.1-405b", 16384, 15.6e12, defaults,
                     LayoutConstraints(global_batch_seqs=256))
    assert idle_share(tiny.step) > IDLE_SHARE_LIMIT
    (warning,) = _starved(tiny)
    assert "256 sequences" in warning
    named = int(warning.split("--global-batch ")[1].split(")")[0])
    assert named > 256
    better = _estimate("llama-3.1-405b", 16384, 15.6e12, defaults,
                       LayoutConstraints(global_batch_seqs=named))
    assert idle_share(better.step) <= IDLE_SHARE_LIMIT
    assert not _starved(better)
    # The smallest of the ladder: half the named batch still starves the fleet.
    half = _estimate("llama-3.1-405b", 16384, 15.6e12, defaults,
                     LayoutConstraints(global_batch_seqs=named // 2))
    assert idle_share(half.step) > IDLE_SHARE_LIMIT


def test_a_fleet_no_batch_can_feed_says_so(defaults: PerfDefaults) -> None:
    """GPT-2 held to TP 6 over the PCIe of six RTX 4090s: the tensor-parallel all-reduces are
    paid per token, so no batch hides them; the warning says so instead of naming a batch."""
    est = estimate_training_run(load_preset("gpt2").architecture, get_gpu("RTX4090"), 6, 1e9,
                                replace(PRETRAIN, seq_len=1024),
                                LayoutConstraints(tp=6, global_batch_seqs=8),
                                defaults=defaults, price_usd_per_gpu_hour=1.0)
    (warning,) = _starved(est)
    assert "no batch up to the largest published one" in warning
    assert "--global-batch" not in warning


def test_the_ladder_doubles_up_to_the_largest_published_batch() -> None:
    assert batch_ladder(256, 7680) == [512, 1024, 2048, 4096, 7680]
    assert batch_ladder(4096, 4096) == []
    assert batch_ladder(5000, 4096) == []
    assert batch_ladder(1, 4) == [2, 4]


@pytest.mark.parametrize("gpus", [8, 64])
def test_a_small_fleet_on_the_default_is_not_warned(gpus: int, defaults: PerfDefaults) -> None:
    assert not _starved(_estimate("llama-3-8b", gpus, 1e10, defaults))
