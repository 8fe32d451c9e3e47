"""FLOPs per token of a transformer: model FLOPs (PaLM's MFU definition) and hardware FLOPs.

Model FLOPs per token = 6·N_active + 12·L·h_q·s (Chowdhery et al. 2022, PaLM, Appendix B): 2 FLOPs
per weight forward and 4 backward, plus the attention scores and the weighted sum of values
(2·2·s·h_q forward per layer, counted without a causal discount). Hardware FLOPs add what
recomputation repeats: full recompute re-runs every layer's forward (2·N_layers + 4·L·h_q·s),
selective recompute re-runs the attention core only (4·L·h_q·s; Korthikanti et al. 2022). The
LM head is never recomputed (Megatron-LM's FLOP formula counts logits three times).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costsim.domain.workload import Recompute
from costsim.memory.shape import ModelShape

FloatArray = NDArray[np.float64]

# Integer codes of Recompute inside vectorized formulas.
RECOMPUTE_CODES: dict[Recompute, int] = {Recompute.NONE: 0, Recompute.SELECTIVE: 1,
                                         Recompute.FULL: 2}


def model_flops_per_token(shape: ModelShape, seq_len: ArrayLike) -> FloatArray:
    """Training model FLOPs per token: 6·N_active + 12·L·h_q·s (works on arrays of ``seq_len``)."""
    s = np.asarray(seq_len, dtype=np.float64)
    return 6.0 * shape.params_active + 12.0 * shape.num_layers * shape.q_size * s


def hardware_flops_per_token(shape: ModelShape, seq_len: ArrayLike,
                             recompute_code: ArrayLike) -> FloatArray:
    """Training hardware FLOPs per token: model FLOPs plus the recomputed forward work."""
    s = np.asarray(seq_len, dtype=np.float64)
    code = np.asarray(recompute_code)
    attention_forward = 4.0 * shape.num_layers * shape.q_size * s
    extra = np.where(code == 2, 2.0 * shape.all_layers_params_active + attention_forward,
                     np.where(code == 1, attention_forward, 0.0))
    return model_flops_per_token(shape, s) + extra


def forward_flops_per_token(shape: ModelShape, context_tokens: ArrayLike) -> FloatArray:
    """Inference FLOPs per token that attends to ``context_tokens``: 2·N_active + 4·L·h_q·c."""
    c = np.asarray(context_tokens, dtype=np.float64)
    return 2.0 * shape.params_active + 4.0 * shape.num_layers * shape.q_size * c
