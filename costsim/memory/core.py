"""The memory equations over numpy arrays: one row per configuration.

Both the scalar API (:mod:`costsim.memory.estimate`) and the grid (:mod:`costsim.memory.vectorized`)
call these two functions, so the two paths cannot disagree. Inputs are a mapping of column name
to float64 array (see :data:`TRAIN_COLUMNS` and :data:`INFER_COLUMNS`); every row is independent.

Per GPU means the most-loaded GPU: with pipeline parallelism both the first stage (embedding,
``min(pp, grad_accum)`` micro-batches in flight under 1F1B, more under the interleaved
schedule) and the last stage (final norm, LM head or its tied copy, logits and loss) are
evaluated and the larger total is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from costsim.memory.activations import layer_bytes_per_token
from costsim.memory.runtime import HeadroomPolicy

FloatArray = npt.NDArray[np.float64]
Columns = Mapping[str, FloatArray]

SHAPE_COLUMNS = (
    "num_layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim", "q_size", "kv_size",
    "intermediate_size", "vocab_size", "experts_per_token", "gated", "dropout", "decoder",
    "sliding_window", "embedding_params", "layer_params", "layer_linear_params",
    "largest_linear_params", "final_norm_params", "lm_head_params", "pooler_params", "tied",
    "adafactor_layer_elements", "adafactor_embedding_elements", "adafactor_head_elements",
)
TRAIN_COLUMNS = (*SHAPE_COLUMNS,
                 "tp", "pp", "dp", "zero", "sp", "vpp", "micro_batch", "seq_len",
                 "grad_accum", "recompute", "flash", "act_bytes", "full", "lora_layer_params",
                 "lora_pooler_params", "lora_layer_ranks", "lora_adafactor_layer_elements",
                 "base_linear_bytes", "base_other_bytes", "quant_constant_bytes", "quantized",
                 "w_bytes", "master_bytes", "grad_bytes", "opt_bytes", "factored",
                 "capacity_bytes")
INFER_COLUMNS = (*SHAPE_COLUMNS,
                 "tp", "pp", "batch", "context", "flash", "act_bytes", "kv_bytes",
                 "base_linear_bytes", "base_other_bytes", "quant_constant_bytes", "quantized",
                 "capacity_bytes")
COMPONENTS = ("weights", "master_weights", "gradients", "optimizer", "activations", "kv_cache",
              "runtime_overhead")


@dataclass(frozen=True, slots=True, kw_only=True)
class ComponentArrays:
    """Per-GPU bytes of every component, whole bytes, one entry per configuration."""

    weights: FloatArray
    master_weights: FloatArray
    gradients: FloatArray
    optimizer: FloatArray
    activations: FloatArray
    kv_cache: FloatArray
    runtime_overhead: FloatArray
    total: FloatArray
    usable: FloatArray
    verdict_code: npt.NDArray[np.int8]  # 0 fits, 1 tight, 2 oom
    kv_bytes_per_token: FloatArray  # per sequence token, on the reported GPU
    cuda_context: FloatArray
    communication: FloatArray
    zero3_gathered: FloatArray
    fragmentation: FloatArray
    last_stage: npt.NDArray[np.bool_]  # True when the last pipeline stage is the most loaded

    @property
    def headroom(self) -> FloatArray:
        """usable − total (negative when it does not fit)."""
        return self.usable - self.total


def _verdicts(total: FloatArray, usable: FloatArray, margin: float) -> npt.NDArray[np.int8]:
    code = np.where(total > usable, 2, np.where(total > usable * (1.0 - margin), 1, 0))
    return code.astype(np.int8)


def _base_params(c: Columns, layers: FloatArray, with_head: FloatArray,
                 last: bool) -> FloatArray:
    """Base-model parameters on a stage holding ``layers`` blocks."""
    if last:
        tied_copy = np.where((c["lm_head_params"] == 0) & (c["decoder"] > 0) & (c["tied"] > 0),
                             c["vocab_size"] * c["hidden_size"], 0.0)
        head = c["final_norm_params"] + c["pooler_params"] + c["lm_head_params"] + tied_copy
        return layers * c["layer_params"] + head
    head = c["final_norm_params"] + c["pooler_params"] + c["lm_head_params"]
    return c["embedding_params"] + layers * c["layer_params"] + with_head * head


def _base_weight_bytes(c: Columns, params: FloatArray, layers: FloatArray) -> FloatArray:
    """Bytes of frozen base weights: linear layers in the storage format, the rest in the
    compute dtype (embeddings, norms and the LM head stay unquantized, as bitsandbytes and
    GPTQ/AWQ loaders leave them)."""
    linear = layers * c["layer_linear_params"]
    return (linear * c["base_linear_bytes"] + (params - linear) * c["base_other_bytes"]
            + layers * c["quant_constant_bytes"])


def stages_in_flight(pp: FloatArray, vpp: FloatArray,
                     grad_accum: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Micro-batches whose activations the first and the last pipeline stage hold at the peak,
    in units of one micro-batch through all of the stage's layers.

    Plain 1F1B (``vpp`` = 1): the first stage runs min(pp, m) forwards before its first
    backward, the last stage one. Interleaved 1F1B with v chunks per GPU (Megatron-LM
    ``schedules.py``, ``forward_backward_pipelining_with_interleaving``): rank r warms up with
    2·(pp − 1 − r) + (v − 1)·pp chunk forwards, plus the one in progress, never more than the
    m·v chunks of a step; a chunk holds 1/v of the stage's layers. For the first stage that is
    pp·(1 + (pp − 1)/(pp·v)) micro-batches, Megatron's ``interleaved_schedule_memory_penalty``
    (``theoretical_memory_usage.py``; Korthikanti et al. 2022 §4.2.3); the last stage holds
    ((v − 1)·pp + 1)/v.
    """
    interleaved = vpp > 1
    chunks = grad_accum * vpp
    first = np.where(interleaved, np.minimum(chunks, 2.0 * (pp - 1.0) + (vpp - 1.0) * pp + 1.0)
                     / vpp, np.minimum(pp, grad_accum))
    last = np.where(interleaved, np.minimum(chunks, (vpp - 1.0) * pp + 1.0) / vpp, 1.0)
    return first, last


def training_components(c: Columns, policy: HeadroomPolicy) -> ComponentArrays:
    """Per-GPU training / fine-tuning memory of every row of ``c``."""
    tp, pp, dp, zero = c["tp"], c["pp"], c["dp"], c["zero"]
    lp, full = c["act_bytes"], c["full"]
    layers_first = np.ceil(c["num_layers"] / pp)
    layers_last = np.floor(c["num_layers"] / pp)
    single = (pp == 1).astype(np.float64)
    tokens = c["micro_batch"] * c["seq_len"]
    sp_div = np.where(c["sp"] > 0, tp, 1.0)
    mlp_factor = c["experts_per_token"] * np.where(c["gated"] > 0, 3.0, 2.0)
    common = {
        "lp": lp, "hidden": c["hidden_size"], "q_size": c["q_size"], "kv_size": c["kv_size"],
        "head_dim": c["head_dim"],
        "intermediate": c["intermediate_size"], "mlp_factor": mlp_factor,
        "heads": c["num_heads"], "attn_len": c["seq_len"], "drop": c["dropout"], "tp": tp,
        "sp": c["sp"], "flash": c["flash"],
    }
    per_token = layer_bytes_per_token(recompute=c["recompute"], **common)
    lora_tokens = (1.0 - full) * lp * c["lora_layer_ranks"] / tp
    layer_act = tokens * (per_token + lora_tokens)
    # Full recomputation re-materializes one layer's activations during its backward.
    working = np.where(c["recompute"] >= 2,
                       tokens * (layer_bytes_per_token(recompute=np.zeros_like(tp), **common)
                                 + lora_tokens), 0.0)
    # The embedding output is the first layer's input (already counted); dropout families add
    # the embedding dropout mask and BERT's embedding LayerNorm input.
    embed_extra = tokens * c["dropout"] * (1.0 + lp) * c["hidden_size"] / sp_div
    # Logits in the compute dtype plus the fp32 copy the cross-entropy works on (Megatron's
    # 4·s·b·V), vocab-parallel over TP; encoders (BERT) carry a small task head instead.
    logits = c["decoder"] * tokens * c["vocab_size"] * (lp + np.where(lp < 4, 4.0, 0.0)) / tp
    final_extra = tokens * lp * c["hidden_size"] / sp_div + logits
    inflight_first, inflight_last = stages_in_flight(pp, c["vpp"], c["grad_accum"])

    results = []
    for last in (False, True):
        layers = layers_last if last else layers_first
        params = _base_params(c, layers, single, last)
        adapters = layers * c["lora_layer_params"] + (
            c["lora_pooler_params"] if last else single * c["lora_pooler_params"])
        trainable = (full * params + (1.0 - full) * adapters) / tp
        base_frozen = _base_weight_bytes(c, params, layers)
        weights = (full * params * c["w_bytes"]
                   + (1.0 - full) * (base_frozen + adapters * c["w_bytes"])) / tp
        weights = weights / np.where(zero >= 3, dp, 1.0)
        master = trainable * c["master_bytes"] / np.where(zero >= 1, dp, 1.0)
        grads = trainable * c["grad_bytes"] / np.where(zero >= 2, dp, 1.0)
        head_ada = c["adafactor_head_elements"] if last else single * c["adafactor_head_elements"]
        emb_ada = 0.0 if last else c["adafactor_embedding_elements"]
        factored = (full * (layers * c["adafactor_layer_elements"] + emb_ada + head_ada)
                    + (1.0 - full) * layers * c["lora_adafactor_layer_elements"]) / tp
        opt = (trainable * c["opt_bytes"] + c["factored"] * 4.0 * factored) / np.where(
            zero >= 1, dp, 1.0)
        if last:
            acts = inflight_last * layers * layer_act + working + final_extra
        else:
            acts = (inflight_first * (layers * layer_act + embed_extra) + working
                    + single * final_extra)
        multi = dp > 1
        # PyTorch DDP allocates gradient buckets as large as all gradients unless
        # gradient_as_bucket_view=True (DDP docs); ZeRO uses bounded buckets instead.
        ddp = np.where(multi & (zero == 0), trainable * c["grad_bytes"], 0.0)
        zero_bucket = np.where(
            multi & (zero >= 1),
            np.minimum(policy.zero_bucket_elements, trainable) * policy.zero_bucket_element_bytes,
            0.0)
        gathered_params = np.minimum(
            policy.zero3_max_live_params,
            np.maximum(2.0 * c["layer_params"], c["embedding_params"] + c["layer_params"])) / tp
        gathered = np.where(
            multi & (zero >= 3),
            gathered_params * np.where(full > 0, c["w_bytes"], c["base_other_bytes"])
            + full * c["layer_params"] / tp * c["grad_bytes"], 0.0)
        dequant = c["quantized"] * c["largest_linear_params"] * lp / tp
        allocated = weights + master + grads + opt + acts
        frag = policy.fragmentation_fraction * allocated
        context = np.full_like(tp, float(policy.cuda_context_bytes))
        comm = ddp + zero_bucket
        runtime = context + comm + gathered + dequant + frag
        results.append((weights, master, grads, opt, acts, runtime, context, comm, gathered,
                        frag))

    first, last_stage = results
    rounded_first = [np.rint(x) for x in first[:6]]
    rounded_last = [np.rint(x) for x in last_stage[:6]]
    total_first = sum(rounded_first, np.zeros_like(tp))
    total_last = sum(rounded_last, np.zeros_like(tp))
    use_last = (pp > 1) & (total_last > total_first)

    def pick(i: int) -> FloatArray:
        return np.where(use_last, rounded_last[i], rounded_first[i])

    def pick_raw(i: int) -> FloatArray:
        return np.rint(np.where(use_last, last_stage[i], first[i]))

    zeros = np.zeros_like(tp)
    weights_b, master_b, grads_b, opt_b, acts_b, runtime_b = (pick(i) for i in range(6))
    total = weights_b + master_b + grads_b + opt_b + acts_b + runtime_b
    usable = np.floor(c["capacity_bytes"] * policy.train_utilization)
    return ComponentArrays(
        weights=weights_b, master_weights=master_b, gradients=grads_b, optimizer=opt_b,
        activations=acts_b, kv_cache=zeros, runtime_overhead=runtime_b, total=total,
        usable=usable, verdict_code=_verdicts(total, usable, policy.tight_margin),
        kv_bytes_per_token=zeros, cuda_context=pick_raw(6), communication=pick_raw(7),
        zero3_gathered=pick_raw(8), fragmentation=pick_raw(9), last_stage=use_last,
    )


def kv_bytes_per_token(c: Columns, layers: FloatArray) -> FloatArray:
    """KV-cache bytes per cached token on one GPU: 2 (K and V) · layers on the stage ·
    max(1, kv_heads / tp) · head_dim · bytes (vLLM ``get_cache_block_size``)."""
    kv_heads_per_rank = np.maximum(1.0, c["num_kv_heads"] / c["tp"])
    return 2.0 * layers * kv_heads_per_rank * c["head_dim"] * c["kv_bytes"]


def cached_tokens(c: Columns) -> FloatArray:
    """Tokens per sequence held in the KV cache: the context, capped by a sliding window."""
    window = c["sliding_window"]
    return np.where(window > 0, np.minimum(c["context"], window), c["context"])


def inference_components(c: Columns, policy: HeadroomPolicy) -> ComponentArrays:
    """Per-GPU inference memory of every row of ``c``: weights, KV cache, peak activations."""
    tp, pp, lp = c["tp"], c["pp"], c["act_bytes"]
    layers_first = np.ceil(c["num_layers"] / pp)
    layers_last = np.floor(c["num_layers"] / pp)
    single = (pp == 1).astype(np.float64)
    # Peak transient of one layer in a prefill chunk: residual stream and norm output, the
    # QKV projections, the MLP intermediates (gate, up and product for a gated MLP).
    # An encoder-only model (BERT) runs the whole batch in one forward pass: no chunked
    # prefill, and no KV cache, since nothing is decoded afterwards (K and V are transient).
    decoder = c["decoder"] > 0
    tokens_in_flight = c["batch"] * c["context"]
    chunk = np.where(decoder, np.minimum(tokens_in_flight, float(policy.prefill_chunk_tokens)),
                     tokens_in_flight)
    mlp_factor = c["experts_per_token"] * np.where(c["gated"] > 0, 3.0, 2.0)
    kv_per_rank = np.maximum(c["kv_size"] / tp, c["head_dim"])
    per_token = lp * (2.0 * c["hidden_size"] + 2.0 * kv_per_rank
                      + (c["q_size"] + c["intermediate_size"] * mlp_factor) / tp)
    scores = (1.0 - c["flash"]) * c["num_heads"] / tp * np.minimum(c["context"], chunk) * lp
    transient = chunk * (per_token + scores)
    # Logits of the last position of every sequence in fp32 for sampling (vLLM).
    logits = c["decoder"] * c["batch"] * c["vocab_size"] * 4.0 / tp
    dequant = c["quantized"] * c["largest_linear_params"] * lp / tp

    results = []
    for last in (False, True):
        layers = layers_last if last else layers_first
        params = _base_params(c, layers, single, last)
        weights = _base_weight_bytes(c, params, layers) / tp
        per_tok = np.where(decoder, kv_bytes_per_token(c, layers), 0.0)
        kv = per_tok * c["batch"] * cached_tokens(c)
        acts = transient + (logits if last else single * logits)
        frag = policy.fragmentation_fraction * acts
        context = np.full_like(tp, float(policy.cuda_context_bytes))
        runtime = context + frag + dequant
        results.append((weights, acts, kv, runtime, per_tok, context, frag))

    zeros = np.zeros_like(tp)
    first, last_stage = results
    total_first = sum((np.rint(x) for x in first[:4]), zeros)
    total_last = sum((np.rint(x) for x in last_stage[:4]), zeros)
    use_last = (pp > 1) & (total_last > total_first)

    def pick(i: int) -> FloatArray:
        return np.rint(np.where(use_last, last_stage[i], first[i]))

    weights_b, acts_b, kv_b, runtime_b = (pick(i) for i in range(4))
    total = weights_b + acts_b + kv_b + runtime_b
    usable = np.floor(c["capacity_bytes"] * policy.infer_utilization)
    return ComponentArrays(
        weights=weights_b, master_weights=zeros, gradients=zeros, optimizer=zeros,
        activations=acts_b, kv_cache=kv_b, runtime_overhead=runtime_b, total=total,
        usable=usable, verdict_code=_verdicts(total, usable, policy.tight_margin),
        kv_bytes_per_token=pick(4), cuda_context=pick(5), communication=zeros,
        zero3_gathered=zeros, fragmentation=pick(6), last_stage=use_last,
    )
