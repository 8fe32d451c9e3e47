"""Roofline of one serving replica: decode step, prefill, batch cap and peak request rate.

Decode step at batch B (average cached context c̄ = prompt + output/2), per GPU of a replica
of ``tp`` GPUs:

    t_mem  = (weights read(B) + B·c̄·KV bytes per token) / (bandwidth · η_bw(engine, memory))
    t_comp = B · (2·N_active + 4·L·h_q·c̄) / tp / (dense peak · η_compute(engine))
    t_gpu  = √(t_mem² + t_comp²)
    t_step = max(t_gpu, L · t_launch) + t_tp + a + b·B

The L2 norm is a smooth roofline: it reproduces Vidur's published per-operator profiles of
Llama-2-7B linear layers on A100 and H100 within ~5 % from 1 to 4096 tokens, where max() is
20 % low near the knee. ``t_tp`` = 2 all-reduces per layer of B·h activations (the engine's
call latency + bandwidth). MoE models read the experts that B tokens touch: 1 − (1 − k/E)^B of
them. Host time: an eager engine (no CUDA graphs) issues L layers of kernels at ``t_launch``
each while the GPU runs behind it, so the step takes the longer of the two; ``a + b·B`` is the
per-iteration scheduler, sampling and output work the engine does between steps (serialized:
the next step needs the sampled tokens). ``weights read(B)``: quantized weights at their own
bytes while the engine's weight-only kernel is fused (dequantizing in registers), plus a full
fp16 copy written and read back above the kernel family's fused batch (dequantize-then-GEMM).
A fused kernel reads its quantized bytes at κ times the fp16 kernel's bandwidth (the
dequantization instructions in its inner loop; ``bandwidth_factor`` of perf_quant_kernels.csv).

Continuous batching (Orca, vLLM): the batch is capped by the engine's default and by the KV
cache left beside the weights (memory engine). With paged KV (vLLM, SGLang, TGI, TensorRT-LLM
in-flight batching) a request holds its prompt plus the tokens generated so far, on average
prompt + output/2, so the cache admits more of them than whole-context reservations would
(vLLM admits by current use and preempts when the cache fills; the mean is what the cap sees).
Each request costs the replica its prefill plus ``output`` decode steps shared with B−1 others,
so the maximum request rate is 1 / (t_prefill + output · t_step(B*) / B*); with chunked prefill
(Sarathi-Serve) a prompt adds only its compute to running steps, without it (TGI 1.x) it runs
as its own forward pass, stalling every decode for that time (DistServe's interference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.performance import EngineProfile, ServingAssumptions
from costsim.domain.precision import Dtype
from costsim.domain.workload import InferenceSetup, Quant
from costsim.errors import InputError
from costsim.memory.estimate import (
    estimate_inference,
    kv_cache_bytes_per_token,
    kv_tokens_beside,
    shape_of,
)
from costsim.memory.runtime import HeadroomPolicy
from costsim.memory.shape import QUANT_ELEMENT_BYTES, ModelShape
from costsim.perf.flops import FloatArray, forward_flops_per_token
from costsim.perf.training import intra_node_bytes_per_s
from costsim.units import BYTES_PER_GB, FLOPS_PER_TFLOPS


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaTerms:
    """What the roofline needs about replicas of one model (base units).

    Numeric fields are numpy arrays (0-d for one replica); :func:`stack_replicas` joins replicas
    on different GPUs, TP degrees or engines so that every formula scores them in one call.
    """

    model: ModelShape
    tp: FloatArray
    weight_bytes_per_gpu: FloatArray
    expert_weight_bytes_per_gpu: FloatArray
    kv_bytes_per_token_per_gpu: FloatArray
    kv_capacity_tokens: FloatArray
    peak_flops: FloatArray
    hbm_bytes_per_s: FloatArray
    intra_node_bytes_per_s: FloatArray
    activation_bytes: FloatArray
    hbm_efficiency: FloatArray
    compute_efficiency: FloatArray
    step_overhead_s: FloatArray
    engine_max_batch: FloatArray
    allreduce_latency_s: float | FloatArray
    step_overhead_per_seq_s: FloatArray = field(default_factory=lambda: np.asarray(0.0))
    launch_s: FloatArray = field(default_factory=lambda: np.asarray(0.0))
    chunked_prefill: FloatArray = field(default_factory=lambda: np.asarray(1.0))
    paged_kv: FloatArray = field(default_factory=lambda: np.asarray(0.0))
    fused_max_batch: FloatArray = field(default_factory=lambda: np.asarray(np.inf))
    dequant_bytes_per_gpu: FloatArray = field(default_factory=lambda: np.asarray(0.0))
    quant_weight_bytes_per_gpu: FloatArray = field(default_factory=lambda: np.asarray(0.0))
    quant_bandwidth_factor: FloatArray = field(default_factory=lambda: np.asarray(1.0))
    attention_bandwidth_factor: FloatArray = field(default_factory=lambda: np.asarray(1.0))


REPLICA_ARRAY_FIELDS = ("tp", "weight_bytes_per_gpu", "expert_weight_bytes_per_gpu",
                        "kv_bytes_per_token_per_gpu", "kv_capacity_tokens", "peak_flops",
                        "hbm_bytes_per_s", "intra_node_bytes_per_s", "activation_bytes",
                        "hbm_efficiency", "compute_efficiency", "step_overhead_s",
                        "engine_max_batch", "allreduce_latency_s", "step_overhead_per_seq_s",
                        "launch_s", "chunked_prefill", "paged_kv", "fused_max_batch",
                        "dequant_bytes_per_gpu", "quant_weight_bytes_per_gpu",
                        "quant_bandwidth_factor", "attention_bandwidth_factor")


def stack_replicas(replicas: list[ReplicaTerms]) -> ReplicaTerms:
    """Replicas of one model as arrays (element i = replica i)."""
    if not replicas:
        raise InputError("", "replicas", "need at least one replica to stack")
    first = replicas[0]
    if any(r.model != first.model for r in replicas):
        raise InputError("", "replicas", "stacked replicas must serve the same model")
    columns = {name: np.asarray([float(getattr(r, name)) for r in replicas])
               for name in REPLICA_ARRAY_FIELDS}
    return ReplicaTerms(model=first.model, **columns)


class StepTerms:
    """The parts of one replica's step formulas that depend on neither the batch nor the
    context, computed once (bandwidth · η, the fused kernel's slowdown, the TP all-reduce's
    share, ...).

    The latency model's Little's-law fixed point (:mod:`costsim.perf.latency`) evaluates the
    decode step 60 times per grid of rates; hoisting these sub-expressions out of that loop
    leaves every operation that depends on the batch, and the order of every operation, as the
    formulas have them, so each result is the same to the last bit.
    """

    __slots__ = ("any_sharded", "bandwidth", "comm_layers", "comm_share", "compute_flops",
                 "has_weights", "kv_bandwidth", "moe_keep", "r", "sharded", "slow_factor",
                 "weights_floor")

    def __init__(self, r: ReplicaTerms) -> None:
        m = r.model
        self.r = r
        # one expert escapes one token with probability 1 − k/E
        self.moe_keep = 1.0 - m.experts_per_token / m.num_experts if m.num_experts else None
        self.bandwidth = r.hbm_bytes_per_s * r.hbm_efficiency
        # the decode attention kernel streams the paged KV cache at its own share
        self.kv_bandwidth = self.bandwidth * r.attention_bandwidth_factor
        self.has_weights = r.weight_bytes_per_gpu > 0
        self.weights_floor = np.maximum(r.weight_bytes_per_gpu, 1.0)
        self.slow_factor = 1.0 / r.quant_bandwidth_factor - 1.0
        self.compute_flops = r.peak_flops * r.compute_efficiency
        self.comm_share = 2.0 * (r.tp - 1.0) / r.tp
        self.comm_layers = 2.0 * m.num_layers
        self.sharded = r.tp > 1
        self.any_sharded = bool(np.any(self.sharded))

    def weights_read(self, b: FloatArray) -> FloatArray:
        """Bytes of weights one step of ``b`` tokens moves: the touched experts' share for MoE,
        plus a dequantized fp16 copy written and read back where the quantized kernel is not
        fused at that batch (dequantize-then-GEMM)."""
        r = self.r
        if self.moe_keep is not None:
            touched = 1.0 - self.moe_keep ** b
            weights = r.weight_bytes_per_gpu - r.expert_weight_bytes_per_gpu * (1.0 - touched)
        else:
            weights = r.weight_bytes_per_gpu + 0.0 * b
        return weights + np.where(b > r.fused_max_batch, r.dequant_bytes_per_gpu, 0.0)

    def weights_read_s(self, b: FloatArray) -> FloatArray:
        """Time to move one step's weights: every byte at the engine's bandwidth efficiency,
        and the quantized bytes a fused weight-only kernel reads at κ of it (its
        dequantization work in the inner loop; κ = ``quant_bandwidth_factor``, 1 for fp16 and
        for kernels without a measured factor): t = W/(BW·η) + Q·(1/κ − 1)/(BW·η), Q the
        quantized share W reads."""
        r = self.r
        weights = self.weights_read(b)
        fused = np.where(b > r.fused_max_batch, 0.0, 1.0)
        share = np.where(self.has_weights,
                         np.minimum(weights, r.weight_bytes_per_gpu) / self.weights_floor, 0.0)
        slow = fused * share * r.quant_weight_bytes_per_gpu * self.slow_factor
        return (weights + slow) / self.bandwidth

    def tp_comm_s(self, tokens: FloatArray) -> FloatArray:
        """Two all-reduces per layer of ``tokens``·h activations (0 without TP)."""
        r = self.r
        volume = self.comm_share * tokens * r.model.hidden_size * r.activation_bytes
        comm = self.comm_layers * (r.allreduce_latency_s + volume / r.intra_node_bytes_per_s)
        return np.where(self.sharded, comm, 0.0)


class DecodeStep:
    """:func:`decode_step_s` of one replica at one context as a function of the batch, with
    the terms that do not depend on the batch computed once (:class:`StepTerms`, the FLOPs per
    token at the context): the same result, bit for bit, for any batch."""

    __slots__ = ("context", "dense_read_s", "flops_per_token", "terms")

    def __init__(self, r: ReplicaTerms, context_tokens: ArrayLike) -> None:
        self.terms = terms = StepTerms(r)
        self.context = np.asarray(context_tokens, dtype=np.float64)
        self.flops_per_token = forward_flops_per_token(r.model, self.context)
        # A dense model whose weight kernels are fused at every batch (no dequantize-then-GEMM
        # threshold) reads the same bytes at any finite batch: W + 0·b is W (W not −0), so
        # the read time is the one at b = 1 for every finite b, bit for bit.
        self.dense_read_s = (
            terms.weights_read_s(np.asarray(1.0))
            if terms.moe_keep is None and bool(np.all(r.fused_max_batch == np.inf))
            and not np.any(np.signbit(r.weight_bytes_per_gpu)) else None)

    def __call__(self, batch: ArrayLike) -> FloatArray:
        t, r = self.terms, self.terms.r
        b = np.asarray(batch, dtype=np.float64)
        read_s = (self.dense_read_s if self.dense_read_s is not None and np.isfinite(b).all()
                  else t.weights_read_s(b))
        mem_s = read_s + b * self.context * r.kv_bytes_per_token_per_gpu / t.kv_bandwidth
        comp_s = b * self.flops_per_token / r.tp / t.compute_flops
        gpu_s = np.maximum(np.sqrt(mem_s**2 + comp_s**2), r.launch_s)
        # without TP the all-reduce term is 0 at every batch
        comm_s = t.tp_comm_s(b) if t.any_sharded else 0.0
        return gpu_s + comm_s + (r.step_overhead_s + r.step_overhead_per_seq_s * b)


def _weights_read_s(r: ReplicaTerms, b: FloatArray) -> FloatArray:
    """:meth:`StepTerms.weights_read_s` of ``r``."""
    return StepTerms(r).weights_read_s(b)


def host_overhead_s(r: ReplicaTerms, batch: ArrayLike) -> FloatArray:
    """Host work between two iterations of ``batch`` sequences: a + b·B (scheduling,
    sampling, stop checks, detokenization), not hidden behind the GPU."""
    b = np.asarray(batch, dtype=np.float64)
    return r.step_overhead_s + r.step_overhead_per_seq_s * b


def decode_step_s(r: ReplicaTerms, batch: ArrayLike, context_tokens: ArrayLike) -> FloatArray:
    """Time of one decode iteration of ``batch`` sequences with ``context_tokens`` cached each
    (:class:`DecodeStep`; build one to evaluate many batches at one context)."""
    return DecodeStep(r, context_tokens)(batch)


def _tp_comm_s(r: ReplicaTerms, tokens: FloatArray) -> FloatArray:
    return StepTerms(r).tp_comm_s(tokens)


def prefill_flops(r: ReplicaTerms, prompt_tokens: ArrayLike) -> FloatArray:
    """FLOPs of a prompt's forward pass (causal attention: each token sees half the prompt)."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    return p * forward_flops_per_token(r.model, p / 2.0)


def prefill_latency_s(r: ReplicaTerms, prompt_tokens: ArrayLike) -> FloatArray:
    """Time to first token of a prompt on an idle replica (roofline of one forward pass, the
    host's kernel issue and one iteration's host work)."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    comp_s = prefill_flops(r, p) / r.tp / (r.peak_flops * r.compute_efficiency)
    mem_s = _weights_read_s(r, p)
    gpu_s = np.maximum(np.sqrt(comp_s**2 + mem_s**2), r.launch_s)
    return gpu_s + _tp_comm_s(r, p) + host_overhead_s(r, 1.0)


def prefill_work_s(r: ReplicaTerms, prompt_tokens: ArrayLike) -> FloatArray:
    """GPU time a prompt takes from the running decodes: with chunked prefill its compute only
    (it rides along with decode steps whose weights are read anyway, Sarathi-Serve); without,
    its own forward pass, during which no sequence decodes."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    comp_s = prefill_flops(r, p) / r.tp / (r.peak_flops * r.compute_efficiency)
    chunked = comp_s + _tp_comm_s(r, p)
    return np.where(r.chunked_prefill > 0, chunked, prefill_latency_s(r, p))


WEIGHT_ONLY_QUANTS = frozenset({Quant.INT8, Quant.INT4, Quant.NF4})
# A dequantize-then-GEMM kernel writes each quantized linear weight back as fp16 (2 bytes) and
# the GEMM reads that copy again (2 bytes): the same traffic the QLoRA training model charges
# beyond the quantized read (costsim/data/perf_assumptions.csv dequant_bytes_per_weight 4.5 =
# 0.5 read + 2 + 2).
DEQUANT_COPY_BYTES_PER_WEIGHT = 4.0


def replica_terms(arch: Architecture, gpu: GpuSpec, setup: InferenceSetup,
                  engine: EngineProfile, assumptions: ServingAssumptions,
                  policy: HeadroomPolicy) -> ReplicaTerms:
    """Memory and hardware terms of one replica (memory from the memory engine)."""
    setup = engine_kv_setup(setup, engine)
    tflops = gpu.dense_tflops(setup.precision)
    if tflops is None:
        raise InputError("", "--precision", f"{gpu.name} has no {setup.precision.value} "
                                            f"support (use {gpu.default_precision.value})")
    memory = estimate_inference(arch, gpu, setup, policy)
    kv_per_token = kv_cache_bytes_per_token(arch, setup)
    capacity = kv_tokens_beside(memory, kv_per_token)
    shape = shape_of(arch)
    expert_share = shape.expert_params / shape.params_total if shape.params_total else 0.0
    intra = intra_node_bytes_per_s(gpu, nvlink_efficiency=assumptions.nvlink_efficiency,
                                   pcie_efficiency=assumptions.pcie_efficiency)
    tp = setup.layout.tp
    kernel = assumptions.quant_kernel(engine.engine, setup.quant)
    weight_only = setup.quant in WEIGHT_ONLY_QUANTS
    dequant_bytes = (shape.num_layers * shape.layer_linear_params / tp
                     * DEQUANT_COPY_BYTES_PER_WEIGHT if weight_only else 0.0)
    # the blocks' quantized linear weights with their constants (the memory engine's bytes);
    # embeddings and the LM head stay in the compute dtype
    quant_bytes = (shape.num_layers * (shape.layer_linear_params * QUANT_ELEMENT_BYTES[setup.quant]
                                       + shape.quant_constant_bytes(setup.quant)) / tp
                   if weight_only else 0.0)
    allreduce = (engine.allreduce_latency_s if engine.allreduce_latency_s is not None
                 else assumptions.allreduce_latency_s)

    def arr(value: float) -> FloatArray:
        return np.asarray(float(value))

    return ReplicaTerms(
        model=shape,
        tp=arr(tp),
        weight_bytes_per_gpu=arr(memory.weights_bytes),
        expert_weight_bytes_per_gpu=arr(memory.weights_bytes * expert_share),
        kv_bytes_per_token_per_gpu=arr(kv_per_token),
        kv_capacity_tokens=arr(capacity),
        peak_flops=arr(tflops * FLOPS_PER_TFLOPS),
        hbm_bytes_per_s=arr(gpu.memory_bandwidth_gb_per_s * BYTES_PER_GB),
        intra_node_bytes_per_s=arr(intra),
        activation_bytes=arr(2.0 if setup.precision is not Dtype.FP32 else 4.0),
        hbm_efficiency=arr(engine.bandwidth_efficiency(is_gddr(gpu))),
        # FP8 GEMMs reach a smaller share of their doubled peak (fp8_compute_factor)
        compute_efficiency=arr(engine.compute_efficiency
                               * (engine.fp8_compute_factor if setup.precision is Dtype.FP8
                                  else 1.0)),
        step_overhead_s=arr(engine.step_overhead_s),
        engine_max_batch=arr(engine.max_batch),
        allreduce_latency_s=arr(allreduce),
        step_overhead_per_seq_s=arr(engine.step_overhead_per_seq_s),
        launch_s=arr(engine.launch_s_per_layer * shape.num_layers),
        chunked_prefill=arr(1.0 if engine.chunked_prefill else 0.0),
        paged_kv=arr(1.0 if engine.paged_kv else 0.0),
        fused_max_batch=arr(kernel.fused_max_batch if weight_only else math.inf),
        dequant_bytes_per_gpu=arr(dequant_bytes),
        quant_weight_bytes_per_gpu=arr(quant_bytes),
        quant_bandwidth_factor=arr(kernel.bandwidth_factor if weight_only else 1.0),
        attention_bandwidth_factor=arr(engine.attention_bandwidth_factor),
    )


def engine_kv_setup(setup: InferenceSetup, engine: EngineProfile) -> InferenceSetup:
    """``setup`` with the KV cache dtype the engine uses when none is asked: with FP8 weights
    and activations (W8A8), vLLM, SGLang and TGI keep the KV cache in the 16-bit activation
    dtype (their ``kv_cache_dtype`` default ``auto`` is the model's dtype, bf16 for an FP8
    checkpoint's activations) unless ``--kv-dtype fp8`` is given; TensorRT-LLM's FP8
    checkpoints quantize the KV cache too (``fp8_kv_cache`` of perf_engines.csv)."""
    if (setup.kv_dtype is None and setup.precision is Dtype.FP8
            and not engine.fp8_kv_cache):
        return replace(setup, kv_dtype=Dtype.BF16)
    return setup


def is_gddr(gpu: GpuSpec) -> bool:
    """Whether the card's memory is GDDR (graphics memory: L4, A10G, L40S, RTX cards)."""
    return gpu.memory_type.upper().startswith("GDDR")


def kv_residency_tokens(r: ReplicaTerms, prompt_tokens: ArrayLike,
                        output_tokens: ArrayLike) -> FloatArray:
    """KV tokens one running request holds on average: prompt + output/2 with paged KV (it
    grows a page at a time as tokens are generated; requests in flight are spread over their
    progress), the whole prompt + output where the engine reserves the context up front."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    o = np.asarray(output_tokens, dtype=np.float64)
    return np.where(r.paged_kv > 0, p + o / 2.0, p + o)


def max_batch_arrays(r: ReplicaTerms, prompt_tokens: ArrayLike,
                     output_tokens: ArrayLike) -> FloatArray:
    """Continuous-batching cap: min(engine cap, requests the KV cache holds at their mean
    residency); never below the requests that fit whole (0 where not one fits whole)."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    o = np.asarray(output_tokens, dtype=np.float64)
    whole = np.floor(r.kv_capacity_tokens / (p + o))
    paged = np.floor(r.kv_capacity_tokens / kv_residency_tokens(r, p, o))
    return np.where(whole >= 1, np.minimum(r.engine_max_batch, np.maximum(whole, paged)), 0.0)


def max_throughput_arrays(r: ReplicaTerms, prompt_tokens: ArrayLike,
                          output_tokens: ArrayLike) -> FloatArray:
    """Maximum requests per second of each replica (no SLO), vectorized:
    1 / (t_prefill + output · t_step(B*) / B*), 0 where not one sequence fits."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    o = np.asarray(output_tokens, dtype=np.float64)
    batch = max_batch_arrays(r, p, o)
    safe = np.maximum(batch, 1.0)
    work_s = prefill_work_s(r, p) + o * decode_step_s(r, safe, p + o / 2.0) / safe
    return np.where(batch >= 1, 1.0 / work_s, 0.0)
