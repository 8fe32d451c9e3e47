"""Model states: bytes per parameter of weights, fp32 master copy, gradients and optimizer.

Conventions (memory-estimators.md §3.3, §3.9, §3.11; docs/memory.md ``--bytes-preset``):

* fp32 / tf32 training: 4 B weights + 4 B gradients, no master copy (the weights are fp32).
* 16-bit and fp8 compute is mixed precision. Per trainable parameter (weights, master, grads):
  ``paper`` 2 + 4 + 2 (ZeRO paper, 16 B with Adam), ``framework`` 2 + 4 + 4 (HF / Megatron keep
  fp32 gradients, 18 B), ``deepspeed`` 2 + 4 + 6 (DeepSpeed ZeRO-2 code: fp16 and fp32 grads,
  20 B), ``pure`` 2 + 0 + 2 (no master copy, 12 B). fp8 training keeps 16-bit weights, as
  Transformer Engine does; the fp8 casts are transient.
* Optimizer state per trainable parameter: AdamW 8 (two fp32 moments); 8-bit AdamW 2 plus one
  fp32 absmax per 2048-element block per state (bitsandbytes blockwise quantization); SGD with
  momentum 4; plain SGD 0; Adafactor factored second moment (rows + cols per matrix, fp32) and no
  first moment (the HF/T5 default ``beta1=None``).
* QLoRA (quantized frozen base + LoRA): adapters and their gradients in the compute dtype, the
  optimizer's own states for the adapters, no master copy (docs/memory.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.precision import Dtype
from costsim.domain.workload import BytesPreset, OptimizerKind
from costsim.errors import InputError

FP32_BYTES = 4.0
BNB_8BIT_BLOCK_SIZE = 2048  # bitsandbytes blockwise 8-bit optimizer block

OPTIMIZER_BYTES_PER_PARAM: dict[OptimizerKind, float] = {
    OptimizerKind.ADAMW: 8.0,
    OptimizerKind.ADAMW_8BIT: 2.0 + 2.0 * FP32_BYTES / BNB_8BIT_BLOCK_SIZE,
    OptimizerKind.SGD_MOMENTUM: 4.0,
    OptimizerKind.SGD: 0.0,
    OptimizerKind.ADAFACTOR: 0.0,  # factored: counted from the shapes, not per parameter
}

# (weights, master, gradients) bytes per trainable parameter under mixed precision.
MIXED_PRECISION_BYTES: dict[BytesPreset, tuple[float, float, float]] = {
    BytesPreset.PAPER: (2.0, 4.0, 2.0),
    BytesPreset.FRAMEWORK: (2.0, 4.0, 4.0),
    BytesPreset.DEEPSPEED: (2.0, 4.0, 6.0),
    BytesPreset.PURE: (2.0, 0.0, 2.0),
}

COMPUTE_DTYPES = (Dtype.FP32, Dtype.TF32, Dtype.BF16, Dtype.FP16, Dtype.FP8)


def compute_bytes(precision: Dtype) -> float:
    """Bytes of a weight or activation element held in the compute dtype.

    fp8 compute keeps weights and most saved activations in 16 bits (Transformer Engine casts
    GEMM inputs to fp8 on the fly), so it is counted as 2 bytes.
    """
    if precision not in COMPUTE_DTYPES:
        raise InputError("", "--precision",
                         f"must be one of fp32, tf32, bf16, fp16, fp8 (got {precision.value})")
    return 2.0 if precision is Dtype.FP8 else precision.bytes_per_element


def is_mixed(precision: Dtype) -> bool:
    """True when training in ``precision`` keeps an fp32 master copy (unless preset ``pure``)."""
    return precision in (Dtype.BF16, Dtype.FP16, Dtype.FP8)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainableBytes:
    """Bytes per trainable parameter of each model-state component."""

    weights: float
    master: float
    gradients: float
    optimizer: float


def trainable_bytes_per_param(precision: Dtype, preset: BytesPreset, optimizer: OptimizerKind,
                              *, qlora: bool = False) -> TrainableBytes:
    """Weights, master, gradient and optimizer bytes for one trainable parameter."""
    opt = OPTIMIZER_BYTES_PER_PARAM[optimizer]
    lp = compute_bytes(precision)
    if qlora:
        return TrainableBytes(weights=lp, master=0.0, gradients=lp, optimizer=opt)
    if not is_mixed(precision):
        return TrainableBytes(weights=FP32_BYTES, master=0.0, gradients=FP32_BYTES, optimizer=opt)
    w, m, g = MIXED_PRECISION_BYTES[preset]
    return TrainableBytes(weights=w, master=m, gradients=g, optimizer=opt)


def optimizer_state_bytes(params: float, optimizer: OptimizerKind) -> float:
    """Optimizer-state bytes of ``params`` trainable parameters (Adafactor needs the shapes:
    use the architecture path)."""
    if optimizer is OptimizerKind.ADAFACTOR:
        raise ValueError("Adafactor's state depends on the matrix shapes, not only on a count")
    return params * OPTIMIZER_BYTES_PER_PARAM[optimizer]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelStateBytes:
    """Per-GPU model states of a data-parallel replica group (no activations)."""

    weights_bytes: float
    master_weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float

    @property
    def total_bytes(self) -> float:
        """Sum of the four components."""
        return (self.weights_bytes + self.master_weights_bytes + self.gradients_bytes
                + self.optimizer_bytes)


def zero_divisors(zero: int, dp: int) -> tuple[int, int, int, int]:
    """Divisors of (weights, master, gradients, optimizer) under ZeRO stage ``zero``.

    Stage 1 shards optimizer states (incl. the fp32 master), 2 adds gradients, 3 adds weights
    (Rajbhandari et al. 2020; FSDP FULL_SHARD = 3).
    """
    return (dp if zero >= 3 else 1, dp if zero >= 1 else 1, dp if zero >= 2 else 1,
            dp if zero >= 1 else 1)


def model_state_bytes(params: float, *, dp: int, zero: int, precision: Dtype = Dtype.BF16,
                      preset: BytesPreset = BytesPreset.FRAMEWORK,
                      optimizer: OptimizerKind = OptimizerKind.ADAMW) -> ModelStateBytes:
    """Per-GPU model-state bytes of ``params`` trainable parameters under ZeRO (ZeRO paper §5)."""
    per = trainable_bytes_per_param(precision, preset, optimizer)
    dw, dm, dg, do = zero_divisors(zero, dp)
    return ModelStateBytes(
        weights_bytes=params * per.weights / dw,
        master_weights_bytes=params * per.master / dm,
        gradients_bytes=params * per.gradients / dg,
        optimizer_bytes=params * per.optimizer / do,
    )
