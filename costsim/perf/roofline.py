"""Roofline of one serving replica: decode step, prefill, batch cap and peak request rate.

Decode step at batch B (average cached context c̄ = prompt + output/2), per GPU of a replica
of ``tp`` GPUs:

    t_mem  = (weights read + B·c̄·KV bytes per token) / (HBM bandwidth · η_hbm(engine))
    t_comp = B · (2·N_active + 4·L·h_q·c̄) / tp / (dense peak · η_compute(engine))
    t_step = √(t_mem² + t_comp²) + t_tp + engine step overhead

The L2 norm is a smooth roofline: it reproduces Vidur's published per-operator profiles of
Llama-2-7B linear layers on A100 and H100 within ~5 % from 1 to 4096 tokens, where max() is
20 % low near the knee. ``t_tp`` = 2 all-reduces per layer of B·h activations (latency +
bandwidth). MoE models read the experts that B tokens touch: 1 − (1 − k/E)^B of them.

Continuous batching (Orca, vLLM): the batch is capped by the engine's default and by the KV
cache left beside the weights (memory engine, sequences of prompt + output tokens). Each request
costs the replica its prefill compute plus ``output`` decode steps shared with B−1 others, so
the maximum request rate is 1 / (t_prefill + output · t_step(B*) / B*).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.performance import EngineProfile, ServingAssumptions
from costsim.domain.precision import Dtype
from costsim.domain.workload import InferenceSetup
from costsim.errors import InputError
from costsim.memory.estimate import (
    estimate_inference,
    kv_cache_bytes_per_token,
    kv_tokens_beside,
    shape_of,
)
from costsim.memory.runtime import HeadroomPolicy
from costsim.memory.shape import ModelShape
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
    allreduce_latency_s: float


REPLICA_ARRAY_FIELDS = ("tp", "weight_bytes_per_gpu", "expert_weight_bytes_per_gpu",
                        "kv_bytes_per_token_per_gpu", "kv_capacity_tokens", "peak_flops",
                        "hbm_bytes_per_s", "intra_node_bytes_per_s", "activation_bytes",
                        "hbm_efficiency", "compute_efficiency", "step_overhead_s",
                        "engine_max_batch")


def stack_replicas(replicas: list[ReplicaTerms]) -> ReplicaTerms:
    """Replicas of one model as arrays (element i = replica i)."""
    if not replicas:
        raise InputError("", "replicas", "need at least one replica to stack")
    first = replicas[0]
    if any(r.model != first.model for r in replicas):
        raise InputError("", "replicas", "stacked replicas must serve the same model")
    columns = {name: np.asarray([float(getattr(r, name)) for r in replicas])
               for name in REPLICA_ARRAY_FIELDS}
    return ReplicaTerms(model=first.model, allreduce_latency_s=first.allreduce_latency_s,
                        **columns)


def decode_step_s(r: ReplicaTerms, batch: ArrayLike, context_tokens: ArrayLike) -> FloatArray:
    """Time of one decode iteration of ``batch`` sequences with ``context_tokens`` cached each."""
    b = np.asarray(batch, dtype=np.float64)
    c = np.asarray(context_tokens, dtype=np.float64)
    m = r.model
    if m.num_experts:
        touched = 1.0 - (1.0 - m.experts_per_token / m.num_experts) ** b
        weights = r.weight_bytes_per_gpu - r.expert_weight_bytes_per_gpu * (1.0 - touched)
    else:
        weights = r.weight_bytes_per_gpu + 0.0 * b
    mem_s = (weights + b * c * r.kv_bytes_per_token_per_gpu) / (
        r.hbm_bytes_per_s * r.hbm_efficiency)
    comp_s = b * forward_flops_per_token(m, c) / r.tp / (r.peak_flops * r.compute_efficiency)
    return np.sqrt(mem_s**2 + comp_s**2) + _tp_comm_s(r, b) + r.step_overhead_s


def _tp_comm_s(r: ReplicaTerms, tokens: FloatArray) -> FloatArray:
    volume = 2.0 * (r.tp - 1.0) / r.tp * tokens * r.model.hidden_size * r.activation_bytes
    comm = 2.0 * r.model.num_layers * (r.allreduce_latency_s + volume / r.intra_node_bytes_per_s)
    return np.where(r.tp > 1, comm, 0.0)


def prefill_flops(r: ReplicaTerms, prompt_tokens: ArrayLike) -> FloatArray:
    """FLOPs of a prompt's forward pass (causal attention: each token sees half the prompt)."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    return p * forward_flops_per_token(r.model, p / 2.0)


def prefill_work_s(r: ReplicaTerms, prompt_tokens: ArrayLike) -> FloatArray:
    """GPU time a prompt adds to a running batch (compute only; weights are read anyway)."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    comp_s = prefill_flops(r, p) / r.tp / (r.peak_flops * r.compute_efficiency)
    return comp_s + _tp_comm_s(r, p)


def prefill_latency_s(r: ReplicaTerms, prompt_tokens: ArrayLike) -> FloatArray:
    """Time to first token of a prompt on an idle replica (roofline of one forward pass)."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    comp_s = prefill_flops(r, p) / r.tp / (r.peak_flops * r.compute_efficiency)
    mem_s = r.weight_bytes_per_gpu / (r.hbm_bytes_per_s * r.hbm_efficiency)
    return np.sqrt(comp_s**2 + mem_s**2) + _tp_comm_s(r, p) + r.step_overhead_s


def replica_terms(arch: Architecture, gpu: GpuSpec, setup: InferenceSetup,
                  engine: EngineProfile, assumptions: ServingAssumptions,
                  policy: HeadroomPolicy) -> ReplicaTerms:
    """Memory and hardware terms of one replica (memory from the memory engine)."""
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

    def arr(value: float) -> FloatArray:
        return np.asarray(float(value))

    return ReplicaTerms(
        model=shape,
        tp=arr(setup.layout.tp),
        weight_bytes_per_gpu=arr(memory.weights_bytes),
        expert_weight_bytes_per_gpu=arr(memory.weights_bytes * expert_share),
        kv_bytes_per_token_per_gpu=arr(kv_per_token),
        kv_capacity_tokens=arr(capacity),
        peak_flops=arr(tflops * FLOPS_PER_TFLOPS),
        hbm_bytes_per_s=arr(gpu.memory_bandwidth_gb_per_s * BYTES_PER_GB),
        intra_node_bytes_per_s=arr(intra),
        activation_bytes=arr(2.0 if setup.precision is not Dtype.FP32 else 4.0),
        hbm_efficiency=arr(engine.hbm_efficiency),
        compute_efficiency=arr(engine.compute_efficiency),
        step_overhead_s=arr(engine.step_overhead_s),
        engine_max_batch=arr(engine.max_batch),
        allreduce_latency_s=assumptions.allreduce_latency_s,
    )


def max_batch_arrays(r: ReplicaTerms, context_tokens: ArrayLike) -> FloatArray:
    """Continuous-batching cap: min(engine cap, whole sequences the KV cache holds)."""
    c = np.asarray(context_tokens, dtype=np.float64)
    return np.minimum(r.engine_max_batch, np.floor(r.kv_capacity_tokens / c))


def max_throughput_arrays(r: ReplicaTerms, prompt_tokens: ArrayLike,
                          output_tokens: ArrayLike) -> FloatArray:
    """Maximum requests per second of each replica (no SLO), vectorized:
    1 / (t_prefill + output · t_step(B*) / B*), 0 where not one sequence fits."""
    p = np.asarray(prompt_tokens, dtype=np.float64)
    o = np.asarray(output_tokens, dtype=np.float64)
    batch = max_batch_arrays(r, p + o)
    safe = np.maximum(batch, 1.0)
    work_s = prefill_work_s(r, p) + o * decode_step_s(r, safe, p + o / 2.0) / safe
    return np.where(batch >= 1, 1.0 / work_s, 0.0)
