"""FLOPs per token of a transformer: model FLOPs (PaLM's MFU definition) and hardware FLOPs.

Model FLOPs per token = 6·N_active + 12·L·h_q·s (Chowdhery et al. 2022, PaLM, Appendix B): 2 FLOPs
per weight forward and 4 backward, plus the attention scores and the weighted sum of values
(2·2·s·h_q forward per layer, counted without a causal discount). Hardware FLOPs add what
recomputation repeats: full recompute re-runs every layer's forward (2·N_layers + 4·L·h_q·s),
selective recompute re-runs the attention core only (4·L·h_q·s; Korthikanti et al. 2022). The
LM head is never recomputed (Megatron-LM's FLOP formula counts logits three times).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costsim.domain.architecture import Architecture
from costsim.domain.workload import Recompute

FloatArray = NDArray[np.float64]

# Integer codes of Recompute inside vectorized formulas.
RECOMPUTE_CODES: dict[Recompute, int] = {Recompute.NONE: 0, Recompute.SELECTIVE: 1,
                                         Recompute.FULL: 2}


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelTerms:
    """The scalar shape terms of one architecture that the FLOP and byte formulas need."""

    name: str
    params_total: int
    params_active: int
    layer_params_active: int  # all transformer blocks, as one token sees them
    num_layers: int
    hidden_size: int
    attention_width: int  # heads × head_dim (h_q)
    kv_width: int  # KV heads × head_dim
    num_heads: int
    num_kv_heads: int
    vocab_size: int
    max_positions: int
    num_experts: int
    experts_per_token: int
    expert_params: int  # all experts of all layers (0 for dense models)

    @classmethod
    def of(cls, arch: Architecture) -> ModelTerms:
        """Collect the terms of ``arch`` from its exact parameter counts."""
        counts = arch.params()
        expert_per_layer = sum(layer.params for layer in arch.linear_layers() if layer.expert)
        return cls(
            name=arch.name,
            params_total=counts.total,
            params_active=counts.active,
            layer_params_active=counts.num_layers * counts.per_layer_active,
            num_layers=arch.num_layers,
            hidden_size=arch.hidden_size,
            attention_width=arch.q_size,
            kv_width=arch.kv_size,
            num_heads=arch.num_heads,
            num_kv_heads=arch.num_kv_heads,
            vocab_size=arch.vocab_size,
            max_positions=arch.max_position_embeddings,
            num_experts=arch.num_experts,
            experts_per_token=arch.experts_per_token,
            expert_params=arch.num_layers * expert_per_layer,
        )


def model_flops_per_token(terms: ModelTerms, seq_len: ArrayLike) -> FloatArray:
    """Training model FLOPs per token: 6·N_active + 12·L·h_q·s (works on arrays of ``seq_len``)."""
    s = np.asarray(seq_len, dtype=np.float64)
    return 6.0 * terms.params_active + 12.0 * terms.num_layers * terms.attention_width * s


def hardware_flops_per_token(terms: ModelTerms, seq_len: ArrayLike,
                             recompute_code: ArrayLike) -> FloatArray:
    """Training hardware FLOPs per token: model FLOPs plus the recomputed forward work."""
    s = np.asarray(seq_len, dtype=np.float64)
    code = np.asarray(recompute_code)
    attention_forward = 4.0 * terms.num_layers * terms.attention_width * s
    extra = np.where(code == 2, 2.0 * terms.layer_params_active + attention_forward,
                     np.where(code == 1, attention_forward, 0.0))
    return model_flops_per_token(terms, s) + extra


def forward_flops_per_token(terms: ModelTerms, context_tokens: ArrayLike) -> FloatArray:
    """Inference FLOPs per token that attends to ``context_tokens``: 2·N_active + 4·L·h_q·c."""
    c = np.asarray(context_tokens, dtype=np.float64)
    return 2.0 * terms.params_active + 4.0 * terms.num_layers * terms.attention_width * c
