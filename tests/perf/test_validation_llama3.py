"""Llama 3 405B pre-training (tests/data/training_runs_llama3.csv): the published layouts of
Dubey et al. 2024 Table 4, and the layout search left free on the same fleet and batch.

Tolerances, stated before comparing:

* L1, L2 (steady-state TFLOPS/GPU of the run itself): Table 4 rounds to 10 TFLOPS (±1.3 %) and
  to whole MFU points, and does not say how it counts attention FLOPs (halving causal
  attention moves the 405B's FLOPs per token by 4 %): the source is good to about ±5 %, well
  inside the model's own error band, so the tolerance is that band, ±20 %, as for every other
  calibration row. Their ratio (430/400: 7.5 % lower per GPU at twice the GPUs, half the
  micro-batches per pipeline) is checked in direction only.
* L4 (all-in GPU-hours of the whole 405B run from the model card): ±20 %, as the former Llama 2
  all-in rows (removed: issue 18 reserves that card's GPU-hours); the card's total mixes
  stages the estimate does not separate (the
  4M/8M-token batch ramp, the 8,192-GPU stage at 430 TFLOPS, the long-context stage at 380),
  which move a one-stage estimate by about 2 %.

The published runs trained "on 8K sequences without activation checkpointing" (§3.3.2); the
interleaved degree, micro-batch and sharding are not published and are chosen as the fastest by
the step model. L3 (context parallelism 16) is not modelled.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Recompute, Task, TrainingSetup
from costsim.memory.estimate import estimate_training, shape_of
from costsim.memory.runtime import Verdict
from costsim.perf.layouts import LayoutConstraints, candidate_setups
from costsim.perf.train_estimate import TrainingEstimate, estimate_training_run, score_options
from costsim.perf.training import TrainingStep, estimate_training_step
from tests.perf.conftest import reported_figure, row_tolerance

DATA = Path(__file__).parents[1] / "data"
with (DATA / "training_runs_llama3.csv").open(encoding="utf-8") as _handle:
    ROWS = {row["id"]: row for row in csv.DictReader(_handle)}

MODEL = load_preset("llama-3.1-405b").architecture
H100 = get_gpu("H100")


def _base(row_id: str) -> TrainingSetup:
    return TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout(),
                         seq_len=int(ROWS[row_id]["seq_len"]))


def published_step(row_id: str, defaults: PerfDefaults) -> TrainingStep:
    """The step of the published layout (TP, PP, DP, batch, no recomputation), with the
    unpublished virtual stages, micro-batch and ZeRO stage the fastest the step model finds."""
    row = ROWS[row_id]
    fixed = LayoutConstraints(tp=int(row["tp"]), pp=int(row["pp"]), dp=int(row["dp"]),
                              recompute=Recompute(row["recompute"]),
                              global_batch_seqs=int(row["global_batch_seqs"]))
    network = defaults.network_for(H100.name)
    setups = candidate_setups(MODEL, int(row["gpus"]), _base(row_id), fixed,
                              fixed.global_batch_seqs, network.gpus_per_node)
    speeds = score_options(MODEL, H100, setups, network=network, defaults=defaults)
    fastest = setups[int(np.argmax(speeds))]
    return estimate_training_step(shape_of(MODEL), H100, fastest, network=network,
                                  assumptions=defaults.training)


def free_search(defaults: PerfDefaults) -> TrainingEstimate:
    """L4: the search left free on 16,384 H100s with Meta's 16M-token batch."""
    row = ROWS["L4"]
    return estimate_training_run(MODEL, H100, int(row["gpus"]), float(row["tokens"]),
                                 _base("L4"),
                                 LayoutConstraints(global_batch_seqs=int(row["global_batch_seqs"])),
                                 defaults=defaults, price_usd_per_gpu_hour=1.0)


def table_rows(defaults: PerfDefaults) -> list[tuple[str, float, float]]:
    """(id, predicted, reported) of every modelled row, for the validation table."""
    rows = [(row_id, published_step(row_id, defaults).model_tflops_per_gpu,
             reported_figure(r"([\d.]+) TFLOPS/GPU", ROWS[row_id]["reported"]))
            for row_id in ("L1", "L2")]
    rows.append(("L4", free_search(defaults).gpu_hours,
                 reported_figure(r"([\d.]+)M H100 GPU-hours", ROWS["L4"]["reported"]) * 1e6))
    return rows


@pytest.mark.parametrize("row_id", ["L1", "L2"])
def test_published_layout_tflops_within_tolerance(row_id: str, defaults: PerfDefaults) -> None:
    step = published_step(row_id, defaults)
    layout = step.setup.layout
    assert (layout.tp, layout.pp, layout.dp) == (8, 16, int(ROWS[row_id]["dp"]))
    assert step.setup.global_batch == 2048
    assert layout.virtual_stages > 1  # the interleaved schedule is what makes PP 16 pay
    reported = reported_figure(r"([\d.]+) TFLOPS/GPU", ROWS[row_id]["reported"])
    assert step.model_tflops_per_gpu == pytest.approx(reported, rel=row_tolerance(ROWS[row_id]))


def test_twice_the_gpus_at_the_same_batch_run_slower_per_gpu(defaults: PerfDefaults) -> None:
    """Table 4: 430 → 400 TFLOPS/GPU from 8,192 to 16,384 GPUs (half the micro-batches per
    pipeline, so a larger bubble share, and more nodes to synchronise)."""
    assert (published_step("L1", defaults).model_tflops_per_gpu
            > published_step("L2", defaults).model_tflops_per_gpu)


def test_interleaving_removes_most_of_the_plain_1f1b_bubble(defaults: PerfDefaults) -> None:
    """With plain 1F1B, PP 16 over 16 micro-batches idles (p−1)/m ≈ 94 % of the busy time."""
    interleaved = published_step("L2", defaults)
    plain = estimate_training_step(
        shape_of(MODEL), H100,
        TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, seq_len=8192, grad_accum=16,
                      layout=ParallelLayout(tp=8, pp=16, dp=128, zero=interleaved.setup.layout
                                            .zero, sp=True)),
        network=defaults.network_for(H100.name), assumptions=defaults.training)
    assert plain.pipeline_bubble_s > 4 * interleaved.pipeline_bubble_s
    assert interleaved.step_time_s < 0.7 * plain.step_time_s


def test_published_layout_without_checkpointing_is_rated_tight(defaults: PerfDefaults) -> None:
    """Why the free search recomputes: the memory engine (10 % fragmentation, the top of the
    published 5–10 % range) puts Meta's no-checkpointing layout within 5 % of the usable
    memory, where Meta reports it ran (§3.3.2, with tensors freed as early as possible)."""
    step = published_step("L2", defaults)
    assert estimate_training(MODEL, H100, step.setup).verdict is not Verdict.FITS


def test_free_search_keeps_the_batch_with_tensor_and_pipeline_parallelism(
        defaults: PerfDefaults) -> None:
    est = free_search(defaults)
    layout = est.setup.layout
    assert layout.gpus == 16384
    assert est.setup.global_batch == 2048  # 16M tokens, not the 134M of pure FSDP
    assert layout.tp * layout.pp >= 8
    assert layout.dp <= 2048


# Outside its stated tolerance, explained in docs/performance.md §4 (a strict xfail).
KNOWN_MISSES = {"L4": "the memory engine rates the no-checkpointing layouts tight, so the search "
                      "recomputes every layer (+33 % compute): ~+29 % GPU-hours; partial "
                      "(per-layer) recomputation is not modelled"}


@pytest.mark.xfail(strict=True, reason=KNOWN_MISSES["L4"])
def test_free_search_all_in_gpu_hours_near_the_model_card(defaults: PerfDefaults) -> None:
    reported = reported_figure(r"([\d.]+)M H100 GPU-hours", ROWS["L4"]["reported"]) * 1e6
    assert free_search(defaults).gpu_hours == pytest.approx(reported, rel=row_tolerance(ROWS["L4"]))
