"""FLOPs per token of a transformer: model FLOPs (PaLM's MFU definition) and hardware FLOPs.

Model FLOPs per token = 6·N_active + 12·L·h_q·s (Chowdhery et al. 2022, PaLM, Appendix B): 2 FLOPs
per weight forward and 4 backward, plus the attention scores and the weighted sum of values
(2·2·s·h_q forward per layer, counted without a causal discount). Hardware FLOPs add what
recomputation repeats: full recompute re-runs every layer's forward (2·N_layers + 4·L·h_q·s),
selective recompute re-runs the attention core only (4·L·h_q·s; Korthikanti et al. 2022). The
LM head is never recomputed (Megatron-LM's FLOP formula counts logits three times).

LoRA / QLoRA count what is computed (Hu et al. 2021): the frozen base weights still run their
forward (2·N) and pass activation gradients back (2·N) but compute no weight gradients, so they
cost 4·N per token, not 6·N; the adapters train fully (6·N_adapter); the attention core has no
weights and keeps its 12·L·h_q·s. Model FLOPs of LoRA are therefore between 4·N and 6·N per
token, and hardware FLOPs add recomputation on the same basis, so MFU ≤ HFU always. QLoRA's
dequantization of the frozen 4-bit weights is memory traffic, not matmul FLOPs: the step model
times it separately (perf/training.py) and it lowers both MFU and HFU.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costsim.domain.performance import TrainingAssumptions
from costsim.domain.workload import Recompute
from costsim.memory.shape import ModelShape

FloatArray = NDArray[np.float64]

# Integer codes of Recompute inside vectorized formulas.
RECOMPUTE_CODES: dict[Recompute, int] = {Recompute.NONE: 0, Recompute.SELECTIVE: 1,
                                         Recompute.FULL: 2}


# QLoRA: FLOPs to dequantize one NF4 weight (bitsandbytes kDequantizeBlockwise: the 16-entry
# lookup, then a multiply by the block's absmax, itself dequantized from 8 bits once per block).
DEQUANT_FLOPS_PER_WEIGHT = 2.0

# FLOPs per weight and token: forward 2, activation gradient 2, weight gradient 2.
TRAINED_WEIGHT_FLOPS = 6.0
FROZEN_WEIGHT_FLOPS = 4.0


def model_flops_per_token(shape: ModelShape, seq_len: ArrayLike,
                          frozen_base: ArrayLike = False,
                          adapter_params: ArrayLike = 0.0) -> FloatArray:
    """Training model FLOPs per token (works on arrays): 6·N_active + 12·L·h_q·s, or with a
    frozen base (LoRA / QLoRA) 4·N_active + 6·N_adapter + 12·L·h_q·s."""
    s = np.asarray(seq_len, dtype=np.float64)
    per_weight = np.where(np.asarray(frozen_base), FROZEN_WEIGHT_FLOPS, TRAINED_WEIGHT_FLOPS)
    adapters = np.asarray(adapter_params, dtype=np.float64)
    return (per_weight * shape.params_active + TRAINED_WEIGHT_FLOPS * adapters
            + 12.0 * shape.num_layers * shape.q_size * s)


def hardware_flops_per_token(shape: ModelShape, seq_len: ArrayLike,
                             recompute_code: ArrayLike, frozen_base: ArrayLike = False,
                             adapter_params: ArrayLike = 0.0) -> FloatArray:
    """Training hardware FLOPs per token: model FLOPs plus the recomputed forward work (the
    blocks' weights and their adapters, and the attention core)."""
    s = np.asarray(seq_len, dtype=np.float64)
    code = np.asarray(recompute_code)
    adapters = np.asarray(adapter_params, dtype=np.float64)
    attention_forward = 4.0 * shape.num_layers * shape.q_size * s
    extra = np.where(code == 2,
                     2.0 * (shape.all_layers_params_active + adapters) + attention_forward,
                     np.where(code == 1, attention_forward, 0.0))
    return model_flops_per_token(shape, s, frozen_base, adapters) + extra


def forward_flops_per_token(shape: ModelShape, context_tokens: ArrayLike) -> FloatArray:
    """Inference FLOPs per token that attends to ``context_tokens``: 2·N_active + 4·L·h_q·c."""
    c = np.asarray(context_tokens, dtype=np.float64)
    return 2.0 * shape.params_active + 4.0 * shape.num_layers * shape.q_size * c


def dequantization(quantized_params_per_gpu: ArrayLike, recompute_code: ArrayLike,
                   tokens_per_micro_batch: ArrayLike, hbm_bytes_per_s: ArrayLike,
                   assumptions: TrainingAssumptions) -> tuple[FloatArray, FloatArray]:
    """QLoRA's dequantization per micro-batch: (seconds of HBM traffic, hardware FLOPs per
    token). Every frozen 4-bit weight a GPU holds is dequantized to bf16 before each matmul that
    uses it: once forward, once backward, once more in a full recompute (Dettmers et al. 2023)."""
    passes = 2.0 + (np.asarray(recompute_code) == 2)
    weights = passes * np.asarray(quantized_params_per_gpu, dtype=np.float64)
    seconds = (weights * assumptions.dequant_bytes_per_weight
               / (np.asarray(hbm_bytes_per_s) * assumptions.hbm_efficiency))
    flops_per_token = (DEQUANT_FLOPS_PER_WEIGHT * weights
                       / np.asarray(tokens_per_micro_batch, dtype=np.float64))
    return seconds, flops_per_token
