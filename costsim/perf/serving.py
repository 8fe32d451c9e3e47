"""``costsim estimate serve``: replica size, throughput, p95 latency, SLO capacity, $/token.

The formulas live beside this module: :mod:`costsim.perf.roofline` (decode and prefill time of
a replica, batch cap, peak request rate), :mod:`costsim.perf.latency` (latency at a load, rate
at an SLO) and :mod:`costsim.perf.burst` (finite benchmark replay). This module picks the TP
degree, checks the KV cache and assembles the estimate with its cost per token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.measurements import Basis
from costsim.domain.performance import ServingAssumptions
from costsim.domain.precision import Dtype
from costsim.domain.workload import InferenceSetup, ParallelLayout, Quant, ServingEngine
from costsim.errors import InfeasibleError, InputError
from costsim.memory.estimate import check_layout, estimate_inference, max_kv_tokens
from costsim.memory.runtime import DEFAULT_POLICY, LOW_MEMORY_USE, HeadroomPolicy
from costsim.perf.latency import latency_at_load, max_rate_at_slo
from costsim.perf.roofline import (
    decode_step_s,
    engine_kv_setup,
    max_batch_arrays,
    prefill_latency_s,
    prefill_work_s,
    replica_terms,
)
from costsim.perf.sizing import (
    MAX_REPLICAS,
    SizingBound,
    SloSource,
    capacity_under_rule,
    replicas_for_rate,
    sizing_rule,
    sizing_warnings,
)
from costsim.units import SECONDS_PER_HOUR, bytes_to_gib

TP_CHOICES = (1, 2, 4, 8)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingEstimate:
    """Everything ``costsim estimate serve`` reports (docs/performance.md)."""

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
    utilization: float | None
    slo_ttft_s: float | None
    slo_tpot_s: float | None
    slo_source: SloSource
    target_utilization: float
    sizing_rule: SizingBound
    slo_met: bool
    capacity_requests_per_s: float
    max_requests_per_s_at_slo: float | None
    rate_requests_per_s: float | None
    replicas_needed: int | None
    price_usd_per_gpu_hour: float
    cost_per_million_output_tokens_usd: float
    cost_per_million_tokens_usd: float
    warnings: tuple[str, ...]
    # where the throughput and capacity figures come from (DESIGN §12): the model alone, or
    # measured points (costsim.perf.measured_serving); latencies stay the model's
    basis: Basis = Basis.PREDICTED
    profile_source: str = ""
    measured_over_predicted: float | None = None  # sizing capacity, measured / predicted


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
                          f"{bytes_to_gib(est.weights_bytes):.1f} GiB per GPU + one sequence's KV "
                          f"cache > {bytes_to_gib(est.usable_bytes):.1f} GiB usable")


def check_generative(arch: Architecture) -> None:
    """Raise :class:`InputError` for an encoder-only model: it has no causal decoder, so it
    generates no tokens and there is no decode loop or KV cache to model."""
    if not arch.is_decoder:
        raise InputError("", "--model", f"{arch.name} is an encoder-only model and cannot "
                                        "generate tokens; estimate serve models text "
                                        "generation (use memory --task infer for one encoder "
                                        "forward pass)")


def check_request_tokens(arch: Architecture, prompt_tokens: int, output_tokens: int) -> None:
    """Raise :class:`InputError` when prompt + output tokens exceed the model's positions."""
    total = prompt_tokens + output_tokens
    if total > arch.max_position_embeddings:
        raise InputError("", "--prompt-tokens + --output-tokens",
                         f"must be at most the {arch.max_position_embeddings} positions of "
                         f"{arch.name} (got {prompt_tokens} + {output_tokens} = {total})")


def _check_price(price_usd_per_gpu_hour: float) -> None:
    if price_usd_per_gpu_hour < 0:
        raise InputError("", "--price-usd-per-gpu-hour",
                         f"must be >= 0 (got {price_usd_per_gpu_hour:g})")


def _cost_per_million_usd(price_usd_per_gpu_hour: float, tp: int, replicas: int | None,
                          rate_requests_per_s: float | None, capacity_requests_per_s: float,
                          prompt_tokens: int, output_tokens: int) -> tuple[float, float]:
    """(USD per million output tokens, per million prompt + output tokens): the replicas a
    rate needs at that rate, else one replica at the capacity its sizing rule allows (inf when
    that is 0)."""
    replica_usd_per_s = price_usd_per_gpu_hour * tp / SECONDS_PER_HOUR
    if replicas is not None and rate_requests_per_s is not None:
        usd_per_s = replicas * replica_usd_per_s
        requests_per_s = rate_requests_per_s
    else:
        usd_per_s = replica_usd_per_s
        requests_per_s = capacity_requests_per_s
    if requests_per_s <= 0:
        return math.inf, math.inf
    return (usd_per_s / (requests_per_s * output_tokens) * 1e6,
            usd_per_s / (requests_per_s * (prompt_tokens + output_tokens)) * 1e6)


def with_price(est: ServingEstimate, price_usd_per_gpu_hour: float) -> ServingEstimate:
    """``est`` priced at ``price_usd_per_gpu_hour``: only the price and the cost fields change
    (nothing else in a serving estimate depends on the price)."""
    _check_price(price_usd_per_gpu_hour)
    per_output, per_token = _cost_per_million_usd(
        price_usd_per_gpu_hour, est.gpus_per_replica, est.replicas_needed,
        est.rate_requests_per_s, est.capacity_requests_per_s, est.prompt_tokens,
        est.output_tokens)
    return replace(est, price_usd_per_gpu_hour=price_usd_per_gpu_hour,
                   cost_per_million_output_tokens_usd=per_output,
                   cost_per_million_tokens_usd=per_token)


def estimate_serving(arch: Architecture, gpu: GpuSpec, *, engine: ServingEngine,
                     precision: Dtype, quant: Quant, kv_dtype: Dtype | None,
                     prompt_tokens: int, output_tokens: int, batch: int, tp: int | None,
                     rate_requests_per_s: float | None, slo_ttft_s: float | None,
                     slo_tpot_s: float | None, price_usd_per_gpu_hour: float,
                     assumptions: ServingAssumptions,
                     policy: HeadroomPolicy = DEFAULT_POLICY,
                     context_tokens: int | None = None,
                     target_utilization: float | None = None) -> ServingEstimate:
    """Throughput, latency, SLO capacity, replicas and cost per token of serving ``arch``.

    ``context_tokens`` is the KV-cache room reserved per sequence (default prompt + output,
    capped at the model's maximum positions). Replicas are sized by
    :func:`costsim.perf.sizing.sizing_rule`: ``slo_ttft_s`` / ``slo_tpot_s`` when given, else
    the default SLO, and ``target_utilization`` (default ``assumptions.target_utilization``).

    Raises:
        InputError: an encoder-only model (it generates no tokens); non-positive token counts,
            rate or SLO; prompt + output beyond the model's positions or ``context_tokens``;
            an invalid tp.
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
    _check_price(price_usd_per_gpu_hour)
    check_generative(arch)
    check_request_tokens(arch, prompt_tokens, output_tokens)
    sequence = prompt_tokens + output_tokens
    if context_tokens is not None and context_tokens < sequence:
        raise InputError("", "--context", f"must hold prompt + output = {sequence} tokens "
                                          f"(got {context_tokens})")
    profile = assumptions.engine(engine)
    engine_policy = replace(policy, infer_utilization=profile.memory_utilization)
    context = context_tokens or sequence
    setup = engine_kv_setup(
        InferenceSetup(precision=precision, layout=ParallelLayout(tp=tp or 1), batch=1,
                       context_tokens=context, kv_dtype=kv_dtype, quant=quant), profile)
    if tp is None:
        tp = smallest_tp(arch, gpu, setup, engine_policy)
        setup = replace(setup, layout=ParallelLayout(tp=tp))
    r = replica_terms(arch, gpu, setup, profile, assumptions, engine_policy)
    kv_seqs = int(r.kv_capacity_tokens) // context
    if kv_seqs < 1:
        weights_gib = bytes_to_gib(float(r.weight_bytes_per_gpu))
        raise InfeasibleError(f"{arch.name} with tp={tp} on {gpu.name}: weights "
                              f"{weights_gib:.1f} GiB per GPU leave no KV cache for one "
                              f"{context}-token sequence (kv_cache overflows)")
    if batch > kv_seqs:
        raise InfeasibleError(f"--batch {batch} overflows the KV cache of {tp} x {gpu.name}: "
                              f"room for {kv_seqs} sequences of {context} tokens")
    # Paged engines admit by current use: a request holds prompt + output/2 on average
    # (roofline.max_batch_arrays); `--context` reserves room only where the engine reserves.
    max_batch = max(min(profile.max_batch, kv_seqs),
                    int(max_batch_arrays(r, prompt_tokens, output_tokens))
                    if context == sequence else 0)
    mean_context = prompt_tokens + output_tokens / 2.0
    step_at_batch = float(decode_step_s(r, batch, mean_context))
    step_at_max = float(decode_step_s(r, max_batch, mean_context))
    work_s = float(prefill_work_s(r, prompt_tokens)) + output_tokens * step_at_max / max_batch
    max_rps = 1.0 / work_s
    prefill_s = float(prefill_latency_s(r, prompt_tokens))

    rule = sizing_rule(assumptions, slo_ttft_s=slo_ttft_s, slo_tpot_s=slo_tpot_s,
                       target_utilization=target_utilization)
    at_slo = max_rate_at_slo(r, prompt_tokens, output_tokens, max_batch, max_rps, assumptions,
                             rule.slo_ttft_p95_s, rule.slo_tpot_p95_s)
    sized = capacity_under_rule(max_rps, at_slo, rule)
    capacity = sized.requests_per_s
    replicas: int | None = None
    load: float | None = None
    warnings: list[str] = sizing_warnings(rule, sized.slo_met)
    if rate_requests_per_s is not None and capacity > 0:
        if rate_requests_per_s / capacity > MAX_REPLICAS:
            raise InputError("", "--rate", f"needs more than {MAX_REPLICAS:,} replicas of "
                                           f"{capacity:.3g} req/s each (got "
                                           f"{rate_requests_per_s:g})")
        replicas = int(replicas_for_rate(rate_requests_per_s, capacity))
        load = rate_requests_per_s / replicas
    if load is not None:
        lat = latency_at_load(r, load, prompt_tokens, output_tokens, max_batch, max_rps,
                              assumptions)
        ttft, tpot = float(lat.ttft_s), float(lat.tpot_s)
        ttft95, tpot95 = float(lat.ttft_p95_s), float(lat.tpot_p95_s)
    else:
        ttft, tpot = prefill_s, step_at_batch
        ttft95, tpot95 = prefill_s + step_at_batch, step_at_batch
    per_output, per_token = _cost_per_million_usd(
        price_usd_per_gpu_hour, tp, replicas, rate_requests_per_s, capacity, prompt_tokens,
        output_tokens)
    use = float(r.weight_bytes_per_gpu + max_batch * context * r.kv_bytes_per_token_per_gpu) / (
        gpu.capacity_bytes * profile.memory_utilization)
    if max_batch == profile.max_batch and use < LOW_MEMORY_USE:
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
        tpot_p95_s=tpot95, load_requests_per_s=load,
        utilization=None if load is None else load / max_rps,
        slo_ttft_s=rule.slo_ttft_p95_s, slo_tpot_s=rule.slo_tpot_p95_s,
        slo_source=rule.slo_source, target_utilization=rule.target_utilization,
        sizing_rule=sized.bound, slo_met=sized.slo_met, capacity_requests_per_s=capacity,
        max_requests_per_s_at_slo=at_slo,
        rate_requests_per_s=rate_requests_per_s, replicas_needed=replicas,
        price_usd_per_gpu_hour=price_usd_per_gpu_hour,
        cost_per_million_output_tokens_usd=per_output,
        cost_per_million_tokens_usd=per_token, warnings=tuple(warnings),
    )


def latency_at_rate(arch: Architecture, gpu: GpuSpec, est: ServingEstimate,
                    assumptions: ServingAssumptions, rate_requests_per_s: float, *,
                    policy: HeadroomPolicy = DEFAULT_POLICY,
                    context_tokens: int | None = None) -> tuple[float, float, float, float]:
    """(TTFT, TPOT, p95 TTFT, p95 TPOT) the model predicts for one replica of ``est`` (a
    predicted estimate) at ``rate_requests_per_s``: the load a measured capacity puts on a
    replica, or the offered rate of a benchmark point."""
    profile = assumptions.engine(est.engine)
    engine_policy = replace(policy, infer_utilization=profile.memory_utilization)
    setup = InferenceSetup(precision=est.precision,
                           layout=ParallelLayout(tp=est.gpus_per_replica), batch=1,
                           context_tokens=context_tokens or est.prompt_tokens + est.output_tokens,
                           kv_dtype=est.kv_dtype, quant=est.quant)
    r = replica_terms(arch, gpu, setup, profile, assumptions, engine_policy)
    lat = latency_at_load(r, rate_requests_per_s, est.prompt_tokens, est.output_tokens,
                          est.max_batch, est.max_requests_per_s, assumptions)
    return (float(lat.ttft_s), float(lat.tpot_s), float(lat.ttft_p95_s), float(lat.tpot_p95_s))
