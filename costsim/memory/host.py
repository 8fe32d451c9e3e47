"""Host (CPU) RAM a node needs for a job, beside the 1.5–2× total-VRAM rule of thumb.

Counted per node (at most ``gpus_per_node`` GPUs of the job):

* checkpoint loading: one copy of the base weights in their storage format (safetensors files
  are memory-mapped and shared through the page cache by the ranks of a node);
* one host process per GPU: ``process_bytes`` (2 GiB) for the Python interpreter, the framework,
  the CUDA host-side runtime and pinned staging buffers — an assumption (typical resident size of
  a PyTorch CUDA process), not a published constant;
* data loading: each process keeps ``prefetch_batches`` micro-batches of token ids (int64) and
  labels pinned — small next to the rest, kept for completeness.

CPU offload (ZeRO-Offload) is not a ``memory`` flag and no engine models its speed; for
comparison, :func:`offload_optimizer_host_bytes` gives DeepSpeed's host-RAM estimate for it
(the budget split reports it next to the 1.5–2× rule, docs/optimizer.md "Budget split").
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.gpu import GPUS_PER_NODE
from costsim.domain.workload import ParallelLayout, Task
from costsim.units import BYTES_PER_GIB

PROCESS_BYTES = 2 * BYTES_PER_GIB
PREFETCH_BATCHES = 2  # PyTorch DataLoader prefetch_factor default
TOKEN_ID_BYTES = 8 * 2  # int64 input ids + int64 labels
RULE_OF_THUMB_FACTORS = (1.5, 2.0)  # docs/memory.md "Host RAM": system RAM 1.5–2× total VRAM
# DeepSpeed estimate_zero3_model_states_mem_needs with the optimizer offloaded and zero.Init:
# host RAM = 16 B/param (fp32 master weights, Adam moments, fp32 gradients) × 1.5 ÷ nodes
# (deepspeed/runtime/zero/stage3.py; its additional_buffer_factor default 1.5).
OFFLOAD_OPTIMIZER_BYTES_PER_PARAM = 16
OFFLOAD_BUFFER_FACTOR = 1.5


@dataclass(frozen=True, slots=True, kw_only=True)
class HostRam:
    """Host RAM of one node for a job, and the rule-of-thumb range for comparison."""

    checkpoint_bytes: int
    processes_bytes: int
    data_loading_bytes: int
    gpus_on_node: int
    rule_of_thumb_bytes: tuple[int, int]

    @property
    def total_bytes(self) -> int:
        """Sum of the three parts."""
        return self.checkpoint_bytes + self.processes_bytes + self.data_loading_bytes


def checkpoint_weights_bytes(per_gpu_weights_bytes: int, layout: ParallelLayout,
                             task: Task) -> int:
    """The whole model's weights in their storage format, from one GPU's share of them.

    A node loads one full checkpoint copy (the first part of :func:`host_ram`), but the memory
    engine reports weights per GPU, after sharding: split over the TP × PP model-parallel GPUs,
    and in training under ZeRO-3 / FSDP full shard also over the DP replicas. Multiplying back
    undoes that sharding. Inference never shards weights over replicas (each holds its copy), so
    ZeRO-3 counts only for training and fine-tuning. With ``per_gpu_weights_bytes`` taken from
    the most-loaded pipeline stage (the engine's figure), the result is an upper bound: the other
    stages hold at most as much.
    """
    shards = layout.tp * layout.pp
    if layout.zero >= 3 and task is not Task.INFER:
        shards *= layout.dp
    return per_gpu_weights_bytes * shards


def host_ram(*, weights_storage_bytes: float, gpus: int, capacity_bytes: int,
             tokens_per_micro_batch: int, gpus_per_node: int = GPUS_PER_NODE) -> HostRam:
    """Host RAM per node: checkpoint + per-GPU processes + data loading."""
    on_node = max(1, min(gpus, gpus_per_node))
    low, high = RULE_OF_THUMB_FACTORS
    vram = capacity_bytes * on_node
    return HostRam(
        checkpoint_bytes=round(weights_storage_bytes),
        processes_bytes=on_node * PROCESS_BYTES,
        data_loading_bytes=on_node * PREFETCH_BATCHES * tokens_per_micro_batch * TOKEN_ID_BYTES,
        gpus_on_node=on_node,
        rule_of_thumb_bytes=(round(low * vram), round(high * vram)),
    )


def offload_optimizer_host_bytes(params_total: int, nodes: int) -> int:
    """Host RAM per node that ZeRO-3 needs with its optimizer offloaded to the CPU."""
    return round(params_total * OFFLOAD_OPTIMIZER_BYTES_PER_PARAM * OFFLOAD_BUFFER_FACTOR
                 / max(1, nodes))
