"""Training step time: compute at an achievable efficiency, communication, pipeline bubble.

One step = one optimizer update over ``dp · grad_accum · micro_batch`` sequences. Per GPU:

    t_compute  = hardware FLOPs of its share / (dense peak · η) · ⌈L/pp⌉·pp/L  (+ QLoRA's
                 dequantization traffic),
                 η = η∞(generation) · f(framework) · s(era, precision, memory)
                     · h/(h + h½) · M/(M + M½(generation)),
                 M = b·s tokens per GEMM, f = 1 for the Megatron-class calibration, s the
                 stack factors (StackFactors: 2021-22 era, fp16/fp8, a 40 GB card)
                 (the slowest pipeline stage holds ⌈L/pp⌉ layers when pp does not divide L)
    t_tp       = (1 − overlap) · grad_accum · ⌈L/pp⌉ · n_allreduce · 2(tp−1)/tp · b·s·h·bytes / B_tp
    t_p2p      = v · grad_accum · 2 · (b·s·h·bytes/tp) / B_pp                (pp > 1)
    bubble     = (pp − 1) · (t_compute + t_tp + t_p2p) / (v · grad_accum)
                 (1F1B, v = 1: (p−1)/(m+p−1) of a step; interleaved 1F1B with v virtual stages
                 per GPU: (p−1)/v chunk times, Narayanan et al. 2021 §2.2.2)
    t_dp       = hierarchical all-reduce of the gradient shard (ZeRO 0-2, once per step), exposed
                 beyond the last micro-batch's backward (ZeRO 0) or one micro-batch (ZeRO 1-2:
                 the parameter all-gather overlaps the next forward); ZeRO-3 all-gathers the weights
                 twice and reduce-scatters the gradients per micro-batch, exposed beyond t_compute
    t_sync     = σ · log2(nodes) · (t_compute + t_tp)                       (stragglers, barriers)
    step       = t_compute + t_tp + t_p2p + bubble + exposed DP + t_sync

The hierarchical all-reduce of S bytes over dp ranks, k of them per node on n nodes, is
2(k−1)/k · S / B_intra + 2(n−1)/n · S / (k · B_net): the k NICs of a node carry one k-th each.
Every formula works on numpy arrays, so one call scores many (GPU, count, layout) options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.performance import Interconnect, TrainingAssumptions
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant, Recompute, TrainingFramework, TrainingSetup
from costsim.errors import InputError
from costsim.memory.estimate import adapter_counts_of, shape_of
from costsim.memory.shape import ModelShape
from costsim.perf.flops import (
    RECOMPUTE_CODES,
    FloatArray,
    dequantization,
    hardware_flops_per_token,
    model_flops_per_token,
)
from costsim.units import BYTES_PER_GB, FLOPS_PER_TFLOPS

# PCIe x16 bandwidth per direction by generation, GB/s (PCIe 3/4/5/6: 16/32/63/126; stas00).
PCIE_GB_PER_S_PER_DIRECTION = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}


def intra_node_bytes_per_s(gpu: GpuSpec, *, nvlink_efficiency: float,
                           pcie_efficiency: float) -> float:
    """Achieved GPU-to-GPU bandwidth inside a node, one direction: NVLink where the GPU has
    it, else its PCIe generation (Gen4 when the table lacks it)."""
    if gpu.nvlink_gb_per_s_per_direction:
        return gpu.nvlink_gb_per_s_per_direction * BYTES_PER_GB * nvlink_efficiency
    pcie = PCIE_GB_PER_S_PER_DIRECTION.get(gpu.pcie_generation, PCIE_GB_PER_S_PER_DIRECTION[4])
    return pcie * BYTES_PER_GB * pcie_efficiency


@dataclass(frozen=True, slots=True, kw_only=True)
class HardwareTerms:
    """Per-option hardware facts as arrays (or scalars) in base units (FLOP/s, bytes/s)."""

    peak_flops: FloatArray
    compute_efficiency: FloatArray  # η∞ of the GPU generation × framework × stack factors
    hbm_bytes_per_s: FloatArray  # peak memory bandwidth
    gemm_half_tokens: FloatArray  # M½ of the GPU generation: g(M) = M/(M + M½)
    tp_overlap: FloatArray  # share of TP collectives hidden behind GEMMs
    intra_node_bytes_per_s: FloatArray  # achieved, one direction
    network_bytes_per_s_per_gpu: FloatArray  # achieved, one direction
    gpus_per_node: FloatArray
    activation_bytes: FloatArray  # bytes per activation / weight element in communication
    gradient_bytes: FloatArray


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutArrays:
    """Parallel layouts as arrays; element i of each array describes option i."""

    tp: NDArray[np.int64]
    pp: NDArray[np.int64]
    dp: NDArray[np.int64]
    zero: NDArray[np.int64]
    micro_batch: NDArray[np.int64]
    grad_accum: NDArray[np.int64]
    seq_len: NDArray[np.int64]
    recompute: NDArray[np.int64]  # RECOMPUTE_CODES
    # Virtual pipeline stages per GPU (None = 1 everywhere: plain 1F1B).
    virtual_stages: NDArray[np.int64] | None = None
    # LoRA / QLoRA: only the adapters are trained (None = full training of every parameter).
    trainable_params: FloatArray | None = None
    frozen_base: NDArray[np.bool_] | None = None
    # QLoRA: frozen base weights stored quantized and dequantized per matmul (None = none).
    quantized_params: FloatArray | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepArrays:
    """Step-time results per option (arrays of the broadcast shape)."""

    step_time_s: FloatArray
    compute_s: FloatArray
    tensor_parallel_s: FloatArray
    pipeline_p2p_s: FloatArray
    pipeline_bubble_s: FloatArray
    data_parallel_exposed_s: FloatArray
    sync_s: FloatArray
    tokens_per_s: FloatArray
    model_flops_per_token: FloatArray
    hardware_flops_per_token: FloatArray
    mfu: FloatArray
    hfu: FloatArray

    @property
    def communication_exposed_s(self) -> FloatArray:
        """Communication on the critical path: TP all-reduces, pipeline sends, exposed DP."""
        return self.tensor_parallel_s + self.pipeline_p2p_s + self.data_parallel_exposed_s


def _as_float(value: ArrayLike) -> FloatArray:
    return np.asarray(value, dtype=np.float64)


def hardware_terms(gpu: GpuSpec, precision: Dtype, network: Interconnect,
                   assumptions: TrainingAssumptions,
                   framework: TrainingFramework = TrainingFramework.MEGATRON_LM,
                   framework_year: int | None = None) -> HardwareTerms:
    """The hardware terms of one GPU model in a cluster joined by ``network``, run by
    ``framework`` (its factor scales η∞: the calibration is Megatron-class code) of
    ``framework_year`` (None: the era is inferred), times the stack factors of its era,
    ``precision`` and the GPU's memory size (:class:`StackFactors`).

    Raises:
        InputError: the GPU has no tensor math in ``precision``.
    """
    tflops = gpu.dense_tflops(precision)
    if tflops is None:
        raise InputError("--precision", "", f"{gpu.name} has no {precision.value} compute; "
                         f"use {gpu.default_precision.value}")
    intra = intra_node_bytes_per_s(gpu, nvlink_efficiency=assumptions.nvlink_efficiency,
                                   pcie_efficiency=assumptions.pcie_efficiency)
    element_bytes = 4.0 if precision in (Dtype.FP32, Dtype.TF32) else 2.0
    return HardwareTerms(
        peak_flops=_as_float(tflops * FLOPS_PER_TFLOPS),
        compute_efficiency=_as_float(assumptions.compute_efficiency(gpu.generation)
                                     * assumptions.framework_factor(framework)
                                     * assumptions.stack.factor(
                                         generation=gpu.generation, precision=precision,
                                         memory_gib=gpu.memory_label_gb,
                                         framework_year=framework_year)),
        hbm_bytes_per_s=_as_float(gpu.memory_bandwidth_gb_per_s * BYTES_PER_GB),
        gemm_half_tokens=_as_float(assumptions.gemm_half_tokens(gpu.generation)),
        tp_overlap=_as_float(assumptions.tp_overlap(gpu.generation)),
        intra_node_bytes_per_s=_as_float(intra),
        network_bytes_per_s_per_gpu=_as_float(network.bytes_per_s_per_gpu),
        gpus_per_node=_as_float(network.gpus_per_node),
        activation_bytes=_as_float(element_bytes),
        gradient_bytes=_as_float(element_bytes),
    )


def stack_hardware(terms: Sequence[HardwareTerms]) -> HardwareTerms:
    """One :class:`HardwareTerms` whose arrays hold option i's hardware at index i, so that
    options on different GPU models (and networks) are scored in one call."""
    def col(name: str) -> FloatArray:
        return np.asarray([float(getattr(t, name)) for t in terms], dtype=np.float64)

    return HardwareTerms(
        peak_flops=col("peak_flops"),
        compute_efficiency=col("compute_efficiency"),
        hbm_bytes_per_s=col("hbm_bytes_per_s"),
        gemm_half_tokens=col("gemm_half_tokens"),
        tp_overlap=col("tp_overlap"),
        intra_node_bytes_per_s=col("intra_node_bytes_per_s"),
        network_bytes_per_s_per_gpu=col("network_bytes_per_s_per_gpu"),
        gpus_per_node=col("gpus_per_node"),
        activation_bytes=col("activation_bytes"),
        gradient_bytes=col("gradient_bytes"),
    )


def layout_arrays(setups: Sequence[TrainingSetup],
                  arch: Architecture | None = None) -> LayoutArrays:
    """Stack training setups into :class:`LayoutArrays` (``arch`` counts LoRA adapters)."""
    def col(values: list[int]) -> NDArray[np.int64]:
        return np.asarray(values, dtype=np.int64)

    trainable: FloatArray | None = None
    frozen: NDArray[np.bool_] | None = None
    quantized: FloatArray | None = None
    if any(s.lora is not None for s in setups):
        if arch is None:
            raise InputError("", "--lora-rank", "LoRA setups need the architecture to count "
                                                "their adapters")
        shape = shape_of(arch)
        total = float(shape.params_total)
        trainable = np.asarray([float(adapter_counts_of(arch, s.lora).total) if s.lora else total
                                for s in setups])
        frozen = np.asarray([s.lora is not None for s in setups])
        quantized = np.asarray([float(shape.num_layers * shape.layer_linear_params)
                                if s.lora is not None and s.quant is not Quant.NONE else 0.0
                                for s in setups])
    return LayoutArrays(
        trainable_params=trainable,
        frozen_base=frozen,
        quantized_params=quantized,
        tp=col([s.layout.tp for s in setups]),
        pp=col([s.layout.pp for s in setups]),
        dp=col([s.layout.dp for s in setups]),
        zero=col([s.layout.zero for s in setups]),
        micro_batch=col([s.micro_batch for s in setups]),
        grad_accum=col([s.grad_accum for s in setups]),
        seq_len=col([s.seq_len for s in setups]),
        recompute=col([RECOMPUTE_CODES[s.recompute] for s in setups]),
        virtual_stages=col([s.layout.virtual_stages for s in setups]),
    )


def _allreduce_s(size_bytes: FloatArray, ranks: FloatArray, ranks_per_node: FloatArray,
                 intra: FloatArray, net: FloatArray) -> FloatArray:
    """Hierarchical ring all-reduce time of ``size_bytes`` over ``ranks`` ranks."""
    k = np.minimum(ranks_per_node, ranks)
    nodes = np.ceil(ranks / k)
    intra_s = 2.0 * (k - 1.0) / k * size_bytes / intra
    inter_s = 2.0 * (nodes - 1.0) / nodes * size_bytes / (k * net)
    return np.where(ranks > 1, intra_s + inter_s, 0.0)


def training_step_arrays(shape: ModelShape, hw: HardwareTerms, layout: LayoutArrays,
                         assumptions: TrainingAssumptions) -> StepArrays:
    """Step time and its breakdown for every option (see the module docstring)."""
    tp = _as_float(layout.tp)
    pp = _as_float(layout.pp)
    dp = _as_float(layout.dp)
    zero = np.asarray(layout.zero)
    mb = _as_float(layout.micro_batch)
    ga = _as_float(layout.grad_accum)
    seq = _as_float(layout.seq_len)
    code = np.asarray(layout.recompute)
    v = _as_float(1.0 if layout.virtual_stages is None else layout.virtual_stages)
    h = float(shape.hidden_size)
    # The slowest stage sets the pace: ⌈L/pp⌉ layers where pp does not divide L (Llama 3's
    # 126 layers on 16 stages run 8 on the busiest, Dubey et al. 2024 §3.3.2).
    stage_layers = np.ceil(shape.num_layers / pp)
    stage_imbalance = stage_layers * pp / shape.num_layers

    frozen: NDArray[np.bool_] | bool = (layout.frozen_base if layout.frozen_base is not None
                                         else False)
    trainable = (layout.trainable_params if layout.trainable_params is not None
                 else float(shape.params_total))
    adapters = np.where(frozen, trainable, 0.0)  # LoRA: the trainable params are the adapters
    model_fpt = model_flops_per_token(shape, seq, frozen, adapters)
    hw_fpt = hardware_flops_per_token(shape, seq, code, frozen, adapters)
    tokens_per_rank = mb * seq * ga
    tokens_per_gemm = mb * seq  # the M dimension of every GEMM of a micro-batch
    eta = (hw.compute_efficiency * h / (h + assumptions.width_half_point)
           * tokens_per_gemm / (tokens_per_gemm + hw.gemm_half_tokens))
    compute_s = hw_fpt * tokens_per_rank / (tp * pp) / (hw.peak_flops * eta)
    if layout.quantized_params is not None:  # QLoRA (see flops.dequantization)
        dequant_s, dequant_fpt = dequantization(layout.quantized_params / (tp * pp), code,
                                                tokens_per_gemm, hw.hbm_bytes_per_s,
                                                assumptions)
        compute_s = compute_s + ga * dequant_s
        hw_fpt = hw_fpt + dequant_fpt
    compute_s = compute_s * stage_imbalance

    per_node = hw.gpus_per_node
    # Tensor parallel: 2 all-reduces forward, 2 backward per layer (+2 with full recompute);
    # sequence parallelism swaps each for a reduce-scatter + all-gather of the same volume.
    tp_bandwidth = np.where(tp <= per_node, hw.intra_node_bytes_per_s,
                            hw.network_bytes_per_s_per_gpu)
    n_allreduce = 4.0 + 2.0 * (code == 2)
    message = mb * seq * h * hw.activation_bytes
    tp_s = np.where(tp > 1, (1.0 - hw.tp_overlap) * ga * stage_layers * n_allreduce
                    * 2.0 * (tp - 1.0) / tp * message / tp_bandwidth, 0.0)
    # Pipeline: activations forward and gradients backward at each stage boundary, split
    # over the TP ranks (Megatron's scatter-gather optimisation); the interleaved schedule
    # crosses v boundaries per GPU and micro-batch, so it sends v times as much.
    pp_bandwidth = np.where(tp * dp < per_node, hw.intra_node_bytes_per_s,
                            hw.network_bytes_per_s_per_gpu)
    p2p_s = np.where(pp > 1, v * ga * 2.0 * message / tp / pp_bandwidth, 0.0)
    # Fill and drain: pp − 1 slots of one chunk (a micro-batch through 1/v of the stage).
    bubble_s = (pp - 1.0) * (compute_s + tp_s + p2p_s) / (v * ga)

    # Data parallel. DP ranks sit next to each other after the TP group (Megatron rank order).
    dp_per_node = np.maximum(1.0, np.floor(per_node / np.minimum(tp, per_node)))
    shard_params = shape.params_total / (tp * pp)
    grad_allreduce_s = _allreduce_s(trainable / (tp * pp) * hw.gradient_bytes, dp, dp_per_node,
                                    hw.intra_node_bytes_per_s, hw.network_bytes_per_s_per_gpu)
    weight_allreduce_s = _allreduce_s(shard_params * hw.activation_bytes, dp, dp_per_node,
                                      hw.intra_node_bytes_per_s,
                                      hw.network_bytes_per_s_per_gpu)
    # ZeRO-3 per micro-batch: all-gather forward + all-gather backward (half an all-reduce
    # each) + reduce-scatter of gradients (half an all-reduce), prefetched under the compute.
    zero3_s = ga * (weight_allreduce_s + 0.5 * grad_allreduce_s)
    # ZeRO 0 (DDP): the all-reduce overlaps the last micro-batch's backward. ZeRO 1-2: its
    # reduce-scatter half overlaps that backward and the parameter all-gather half the next
    # step's first forward (Megatron distributed optimizer, DeepSpeed), one micro-batch in all.
    micro_s = compute_s / ga
    window_s = np.where(zero == 0, assumptions.backward_share_of_compute * micro_s, micro_s)
    dp_exposed_s = np.where(zero == 3, np.maximum(0.0, zero3_s - compute_s),
                            np.maximum(0.0, grad_allreduce_s - window_s))

    gpus = tp * pp * dp
    nodes = np.maximum(1.0, np.ceil(gpus / per_node))
    sync_s = assumptions.sync_overhead_per_node_doubling * np.log2(nodes) * (compute_s + tp_s)

    step_s = compute_s + tp_s + p2p_s + bubble_s + dp_exposed_s + sync_s
    tokens_per_s = dp * tokens_per_rank / step_s
    peak_total = gpus * hw.peak_flops
    return StepArrays(
        step_time_s=step_s,
        compute_s=compute_s,
        tensor_parallel_s=tp_s,
        pipeline_p2p_s=p2p_s,
        pipeline_bubble_s=bubble_s,
        data_parallel_exposed_s=dp_exposed_s,
        sync_s=sync_s,
        tokens_per_s=tokens_per_s,
        model_flops_per_token=model_fpt,
        hardware_flops_per_token=hw_fpt,
        mfu=model_fpt * tokens_per_s / peak_total,
        hfu=hw_fpt * tokens_per_s / peak_total,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingStep:
    """Step time of one training configuration, with its breakdown (seconds per step)."""

    setup: TrainingSetup
    gpus: int
    step_time_s: float
    tokens_per_step: int
    tokens_per_s: float
    model_flops_per_token: float
    hardware_flops_per_token: float
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    mfu: float
    hfu: float
    compute_s: float
    communication_exposed_s: float
    tensor_parallel_s: float
    data_parallel_exposed_s: float
    pipeline_p2p_s: float
    pipeline_bubble_s: float
    sync_s: float


def step_from_arrays(arrays: StepArrays, index: int, setup: TrainingSetup,
                     peak_flops: float) -> TrainingStep:
    """Pick option ``index`` out of vectorized results as a :class:`TrainingStep`."""
    def at(values: FloatArray) -> float:
        flat = np.broadcast_to(values, arrays.step_time_s.shape)
        return float(flat[index])

    tokens_per_s = at(arrays.tokens_per_s)
    gpus = setup.layout.gpus
    model_fpt = at(arrays.model_flops_per_token)
    hw_fpt = at(arrays.hardware_flops_per_token)
    return TrainingStep(
        setup=setup,
        gpus=gpus,
        step_time_s=at(arrays.step_time_s),
        tokens_per_step=setup.global_batch * setup.seq_len,
        tokens_per_s=tokens_per_s,
        model_flops_per_token=model_fpt,
        hardware_flops_per_token=hw_fpt,
        model_tflops_per_gpu=model_fpt * tokens_per_s / gpus / FLOPS_PER_TFLOPS,
        hardware_tflops_per_gpu=hw_fpt * tokens_per_s / gpus / FLOPS_PER_TFLOPS,
        mfu=model_fpt * tokens_per_s / gpus / peak_flops,
        hfu=hw_fpt * tokens_per_s / gpus / peak_flops,
        compute_s=at(arrays.compute_s),
        communication_exposed_s=at(arrays.communication_exposed_s),
        tensor_parallel_s=at(arrays.tensor_parallel_s),
        data_parallel_exposed_s=at(arrays.data_parallel_exposed_s),
        pipeline_p2p_s=at(arrays.pipeline_p2p_s),
        pipeline_bubble_s=at(arrays.pipeline_bubble_s),
        sync_s=at(arrays.sync_s),
    )


def estimate_training_step(shape: ModelShape, gpu: GpuSpec, setup: TrainingSetup, *,
                           network: Interconnect, assumptions: TrainingAssumptions,
                           arch: Architecture | None = None) -> TrainingStep:
    """Step time of one fully specified training configuration (``arch`` is needed for LoRA).

    Raises:
        InputError: the GPU lacks the precision.
    """
    hw = hardware_terms(gpu, setup.precision, network, assumptions, setup.framework,
                        setup.framework_year)
    arrays = training_step_arrays(shape, hw, layout_arrays([setup], arch), assumptions)
    return step_from_arrays(arrays, 0, setup, float(hw.peak_flops))


def recompute_code(recompute: Recompute) -> int:
    """The integer code of ``recompute`` used by the vectorized formulas."""
    return RECOMPUTE_CODES[recompute]
