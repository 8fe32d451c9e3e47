"""Default training and inference setups for a model on a GPU (the engines' shared defaults).

The CLI flags and the simulator's scenario phases both start from these, so a phase with no
``seq_len`` runs exactly what ``costsim estimate train`` without ``--seq-len`` runs.
"""

from __future__ import annotations

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.precision import Dtype
from costsim.domain.workload import (
    LoraConfig,
    ParallelLayout,
    Quant,
    Task,
    TrainingFramework,
    TrainingSetup,
)
from costsim.memory.estimate import check_precision
from costsim.memory.lora import default_targets

# The model's maximum positions, capped here by default (--seq-len, docs/performance.md).
DEFAULT_SEQ_LEN_CAP = 4096


def default_seq_len(arch: Architecture) -> int:
    """The model's maximum positions, capped at 4096."""
    return min(arch.max_position_embeddings, DEFAULT_SEQ_LEN_CAP)


def default_flash_attention(precision: Dtype) -> bool:
    """Flash attention is on where its kernels exist: FlashAttention supports fp16 and bf16
    (Dao et al.), so fp32 / tf32 runs use the eager s×s attention."""
    return precision in (Dtype.BF16, Dtype.FP16, Dtype.FP8)


def training_setup(arch: Architecture, gpu: GpuSpec, *, task: Task, precision: Dtype | None,
                   seq_len: int | None, lora_rank: int | None, quant: Quant, source: str,
                   framework: TrainingFramework = TrainingFramework.MEGATRON_LM,
                   framework_year: int | None = None) -> TrainingSetup:
    """A one-GPU training setup with the defaults of ``estimate train`` (the layout search
    replaces its layout and batch).

    Raises:
        InputError: a precision the GPU lacks.
    """
    dtype = gpu.default_precision if precision is None else precision
    check_precision(gpu, dtype, source=source)
    lora = None if lora_rank is None else LoraConfig(rank=lora_rank, targets=default_targets(arch))
    return TrainingSetup(task=task, precision=dtype, layout=ParallelLayout(),
                         seq_len=seq_len or default_seq_len(arch),
                         flash_attention=default_flash_attention(dtype), quant=quant, lora=lora,
                         framework=framework, framework_year=framework_year)
