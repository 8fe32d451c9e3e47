"""How a model is run: task, numeric formats, optimizer, parallel layout, batch and sequence.

These are the settings of ``costsim memory`` / ``costsim estimate`` (docs/memory.md), shared by the
memory engine, the performance model and the simulator. Each value object checks itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from costsim.domain.precision import Dtype


class Task(StrEnum):
    """What the GPUs do with the model."""

    TRAIN = "train"  # full training: every parameter is trainable
    FINETUNE = "finetune"  # LoRA when a rank is given (QLoRA with nf4 weights), else full
    INFER = "infer"


class Recompute(StrEnum):
    """Activation recomputation (checkpointing) level, as defined by Korthikanti et al. 2022."""

    NONE = "none"
    SELECTIVE = "selective"  # recompute the attention core (softmax, dropout, scores)
    FULL = "full"  # keep only each layer's input


class OptimizerKind(StrEnum):
    """Optimizers whose state sizes costsim knows."""

    ADAMW = "adamw"
    ADAMW_8BIT = "adamw-8bit"
    SGD_MOMENTUM = "sgd-momentum"
    SGD = "sgd"
    ADAFACTOR = "adafactor"


class BytesPreset(StrEnum):
    """Conventions for mixed-precision Adam model-state bytes per parameter (docs/memory.md)."""

    PAPER = "paper"  # 16: ZeRO paper
    FRAMEWORK = "framework"  # 18: HF / Megatron (+ fp32 grads)
    DEEPSPEED = "deepspeed"  # 20: DeepSpeed ZeRO-2 code
    PURE = "pure"  # 12: 16-bit weights and grads, fp32 Adam states, no master copy


class Quant(StrEnum):
    """Weight storage format (quantization constants are counted with the weights)."""

    NONE = "none"
    INT8 = "int8"
    INT4 = "int4"
    NF4 = "nf4"
    FP8 = "fp8"


class ServingEngine(StrEnum):
    """Inference engines with their own efficiency factors."""

    VLLM = "vllm"
    # vLLM's V0 engine (releases up to 0.7; V1 is the default from 0.8.0): its per-sequence host
    # work between steps is on the critical path (issue 18, sixth serving round)
    VLLM_V0 = "vllm-v0"
    TENSORRT_LLM = "tensorrt-llm"
    SGLANG = "sglang"
    LLAMA_CPP = "llama.cpp"
    TORCH_COMPILE = "torch-compile"
    HF_TRANSFORMERS = "hf-transformers"
    TGI = "tgi"


class TrainingFramework(StrEnum):
    """The training code a run uses: it sets how close to the Megatron-class calibration the
    step runs (``costsim/data/perf_framework_benchmarks.csv``, docs/performance.md)."""

    MEGATRON_LM = "megatron-lm"  # Megatron-LM / Megatron-Core / NeMo: the calibration itself
    PYTORCH_FSDP = "pytorch-fsdp"  # PyTorch FSDP / torchtitan / fms-fsdp (native training loops)
    DEEPSPEED = "deepspeed"  # DeepSpeed with its Megatron-DeepSpeed model code
    HF_TRAINER = "hf-trainer"  # Hugging Face Trainer / accelerate (FSDP or DeepSpeed backend)
    # torch.compile'd single-node PyTorch loops tuned for speed (nanoGPT, modded-nanogpt,
    # nanochat): fused elementwise kernels, no pipeline or tensor parallelism
    TORCH_COMPILE = "torch-compile"


ALL_LINEAR = "all-linear"


@dataclass(frozen=True, slots=True, kw_only=True)
class ParallelLayout:
    """Tensor, pipeline and data parallel degrees, the ZeRO stage (3 = FSDP full shard),
    sequence parallelism over the tensor-parallel group, and the virtual pipeline stages per
    GPU (1 = plain 1F1B; v > 1 = Megatron's interleaved 1F1B with v model chunks per GPU,
    Narayanan et al. 2021 §2.2.2)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero: int = 0
    sp: bool = False
    virtual_stages: int = 1

    def __post_init__(self) -> None:
        for key in ("tp", "pp", "dp", "virtual_stages"):
            value = getattr(self, key)
            if value < 1:
                raise ValueError(f"{key} must be >= 1 (got {value})")
        if self.zero not in (0, 1, 2, 3):
            raise ValueError(f"zero must be 0, 1, 2 or 3 (got {self.zero})")
        if self.virtual_stages > 1 and self.pp == 1:
            raise ValueError(f"virtual pipeline stages need pp > 1 (got virtual_stages "
                             f"{self.virtual_stages} with pp 1)")

    @property
    def gpus(self) -> int:
        """Total GPUs: dp · tp · pp."""
        return self.dp * self.tp * self.pp


@dataclass(frozen=True, slots=True, kw_only=True)
class LoraConfig:
    """Low-rank adapters: rank and the targeted module names (HF leaf names or all-linear)."""

    rank: int
    targets: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.rank < 1:
            raise ValueError(f"LoRA rank must be >= 1 (got {self.rank})")
        if not self.targets:
            raise ValueError("LoRA needs at least one target module")


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingSetup:
    """One training or fine-tuning configuration (docs/memory.md).

    ``precision`` is the compute dtype; 16/8-bit means mixed precision with fp32 master weights
    unless ``bytes_preset`` is ``pure``. ``quant`` is the storage of frozen base weights (QLoRA).
    """

    task: Task
    precision: Dtype
    layout: ParallelLayout
    micro_batch: int = 1
    seq_len: int = 2048
    grad_accum: int = 1
    recompute: Recompute = Recompute.NONE
    flash_attention: bool = True
    optimizer: OptimizerKind = OptimizerKind.ADAMW
    bytes_preset: BytesPreset = BytesPreset.FRAMEWORK
    quant: Quant = Quant.NONE
    lora: LoraConfig | None = None
    framework: TrainingFramework = TrainingFramework.MEGATRON_LM
    # The year of the training code's release, when known: it sets the stack's era (None:
    # inferred from GPU generation and precision; docs/performance.md "Stack").
    framework_year: int | None = None

    def __post_init__(self) -> None:
        if self.task is Task.INFER:
            raise ValueError("a TrainingSetup cannot have task 'infer'")
        for key in ("micro_batch", "seq_len", "grad_accum"):
            value = getattr(self, key)
            if value < 1:
                raise ValueError(f"{key} must be >= 1 (got {value})")
        if self.framework_year is not None and not 2015 <= self.framework_year <= 2100:
            raise ValueError(f"framework_year must be in [2015, 2100] (got "
                             f"{self.framework_year})")
        if self.lora is not None and self.task is not Task.FINETUNE:
            raise ValueError("LoRA adapters need task 'finetune'")
        if self.layout.virtual_stages > 1 and self.grad_accum < self.layout.pp:
            # The interleaved schedule keeps every stage busy only with at least pp
            # micro-batches per step (Megatron-LM asserts it; Llama 3 relaxed divisibility).
            raise ValueError(f"the interleaved pipeline schedule needs grad_accum >= pp "
                             f"(got grad_accum {self.grad_accum}, pp {self.layout.pp})")

    @property
    def global_batch(self) -> int:
        """Sequences per optimizer step: micro_batch · grad_accum · dp."""
        return self.micro_batch * self.grad_accum * self.layout.dp


@dataclass(frozen=True, slots=True, kw_only=True)
class InferenceSetup:
    """One inference configuration: ``batch`` concurrent sequences of ``context_tokens`` each."""

    precision: Dtype
    layout: ParallelLayout
    batch: int = 1
    context_tokens: int = 768
    kv_dtype: Dtype | None = None
    quant: Quant = Quant.NONE
    flash_attention: bool = True

    def __post_init__(self) -> None:
        for key in ("batch", "context_tokens"):
            value = getattr(self, key)
            if value < 1:
                raise ValueError(f"{key} must be >= 1 (got {value})")

    @property
    def kv_cache_dtype(self) -> Dtype:
        """The KV-cache dtype: as given, else the compute precision."""
        return self.kv_dtype if self.kv_dtype is not None else self.precision
