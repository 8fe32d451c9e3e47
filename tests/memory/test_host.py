"""Host RAM per node beside the 1.5–2× VRAM rule of thumb."""

from __future__ import annotations

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Task, TrainingSetup
from costsim.memory.estimate import estimate_training
from costsim.memory.host import (
    PROCESS_BYTES,
    checkpoint_weights_bytes,
    host_ram,
    offload_optimizer_host_bytes,
)

GIB = 2**30


def test_rule_of_thumb_range_is_per_node() -> None:
    # DESIGN.md §2: 4×A100-40GB → 240–320 GB of RAM (here in the catalog's bytes).
    ram = host_ram(weights_storage_bytes=14e9, gpus=4, capacity_bytes=40 * GIB,
                   tokens_per_micro_batch=4096)
    assert ram.rule_of_thumb_bytes == (240 * GIB, 320 * GIB)
    assert ram.gpus_on_node == 4
    assert ram.total_bytes == 14e9 + 4 * PROCESS_BYTES + ram.data_loading_bytes


def test_a_big_job_counts_one_node() -> None:
    ram = host_ram(weights_storage_bytes=1e9, gpus=512, capacity_bytes=80 * GIB,
                   tokens_per_micro_batch=1)
    assert ram.gpus_on_node == 8
    assert ram.processes_bytes == 8 * PROCESS_BYTES


@pytest.mark.parametrize(("layout", "task", "shards"), [
    (ParallelLayout(tp=2, pp=4, dp=8, zero=3), Task.TRAIN, 64),
    (ParallelLayout(tp=2, pp=4, dp=8, zero=3), Task.FINETUNE, 64),
    (ParallelLayout(tp=2, pp=4, dp=8, zero=2), Task.TRAIN, 8),  # ZeRO-2 keeps whole weights
    (ParallelLayout(tp=2, pp=4, dp=8, zero=3), Task.INFER, 8),  # replicas hold their own copy
    (ParallelLayout(dp=16), Task.TRAIN, 1),
])
def test_checkpoint_undoes_the_weight_sharding(layout: ParallelLayout, task: Task,
                                               shards: int) -> None:
    assert checkpoint_weights_bytes(1_000_000_007, layout, task) == 1_000_000_007 * shards


def test_checkpoint_of_a_zero3_shard_is_the_whole_model() -> None:
    """The memory engine's ZeRO-3 share × DP gives back the unsharded weights (to the byte,
    up to the engine's rounding of the share)."""
    llama = load_preset("llama-2-7b").architecture
    a100 = get_gpu("A100-80GB")

    def weights(layout: ParallelLayout) -> int:
        setup = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=layout)
        return estimate_training(llama, a100, setup).weights_bytes

    whole = weights(ParallelLayout())
    sharded = ParallelLayout(dp=8, zero=3)
    assert abs(checkpoint_weights_bytes(weights(sharded), sharded, Task.TRAIN) - whole) < 8
    assert whole == pytest.approx(2 * 6.74e9, rel=0.01)  # bf16 × 6.74 B parameters


def test_optimizer_offload_needs_deepspeeds_24_bytes_per_param_split_over_nodes() -> None:
    # 16 B/param × the 1.5 buffer factor: an 8B model offloaded on one node needs 192 GB,
    # the seed's start-up box (4 × RTX 4090, 96 GB of VRAM, 192 GB of RAM) is sized for it
    assert offload_optimizer_host_bytes(8_000_000_000, 1) == 192_000_000_000
    assert offload_optimizer_host_bytes(8_000_000_000, 4) == 48_000_000_000
