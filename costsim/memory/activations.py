"""Activation memory: what one transformer layer saves for backward, per token.

Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
Table 2 (fp16, dropout masks at 1 byte, s = sequence, b = micro-batch, h = hidden, a = heads,
t = tensor-parallel degree)::

    no parallelism        sbh·(34 + 5as/h)
    TP                    sbh·(10 + 24/t + 5as/(ht))
    TP + SP               sbh/t·(34 + 5as/h)
    TP + selective        sbh·(10 + 24/t)
    TP + SP + selective   34·sbh/t
    full recompute        2·sbh  (the layer input)

The 34 splits into parts replicated across the TP group (the "10": two LayerNorm inputs 2+2, QKV
input 2, fc1 input 2, two dropout masks 1+1) and parts sharded by TP (the "24": Q and K 4, V 2,
attention-output input 2, GeLU input 8, fc2 input 8); sequence parallelism shards the replicated
part too. The 5as/h term is the attention core (softmax output 2, dropout mask 1, dropout output
2). Generalized here, per token and per layer, with ``lp`` = bytes of an activation element:

* replicated = (4·lp + 2·drop)·h
* sharded    = lp·(q + 2·kv) + lp·q + mlp, with mlp = lp·I·k·(2, or 3 for a gated MLP: gate and
  up outputs plus the fc2 input), k = experts per token (MoE: each token visits k experts)
* scores     = a·s·(lp + drop·(lp + 1)) when attention materializes the s×s matrix; flash
  attention instead keeps one fp32 log-sum-exp per head and token (4·a bytes). Selective
  recomputation drops the scores term; with flash attention there is nothing left to drop, so
  the s² term is never subtracted twice.
* full recompute keeps only the layer input, lp·h (÷t with SP).

``drop`` is 1 for families that train with dropout (GPT-2, BERT) and 0 otherwise. For GQA the Q,
K and V widths are the real projection widths (q = heads·head_dim, kv = kv_heads·head_dim).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from costsim.domain.workload import Recompute

FloatArray = npt.NDArray[np.float64]

RECOMPUTE_CODE: dict[Recompute, int] = {Recompute.NONE: 0, Recompute.SELECTIVE: 1,
                                         Recompute.FULL: 2}
FLASH_LSE_BYTES = 4.0  # fp32 log-sum-exp per head and query token (FlashAttention-2)


def layer_bytes_per_token(*, lp: Any, hidden: Any, q_size: Any, kv_size: Any, head_dim: Any,
                          intermediate: Any, mlp_factor: Any, heads: Any, attn_len: Any,
                          drop: Any, tp: Any, sp: Any, recompute: Any, flash: Any) -> Any:
    """Saved-for-backward bytes of one layer per token (floats or numpy arrays alike).

    ``mlp_factor`` = experts per token × (3 if gated else 2); ``recompute`` is the code of
    :data:`RECOMPUTE_CODE`; ``sp`` and ``flash`` are 0/1; ``attn_len`` is the number of keys each
    query attends to in the materialized score matrix.
    """
    replicated = (4.0 * lp + 2.0 * drop) * hidden
    replicated_div = np.where(sp > 0, tp, 1.0)
    sharded = lp * 2.0 * q_size + lp * intermediate * mlp_factor
    scores_full = heads * attn_len * (lp + drop * (lp + 1.0))
    scores = np.where(flash > 0, FLASH_LSE_BYTES * heads, np.where(recompute >= 1, 0.0,
                                                                     scores_full))
    # K and V per rank: kv/t, but at least one head when TP exceeds the KV heads (replicated).
    kv_per_rank = lp * 2.0 * np.maximum(kv_size / tp, head_dim)
    stored = replicated / replicated_div + (sharded + scores) / tp + kv_per_rank
    layer_input = lp * hidden / replicated_div
    return np.where(recompute >= 2, layer_input, stored)


def layer_activation_bytes(*, seq_len: int, micro_batch: int, hidden_size: int, num_heads: int,
                           intermediate_size: int | None = None, q_size: int | None = None,
                           kv_size: int | None = None, gated_mlp: bool = False,
                           experts_per_token: int = 1, dropout: bool = True,
                           activation_bytes: float = 2.0, tp: int = 1, sp: bool = False,
                           recompute: Recompute = Recompute.NONE,
                           flash_attention: bool = False) -> float:
    """Activation bytes one transformer layer saves for backward (Korthikanti et al. Table 2
    when called with its defaults: fp16, dropout, I = 4h, MHA, no flash attention)."""
    inter = 4 * hidden_size if intermediate_size is None else intermediate_size
    q = hidden_size if q_size is None else q_size
    kv = hidden_size if kv_size is None else kv_size
    per_token = layer_bytes_per_token(
        lp=activation_bytes, hidden=hidden_size, q_size=q, kv_size=kv,
        head_dim=q / num_heads, intermediate=inter,
        mlp_factor=experts_per_token * (3 if gated_mlp else 2), heads=num_heads,
        attn_len=seq_len, drop=1.0 if dropout else 0.0, tp=float(tp), sp=1.0 if sp else 0.0,
        recompute=RECOMPUTE_CODE[recompute], flash=1.0 if flash_attention else 0.0)
    return float(per_token) * seq_len * micro_batch
