"""All-in GPU-hours of real runs against published steady-state speed (tests/data/allin_runs.csv).

A model card's GPU-hours count everything a model's training used: failures, restarts and lost
work, checkpoints, evaluations, idle allocation, and (for the Llama 3.1 card, whose per-model
figures sum to the cumulative "GPU hours of computation") a share of experiments and post-
training. The rows record how much of that an all-in run spends beyond steady-state speed, as
``all_in_over_steady`` = all-in MFU / published steady-state MFU, for the simulator's calibration
of what real runs lose. These tests keep the recorded ratios true to the published figures and
costsim's FLOP count, and check that costsim's own steady state plus goodput, which models only
failures, checkpoints and evaluation, sits below the cards (docs/performance.md §4).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Task, TrainingSetup
from costsim.memory.estimate import shape_of
from costsim.perf.flops import model_flops_per_token
from costsim.perf.train_estimate import LayoutConstraints, estimate_training_run
from costsim.units import FLOPS_PER_TFLOPS, SECONDS_PER_HOUR

DATA = Path(__file__).parents[1] / "data"
with (DATA / "allin_runs.csv").open(encoding="utf-8") as _handle:
    ROWS = {row["id"]: row for row in csv.DictReader(_handle)}


def all_in_mfu(row_id: str) -> float:
    """Model FLOPs of the run's tokens / (its GPU-hours × the GPU's dense BF16 peak)."""
    row = ROWS[row_id]
    shape = shape_of(load_preset(row["preset"]).architecture)
    flops = float(model_flops_per_token(shape, int(row["seq_len"]))) * float(row["tokens"])
    peak = get_gpu(row["gpu"]).dense_tflops(Dtype.BF16)
    assert peak is not None
    return flops / (float(row["all_in_gpu_hours"]) * SECONDS_PER_HOUR * peak * FLOPS_PER_TFLOPS)


@pytest.mark.parametrize("row_id", sorted(ROWS))
def test_recorded_loss_ratio_follows_from_the_published_figures(row_id: str) -> None:
    row = ROWS[row_id]
    ratio = all_in_mfu(row_id) / float(row["steady_reference_mfu"])
    assert ratio == pytest.approx(float(row["all_in_over_steady"]), abs=0.01)
    assert 0 < ratio < 1  # an all-in run never beats steady-state speed
    assert row["source"].strip()
    assert row["steady_source"].strip()


@pytest.mark.parametrize("row_id", ["A1", "A2"])
def test_costsim_all_in_sits_below_the_llama3_card(row_id: str, defaults: PerfDefaults) -> None:
    """The issue's command (2,048 H100s, seq 8192): costsim's steady state is Megatron-class
    (MFU near the published 42-47 %), its goodput covers failures, checkpoints and evaluation
    only, so its all-in hours fall short of the card by what the card adds beyond those."""
    row = ROWS[row_id]
    base = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout(),
                         seq_len=int(row["seq_len"]))
    est = estimate_training_run(load_preset(row["preset"]).architecture, get_gpu(row["gpu"]),
                                2048, float(row["tokens"]), base, LayoutConstraints(),
                                defaults=defaults, price_usd_per_gpu_hour=1.0)
    card = float(row["all_in_gpu_hours"])
    assert est.gpu_hours < card
    steady_mfu = float(row["steady_reference_mfu"])
    assert est.step.mfu == pytest.approx(steady_mfu, rel=0.20)  # steady state is not the gap
    assert est.goodput.goodput > 0.9  # what costsim's goodput covers is a few per cent
