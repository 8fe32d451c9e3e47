"""Serving: roofline decode and prefill, continuous batching, latency at a load, SLO capacity.

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

At a load λ per replica: prefill takes a share ρ_p = λ·t_prefill of the GPU, decode concurrency
n solves n = λ · output · TPOT(n) (Little's law), TPOT = t_step(n)/(1 − ρ_p); TTFT = prefill
latency + half an iteration + an M/D/1 queueing wait ρ/(2(1−ρ))·t_prefill with ρ = λ/λ_max.
Tail rule (p95): TTFT_p95 = prefill latency + one full iteration + 3.0 × the mean wait (the p95
of an exponential wait); TPOT_p95 = TPOT at the p95 concurrency n + 1.645·√n (Poisson).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.performance import EngineProfile, ServingAssumptions
from costsim.domain.precision import Dtype
from costsim.domain.workload import InferenceSetup, ParallelLayout, Quant, ServingEngine
from costsim.errors import InfeasibleError, InputError
from costsim.memory.estimate import (
    check_layout,
    estimate_inference,
    kv_cache_bytes_per_token,
    max_kv_tokens,
    shape_of,
)
from costsim.memory.runtime import DEFAULT_POLICY, HeadroomPolicy
from costsim.memory.shape import ModelShape
from costsim.perf.flops import FloatArray, forward_flops_per_token
from costsim.perf.training import PCIE_GB_PER_S_PER_DIRECTION
from costsim.units import SECONDS_PER_HOUR

TP_CHOICES = (1, 2, 4, 8)
BISECTION_STEPS = 60


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


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadLatency:
    """Mean and p95 latencies of a replica at a request rate (arrays over rates)."""

    rate_per_s: FloatArray
    concurrency: FloatArray
    ttft_s: FloatArray
    tpot_s: FloatArray
    ttft_p95_s: FloatArray
    tpot_p95_s: FloatArray
    overloaded: np.ndarray


def latency_at_load(r: ReplicaTerms, rate_per_s: ArrayLike, prompt_tokens: int,
                    output_tokens: int, max_batch: int, max_rps: float,
                    assumptions: ServingAssumptions) -> LoadLatency:
    """Latencies of one replica at ``rate_per_s`` requests per second (see module docstring)."""
    lam = np.asarray(rate_per_s, dtype=np.float64)
    context = prompt_tokens + output_tokens / 2.0
    prefill_share = lam * float(prefill_work_s(r, prompt_tokens))
    busy = np.clip(1.0 - prefill_share, 1e-9, 1.0)
    # Little's law fixed point n = λ·O·t_step(n)/(1−ρ_p); t_step grows with n, so iterate
    # from n = 0 (monotone convergence below the capacity).
    n = np.zeros_like(lam)
    for _ in range(60):
        n = np.minimum(lam * output_tokens * decode_step_s(r, np.maximum(n, 1.0), context)
                       / busy, float(max_batch))
    tpot = decode_step_s(r, np.maximum(n, 1.0), context) / busy
    n95 = np.minimum(n + assumptions.tail_concurrency_z * np.sqrt(n), float(max_batch))
    tpot95 = decode_step_s(r, np.maximum(n95, 1.0), context) / busy
    rho = np.clip(lam / max_rps, 0.0, 0.999999)
    first = float(prefill_latency_s(r, prompt_tokens))
    step = decode_step_s(r, np.maximum(n, 1.0), context)
    wait = rho / (2.0 * (1.0 - rho)) * first
    overloaded = lam > max_rps * (1.0 + 1e-9)  # at exactly the capacity the queue still drains
    inf = np.full_like(lam, np.inf)
    return LoadLatency(
        rate_per_s=lam,
        concurrency=n,
        ttft_s=np.where(overloaded, inf, first + step / 2.0 + wait),
        tpot_s=np.where(overloaded, inf, tpot),
        ttft_p95_s=np.where(overloaded, inf,
                            first + step + assumptions.tail_wait_multiplier * wait),
        tpot_p95_s=np.where(overloaded, inf, tpot95),
        overloaded=overloaded,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingEstimate:
    """Everything ``costsim estimate serve`` reports (DESIGN.md §7)."""

    model: str
    gpu: str
    gpus_per_replica: int
    engine: ServingEngine
    precision: Dtype
    quant: Quant
    kv_dtype: Dtype
    prompt_tokens: int
    output_tokens: int
    batch: int
    weights_bytes_per_gpu: int
    kv_bytes_per_token_per_gpu: int
    kv_capacity_tokens: int
    max_batch: int
    decode_step_s: float
    decode_tokens_per_s: float
    prefill_s: float
    output_tokens_per_s: float
    max_requests_per_s: float
    ttft_s: float
    tpot_s: float
    ttft_p95_s: float
    tpot_p95_s: float
    load_requests_per_s: float | None
    slo_ttft_s: float | None
    slo_tpot_s: float | None
    max_requests_per_s_at_slo: float | None
    rate_requests_per_s: float | None
    replicas_needed: int | None
    price_usd_per_gpu_hour: float
    cost_per_million_output_tokens_usd: float
    cost_per_million_tokens_usd: float
    warnings: tuple[str, ...]


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
    capacity = max_kv_tokens(arch, gpu, setup, policy)
    shape = shape_of(arch)
    expert_share = shape.expert_params / shape.params_total if shape.params_total else 0.0
    if gpu.nvlink_gb_per_s_per_direction:
        intra = gpu.nvlink_gb_per_s_per_direction * 1e9 * 0.8
    else:
        intra = PCIE_GB_PER_S_PER_DIRECTION.get(gpu.pcie_generation, 31.5) * 1e9 * 0.88
    def arr(value: float) -> FloatArray:
        return np.asarray(float(value))

    return ReplicaTerms(
        model=shape,
        tp=arr(setup.layout.tp),
        weight_bytes_per_gpu=arr(memory.weights_bytes),
        expert_weight_bytes_per_gpu=arr(memory.weights_bytes * expert_share),
        kv_bytes_per_token_per_gpu=arr(kv_per_token),
        kv_capacity_tokens=arr(capacity),
        peak_flops=arr(tflops * 1e12),
        hbm_bytes_per_s=arr(gpu.memory_bandwidth_gb_per_s * 1e9),
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


def _valid_tp(arch: Architecture, tp: int) -> bool:
    try:
        check_layout(arch, ParallelLayout(tp=tp))
    except InputError:
        return False
    return True


def smallest_tp(arch: Architecture, gpu: GpuSpec, setup: InferenceSetup,
                policy: HeadroomPolicy) -> int:
    """The smallest TP degree whose KV cache holds at least one full-context sequence.

    Raises:
        InfeasibleError: not even 8-way TP holds the weights and one sequence.
    """
    for tp in TP_CHOICES:
        if not _valid_tp(arch, tp):
            continue
        trial = replace(setup, layout=ParallelLayout(tp=tp), batch=1)
        if max_kv_tokens(arch, gpu, trial, policy) >= setup.context_tokens:
            return tp
    est = estimate_inference(arch, gpu, replace(setup, layout=ParallelLayout(tp=8), batch=1),
                             policy)
    raise InfeasibleError(f"{arch.name} does not fit 8 x {gpu.name} for serving: weights "
                          f"{est.weights_bytes / 2**30:.1f} GiB per GPU + one sequence's KV "
                          f"cache > {est.usable_bytes / 2**30:.1f} GiB usable")


def max_rate_at_slo(r: ReplicaTerms, prompt_tokens: int, output_tokens: int, max_batch: int,
                    max_rps: float, assumptions: ServingAssumptions, slo_ttft_s: float | None,
                    slo_tpot_s: float | None) -> float:
    """The highest request rate whose p95 TTFT and TPOT meet the SLOs (0 if none does).

    Latencies grow with the rate, so bisection finds the boundary.
    """
    def meets(rate: float) -> bool:
        lat = latency_at_load(r, rate, prompt_tokens, output_tokens, max_batch, max_rps,
                              assumptions)
        ok = True
        if slo_ttft_s is not None:
            ok = ok and float(lat.ttft_p95_s) <= slo_ttft_s
        if slo_tpot_s is not None:
            ok = ok and float(lat.tpot_p95_s) <= slo_tpot_s
        return ok

    if not meets(1e-9 * max_rps):
        return 0.0
    lo, hi = 1e-9 * max_rps, max_rps
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if meets(mid):
            lo = mid
        else:
            hi = mid
    return lo


def estimate_serving(arch: Architecture, gpu: GpuSpec, *, engine: ServingEngine,
                     precision: Dtype, quant: Quant, kv_dtype: Dtype | None,
                     prompt_tokens: int, output_tokens: int, batch: int, tp: int | None,
                     rate_requests_per_s: float | None, slo_ttft_s: float | None,
                     slo_tpot_s: float | None, price_usd_per_gpu_hour: float,
                     assumptions: ServingAssumptions,
                     policy: HeadroomPolicy = DEFAULT_POLICY,
                     context_tokens: int | None = None) -> ServingEstimate:
    """Throughput, latency, SLO capacity, replicas and cost per token of serving ``arch``.

    ``context_tokens`` is the KV-cache room reserved per sequence (default prompt + output,
    capped at the model's maximum positions).

    Raises:
        InputError: non-positive token counts, rate or SLO; an invalid tp.
        InfeasibleError: the model does not fit, or ``batch`` sequences overflow the KV cache.
    """
    for flag, value in (("--prompt-tokens", prompt_tokens), ("--output-tokens", output_tokens),
                        ("--batch", batch)):
        if value < 1:
            raise InputError("", flag, f"must be >= 1 (got {value})")
    for flag, fvalue in (("--rate", rate_requests_per_s), ("--slo-ttft-s", slo_ttft_s),
                         ("--slo-tpot-s", slo_tpot_s)):
        if fvalue is not None and not fvalue > 0:
            raise InputError("", flag, f"must be > 0 (got {fvalue:g})")
    if price_usd_per_gpu_hour < 0:
        raise InputError("", "--price-usd-per-gpu-hour",
                         f"must be >= 0 (got {price_usd_per_gpu_hour:g})")
    profile = assumptions.engine(engine)
    engine_policy = replace(policy, infer_utilization=profile.memory_utilization)
    if context_tokens is not None and context_tokens < 1:
        raise InputError("", "--context", f"must be >= 1 (got {context_tokens})")
    context = context_tokens or min(prompt_tokens + output_tokens, arch.max_position_embeddings)
    setup = InferenceSetup(precision=precision, layout=ParallelLayout(tp=tp or 1), batch=1,
                           context_tokens=context, kv_dtype=kv_dtype, quant=quant)
    if tp is None:
        tp = smallest_tp(arch, gpu, setup, engine_policy)
        setup = replace(setup, layout=ParallelLayout(tp=tp))
    r = replica_terms(arch, gpu, setup, profile, assumptions, engine_policy)
    kv_seqs = int(r.kv_capacity_tokens) // context
    if kv_seqs < 1:
        weights_gib = float(r.weight_bytes_per_gpu) / 2**30
        raise InfeasibleError(f"{arch.name} with tp={tp} on {gpu.name}: weights "
                              f"{weights_gib:.1f} GiB per GPU leave no KV cache for one "
                              f"{context}-token sequence (kv_cache overflows)")
    if batch > kv_seqs:
        raise InfeasibleError(f"--batch {batch} overflows the KV cache of {tp} x {gpu.name}: "
                              f"room for {kv_seqs} sequences of {context} tokens")
    max_batch = min(profile.max_batch, kv_seqs)
    mean_context = prompt_tokens + output_tokens / 2.0
    step_at_batch = float(decode_step_s(r, batch, mean_context))
    step_at_max = float(decode_step_s(r, max_batch, mean_context))
    work_s = float(prefill_work_s(r, prompt_tokens)) + output_tokens * step_at_max / max_batch
    max_rps = 1.0 / work_s
    prefill_s = float(prefill_latency_s(r, prompt_tokens))

    capacity = max_rps
    at_slo: float | None = None
    if slo_ttft_s is not None or slo_tpot_s is not None:
        at_slo = max_rate_at_slo(r, prompt_tokens, output_tokens, max_batch, max_rps,
                                 assumptions, slo_ttft_s, slo_tpot_s)
        capacity = at_slo
    replicas: int | None = None
    load: float | None = None
    warnings: list[str] = []
    if rate_requests_per_s is not None:
        replicas = math.ceil(rate_requests_per_s / capacity) if capacity > 0 else None
        if replicas is None:
            warnings.append("no request rate meets the SLO on this GPU: a faster GPU, more "
                            "tensor parallelism or a looser SLO is needed")
        else:
            load = rate_requests_per_s / replicas
    if load is not None:
        lat = latency_at_load(r, load, prompt_tokens, output_tokens, max_batch, max_rps,
                              assumptions)
        ttft, tpot = float(lat.ttft_s), float(lat.tpot_s)
        ttft95, tpot95 = float(lat.ttft_p95_s), float(lat.tpot_p95_s)
    else:
        ttft, tpot = prefill_s, step_at_batch
        ttft95, tpot95 = prefill_s + step_at_batch, step_at_batch
    replica_usd_per_s = price_usd_per_gpu_hour * tp / SECONDS_PER_HOUR
    if replicas is not None and rate_requests_per_s is not None:
        usd_per_s = replicas * replica_usd_per_s
        requests_per_s = rate_requests_per_s
    else:
        usd_per_s = replica_usd_per_s
        requests_per_s = capacity
    if requests_per_s > 0:
        per_output = usd_per_s / (requests_per_s * output_tokens) * 1e6
        per_token = usd_per_s / (requests_per_s * (prompt_tokens + output_tokens)) * 1e6
    else:
        per_output = per_token = math.inf
    use = float(r.weight_bytes_per_gpu + max_batch * context * r.kv_bytes_per_token_per_gpu) / (
        gpu.capacity_bytes * profile.memory_utilization)
    if max_batch == profile.max_batch and use < 0.3:
        warnings.append(f"GPU larger than the job needs: weights and a full batch use {use:.0%} "
                        f"of {gpu.name}'s memory")
    if max_batch < min(8, profile.max_batch):
        warnings.append(f"KV cache holds only {max_batch} sequences of {context} tokens: "
                        "throughput collapses on this GPU; more memory or TP helps")
    return ServingEstimate(
        model=arch.name, gpu=gpu.name, gpus_per_replica=tp, engine=engine,
        precision=precision, quant=quant, kv_dtype=setup.kv_cache_dtype,
        prompt_tokens=prompt_tokens, output_tokens=output_tokens, batch=batch,
        weights_bytes_per_gpu=int(r.weight_bytes_per_gpu),
        kv_bytes_per_token_per_gpu=int(r.kv_bytes_per_token_per_gpu),
        kv_capacity_tokens=int(r.kv_capacity_tokens), max_batch=max_batch,
        decode_step_s=step_at_batch, decode_tokens_per_s=1.0 / step_at_batch,
        prefill_s=prefill_s, output_tokens_per_s=max_rps * output_tokens,
        max_requests_per_s=max_rps, ttft_s=ttft, tpot_s=tpot, ttft_p95_s=ttft95,
        tpot_p95_s=tpot95, load_requests_per_s=load, slo_ttft_s=slo_ttft_s,
        slo_tpot_s=slo_tpot_s, max_requests_per_s_at_slo=at_slo,
        rate_requests_per_s=rate_requests_per_s, replicas_needed=replicas,
        price_usd_per_gpu_hour=price_usd_per_gpu_hour,
        cost_per_million_output_tokens_usd=per_output,
        cost_per_million_tokens_usd=per_token, warnings=tuple(warnings),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class BurstResult:
    """A finite batch of requests sent at once, run to completion (how serving benchmarks such
    as vLLM's ``benchmark_throughput`` measure "throughput")."""

    requests: int
    makespan_s: float
    requests_per_s: float
    output_tokens_per_s: float


def burst_throughput(r: ReplicaTerms, prompt_tokens: list[int], output_tokens: list[int],
                     max_batch: int) -> BurstResult:
    """Run requests of the given lengths through continuous batching, in order, all present at
    time 0: admit while a slot is free (prefill compute added to the iteration), then one
    decode step for every running sequence; finished sequences free their slot.

    Unlike the steady-state ``max_requests_per_s``, the result includes the drain at the end,
    when the longest requests run at a small batch; a benchmark of a few hundred requests with
    a heavy-tailed output length reports a figure well below the steady state.
    """
    if len(prompt_tokens) != len(output_tokens) or not prompt_tokens:
        raise InputError("", "requests", "need equal, non-empty prompt and output lengths")
    pending = list(zip(prompt_tokens, output_tokens, strict=True))
    pending.reverse()
    running: list[list[int]] = []  # [tokens left to generate, tokens cached]
    elapsed_s = 0.0
    while pending or running:
        while pending and len(running) < max_batch:
            prompt, output = pending.pop()
            elapsed_s += float(prefill_work_s(r, prompt))
            running.append([output, prompt])
        context = sum(seq[1] for seq in running) / len(running)
        elapsed_s += float(decode_step_s(r, len(running), context))
        for seq in running:
            seq[0] -= 1
            seq[1] += 1
        running = [seq for seq in running if seq[0] > 0]
    total_output = sum(output_tokens)
    return BurstResult(requests=len(prompt_tokens), makespan_s=elapsed_s,
                       requests_per_s=len(prompt_tokens) / elapsed_s,
                       output_tokens_per_s=total_output / elapsed_s)
