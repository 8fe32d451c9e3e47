"""Per-GPU memory of one training, fine-tuning or inference configuration, with a fit verdict.

The public entry points are :func:`estimate_training` and :func:`estimate_inference`; the serving
model also uses :func:`kv_cache_bytes_per_token` and :func:`max_kv_tokens`. All of them encode
the configuration as one row and run the array equations of :mod:`costsim.memory.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.precision import Dtype
from costsim.domain.workload import (
    InferenceSetup,
    LoraConfig,
    OptimizerKind,
    ParallelLayout,
    Quant,
    Task,
    TrainingSetup,
)
from costsim.errors import InputError
from costsim.memory.activations import RECOMPUTE_CODE
from costsim.memory.core import (
    INFER_COLUMNS,
    SHAPE_COLUMNS,
    TRAIN_COLUMNS,
    ComponentArrays,
    FloatArray,
    inference_components,
    training_components,
)
from costsim.memory.lora import AdapterCounts, adapter_counts
from costsim.memory.runtime import DEFAULT_POLICY, VERDICT_BY_CODE, HeadroomPolicy, Verdict
from costsim.memory.shape import QUANT_ELEMENT_BYTES, ModelShape, model_shape
from costsim.memory.states import compute_bytes, trainable_bytes_per_param

KV_DTYPES = (Dtype.FP32, Dtype.FP16, Dtype.BF16, Dtype.FP8, Dtype.INT8)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryEstimate:
    """Per-GPU memory (the most-loaded GPU) of one configuration; bytes throughout.

    ``total_bytes`` is exactly the sum of the seven components. ``headroom_bytes`` is
    ``usable_bytes - total_bytes`` (negative when it does not fit).
    """

    task: Task
    params_total: int
    params_active: int
    params_trainable: int
    params_adapter: int
    weights_bytes: int
    master_weights_bytes: int
    gradients_bytes: int
    optimizer_bytes: int
    activations_bytes: int
    kv_cache_bytes: int
    runtime_overhead_bytes: int
    total_bytes: int
    capacity_bytes: int
    usable_bytes: int
    verdict: Verdict
    headroom_bytes: int
    kv_cache_bytes_per_token: int
    cuda_context_bytes: int
    communication_bytes: int
    zero3_gathered_bytes: int
    fragmentation_bytes: int
    most_loaded_stage: str  # "first" or "last" pipeline stage

    def components(self) -> dict[str, int]:
        """The ``per_gpu_bytes`` mapping of ``memory --json`` (docs/memory.md)."""
        return {
            "weights": self.weights_bytes,
            "master_weights": self.master_weights_bytes,
            "gradients": self.gradients_bytes,
            "optimizer": self.optimizer_bytes,
            "activations": self.activations_bytes,
            "kv_cache": self.kv_cache_bytes,
            "runtime_overhead": self.runtime_overhead_bytes,
            "total": self.total_bytes,
        }


@lru_cache(maxsize=256)
def shape_of(arch: Architecture) -> ModelShape:
    """Memoized :func:`model_shape` (architectures are frozen and hashable)."""
    return model_shape(arch)


def _shape_row(shape: ModelShape) -> dict[str, float]:
    return dict(_shape_row_cached(shape))


@lru_cache(maxsize=256)
def _shape_row_cached(shape: ModelShape) -> dict[str, float]:
    return {
        "num_layers": shape.num_layers, "hidden_size": shape.hidden_size,
        "num_heads": shape.num_heads, "num_kv_heads": shape.num_kv_heads,
        "head_dim": shape.head_dim, "q_size": shape.q_size, "kv_size": shape.kv_size,
        "intermediate_size": shape.intermediate_size, "vocab_size": shape.vocab_size,
        "experts_per_token": shape.experts_per_token, "gated": float(shape.gated_mlp),
        "dropout": float(shape.dropout), "decoder": float(shape.is_decoder),
        "sliding_window": shape.sliding_window, "embedding_params": shape.embedding_params,
        "layer_params": shape.layer_params, "layer_linear_params": shape.layer_linear_params,
        "largest_linear_params": shape.largest_linear_params,
        "final_norm_params": shape.final_norm_params, "lm_head_params": shape.lm_head_params,
        "pooler_params": shape.pooler_params, "tied": float(shape.tied_embeddings),
        "adafactor_layer_elements": shape.adafactor_layer_elements,
        "adafactor_embedding_elements": shape.adafactor_embedding_elements,
        "adafactor_head_elements": shape.adafactor_head_elements,
    }


# ----------------------------------------------------------------------------- validation


def check_precision(gpu: GpuSpec, precision: Dtype, source: str = "--precision") -> None:
    """Raise unless ``gpu`` computes in ``precision`` (bf16 on a V100 or T4 is an error)."""
    compute_bytes(precision)
    if precision is not Dtype.FP32 and not gpu.supports(precision):
        raise InputError("", source, f"{gpu.name} has no {precision.value} support "
                                     f"(use {gpu.default_precision.value} or fp32; "
                                     f"got {precision.value})")


def check_layout(arch: Architecture, layout: ParallelLayout) -> None:
    """Raise :class:`InputError` naming the flag when ``layout`` cannot run ``arch``."""
    if arch.num_heads % layout.tp:
        raise InputError("", "--tp", f"must divide the {arch.num_heads} attention heads of "
                                     f"{arch.name} (got {layout.tp})")
    kv = arch.num_kv_heads
    if kv % layout.tp and layout.tp % kv:
        raise InputError("", "--tp", f"must divide the {kv} KV heads of {arch.name} or be a "
                                     f"multiple of them (got {layout.tp})")
    if layout.pp > arch.num_layers:
        raise InputError("", "--pp", f"must be at most the {arch.num_layers} layers of "
                                     f"{arch.name} (got {layout.pp})")
    stage_layers = -(-arch.num_layers // layout.pp)
    if stage_layers % layout.virtual_stages:
        raise InputError("", "--virtual-stages", f"must divide the {stage_layers} layers of the "
                                                 f"largest pipeline stage ({arch.num_layers} "
                                                 f"layers over pp {layout.pp}; got "
                                                 f"{layout.virtual_stages})")


def _check_tokens(arch: Architecture, tokens: int, flag: str) -> None:
    if tokens > arch.max_position_embeddings:
        raise InputError("", flag, f"must be at most the {arch.max_position_embeddings} positions "
                                   f"of {arch.name} (got {tokens})")


@lru_cache(maxsize=256)
def adapter_counts_of(arch: Architecture, lora: LoraConfig) -> AdapterCounts:
    """Memoized :func:`adapter_counts`: the layout searches encode thousands of setups that
    share one model and one LoRA configuration."""
    return adapter_counts(arch, lora)


def _adapters(arch: Architecture, setup: TrainingSetup) -> AdapterCounts | None:
    if setup.lora is None:
        if setup.quant is not Quant.NONE:
            raise InputError("", "--quant", "quantized weights are frozen: training them needs "
                                            "LoRA adapters (--task finetune --lora-rank R) "
                                            f"(got --quant {setup.quant.value})")
        return None
    return adapter_counts_of(arch, setup.lora)


# ----------------------------------------------------------------------------- encoding


def _base_bytes(precision: Dtype, quant: Quant) -> tuple[float, float, float]:
    """(linear bytes per param, other bytes per param, quantized flag) of frozen weights."""
    lp = compute_bytes(precision)
    if quant is Quant.NONE:
        return lp, lp, 0.0
    # Element bytes only: the constants come per layer from the shapes (ModelShape).
    return QUANT_ELEMENT_BYTES[quant], lp, 1.0


def encode_training(arch: Architecture, gpu: GpuSpec, setup: TrainingSetup) -> dict[str, float]:
    """One row of :data:`TRAIN_COLUMNS` for ``setup`` (validates it)."""
    check_layout(arch, setup.layout)
    check_precision(gpu, setup.precision)
    _check_tokens(arch, setup.seq_len, "--seq-len")
    shape = shape_of(arch)
    adapters = _adapters(arch, setup)
    lp = compute_bytes(setup.precision)
    per = trainable_bytes_per_param(setup.precision, setup.bytes_preset, setup.optimizer,
                                    qlora=adapters is not None and setup.quant is not Quant.NONE)
    linear_b, other_b, quantized = _base_bytes(setup.precision, setup.quant)
    layout = setup.layout
    row = _shape_row(shape)
    row.update({
        "tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "zero": layout.zero,
        "sp": float(layout.sp), "vpp": layout.virtual_stages,
        "micro_batch": setup.micro_batch, "seq_len": setup.seq_len,
        "grad_accum": setup.grad_accum, "recompute": RECOMPUTE_CODE[setup.recompute],
        "flash": float(setup.flash_attention), "act_bytes": lp,
        "full": 0.0 if adapters is not None else 1.0,
        "lora_layer_params": adapters.layer_params if adapters else 0,
        "lora_pooler_params": adapters.pooler_params if adapters else 0,
        "lora_layer_ranks": adapters.layer_ranks if adapters else 0,
        "lora_adafactor_layer_elements": adapters.layer_adafactor_elements if adapters else 0,
        "base_linear_bytes": linear_b, "base_other_bytes": other_b,
        "quant_constant_bytes": shape.quant_constant_bytes(setup.quant),
        "quantized": quantized,
        "w_bytes": per.weights, "master_bytes": per.master, "grad_bytes": per.gradients,
        "opt_bytes": per.optimizer,
        "factored": float(setup.optimizer is OptimizerKind.ADAFACTOR),
        "capacity_bytes": gpu.capacity_bytes,
    })
    return row


def encode_inference(arch: Architecture, gpu: GpuSpec, setup: InferenceSetup) -> dict[str, float]:
    """One row of :data:`INFER_COLUMNS` for ``setup`` (validates it)."""
    check_layout(arch, setup.layout)
    check_precision(gpu, setup.precision)
    _check_tokens(arch, setup.context_tokens, "--context")
    if setup.kv_cache_dtype not in KV_DTYPES:
        raise InputError("", "--kv-dtype", "must be one of fp32, fp16, bf16, fp8, int8 "
                                           f"(got {setup.kv_cache_dtype.value})")
    shape = shape_of(arch)
    linear_b, other_b, quantized = _base_bytes(setup.precision, setup.quant)
    row = _shape_row(shape)
    row.update({
        "tp": setup.layout.tp, "pp": setup.layout.pp, "batch": setup.batch,
        "context": setup.context_tokens, "flash": float(setup.flash_attention),
        "act_bytes": compute_bytes(setup.precision),
        "kv_bytes": setup.kv_cache_dtype.bytes_per_element,
        "base_linear_bytes": linear_b, "base_other_bytes": other_b,
        "quant_constant_bytes": shape.quant_constant_bytes(setup.quant),
        "quantized": quantized, "capacity_bytes": gpu.capacity_bytes,
    })
    return row


def stack_rows(rows: Sequence[dict[str, float]], columns: Sequence[str]) -> dict[str, FloatArray]:
    """Turn encoded rows into one float64 array per column."""
    matrix = np.array([[row[name] for name in columns] for row in rows], dtype=np.float64)
    matrix = matrix.reshape(len(rows), len(columns))
    return {name: np.ascontiguousarray(matrix[:, i]) for i, name in enumerate(columns)}


# ----------------------------------------------------------------------------- estimates


def _estimate(arrays: ComponentArrays, task: Task, arch: Architecture, gpu: GpuSpec,
              trainable: int, adapter: int) -> MemoryEstimate:
    shape = shape_of(arch)

    def at(values: FloatArray) -> int:
        return int(values[0])

    return MemoryEstimate(
        task=task, params_total=shape.params_total, params_active=shape.params_active,
        params_trainable=trainable, params_adapter=adapter,
        weights_bytes=at(arrays.weights), master_weights_bytes=at(arrays.master_weights),
        gradients_bytes=at(arrays.gradients), optimizer_bytes=at(arrays.optimizer),
        activations_bytes=at(arrays.activations), kv_cache_bytes=at(arrays.kv_cache),
        runtime_overhead_bytes=at(arrays.runtime_overhead), total_bytes=at(arrays.total),
        capacity_bytes=gpu.capacity_bytes, usable_bytes=at(arrays.usable),
        verdict=VERDICT_BY_CODE[int(arrays.verdict_code[0])],
        headroom_bytes=at(arrays.usable) - at(arrays.total),
        kv_cache_bytes_per_token=at(arrays.kv_bytes_per_token),
        cuda_context_bytes=at(arrays.cuda_context), communication_bytes=at(arrays.communication),
        zero3_gathered_bytes=at(arrays.zero3_gathered),
        fragmentation_bytes=at(arrays.fragmentation),
        most_loaded_stage="last" if bool(arrays.last_stage[0]) else "first",
    )


def estimate_training(arch: Architecture, gpu: GpuSpec, setup: TrainingSetup,
                      policy: HeadroomPolicy = DEFAULT_POLICY) -> MemoryEstimate:
    """Per-GPU memory of training or fine-tuning ``arch`` on ``gpu`` as ``setup`` says.

    Raises:
        InputError: the layout, precision, quantization or LoRA targets do not fit the model or
            the GPU (an out-of-memory configuration is not an error: its verdict is ``oom``).
    """
    row = encode_training(arch, gpu, setup)
    arrays = training_components(stack_rows([row], TRAIN_COLUMNS), policy)
    adapters = _adapters(arch, setup)
    if adapters is None:
        return _estimate(arrays, setup.task, arch, gpu, shape_of(arch).params_total, 0)
    return _estimate(arrays, setup.task, arch, gpu, adapters.total, adapters.total)


def estimate_inference(arch: Architecture, gpu: GpuSpec, setup: InferenceSetup,
                       policy: HeadroomPolicy = DEFAULT_POLICY) -> MemoryEstimate:
    """Per-GPU memory of serving ``arch`` on ``gpu``: weights, KV cache, peak activations."""
    row = encode_inference(arch, gpu, setup)
    arrays = inference_components(stack_rows([row], INFER_COLUMNS), policy)
    return _estimate(arrays, Task.INFER, arch, gpu, 0, 0)


def kv_cache_bytes_per_token(arch: Architecture, setup: InferenceSetup) -> int:
    """KV-cache bytes one cached token takes on the most-loaded GPU (first pipeline stage):
    2 · ⌈layers/pp⌉ · max(1, kv_heads/tp) · head_dim · bytes of the KV dtype; 0 for an
    encoder-only model, which decodes nothing and so caches no keys and values."""
    check_layout(arch, setup.layout)
    if not arch.is_decoder:
        return 0
    layers = -(-arch.num_layers // setup.layout.pp)
    kv_heads = max(1.0, arch.num_kv_heads / setup.layout.tp)
    return round(2 * layers * kv_heads * arch.head_dim * setup.kv_cache_dtype.bytes_per_element)


def max_kv_tokens(arch: Architecture, gpu: GpuSpec, setup: InferenceSetup,
                  policy: HeadroomPolicy = DEFAULT_POLICY) -> int:
    """Cached tokens that fit on one GPU beside the weights, vLLM style:
    ⌊(capacity · utilization − weights − activations − overhead) / KV bytes per token⌋
    (0 when not even the weights fit). ``setup.batch`` and ``context_tokens`` size the
    activation peak; the KV cache of ``setup`` itself is not subtracted. 0 for an encoder-only
    model (no KV cache)."""
    return kv_tokens_beside(estimate_inference(arch, gpu, setup, policy),
                            kv_cache_bytes_per_token(arch, setup))


def kv_tokens_beside(estimate: MemoryEstimate, kv_bytes_per_token: int) -> int:
    """:func:`max_kv_tokens` from an inference estimate already made and its KV bytes per
    token (0 when not even the weights fit, or when nothing is cached)."""
    if kv_bytes_per_token == 0:
        return 0  # an encoder-only model has no KV cache to fill
    free = estimate.usable_bytes - (estimate.total_bytes - estimate.kv_cache_bytes)
    return max(0, free // kv_bytes_per_token)


def training_components_of_layouts(arch: Architecture, gpu: GpuSpec, base: TrainingSetup,
                                   layouts: Mapping[str, npt.ArrayLike],
                                   policy: HeadroomPolicy = DEFAULT_POLICY) -> ComponentArrays:
    """Memory of ``base`` under many layouts at once: its encoded row, with the columns that
    ``layouts`` names (tp, pp, dp, zero, sp, vpp, micro_batch, grad_accum, recompute) replaced
    by arrays; the same equations as :func:`estimate_training`, without one row per layout.
    The layouts must be valid for ``arch`` (the layout search builds only valid ones)."""
    row = encode_training(arch, gpu, base)
    n = len(np.asarray(layouts["tp"]))
    columns = {name: (np.asarray(layouts[name], dtype=np.float64) if name in layouts
                      else np.full(n, row[name], dtype=np.float64)) for name in TRAIN_COLUMNS}
    return training_components(columns, policy)


def component_arrays_for(rows: Sequence[dict[str, float]], *, infer: bool,
                         policy: HeadroomPolicy = DEFAULT_POLICY) -> ComponentArrays:
    """Evaluate many encoded rows at once (all training, or all inference)."""
    if infer:
        return inference_components(stack_rows(rows, INFER_COLUMNS), policy)
    return training_components(stack_rows(rows, TRAIN_COLUMNS), policy)


__all__ = [
    "SHAPE_COLUMNS", "MemoryEstimate", "adapter_counts_of", "check_layout", "check_precision",
    "component_arrays_for",
    "encode_inference", "encode_training", "estimate_inference", "estimate_training",
    "kv_cache_bytes_per_token", "kv_tokens_beside", "max_kv_tokens", "stack_rows",
    "training_components_of_layouts",
]
