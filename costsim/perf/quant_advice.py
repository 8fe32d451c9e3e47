"""Quantization advice for serving: a weight or KV-cache format that serves the same load on
markedly fewer GPUs of the same type, meets an SLO the asked format cannot, or fits where the
asked format does not.

Every candidate is a full estimate by the same engine (:func:`costsim.perf.serving.
estimate_serving`, same GPU, engine, request and sizing rule), so the advice follows from the
roofline — fewer weight bytes to read per decode step, more KV-cache room beside the weights,
FP8 tensor-core peak where the GPU has one, a smaller TP degree — not from a rule of thumb.
Candidates, least lossy first: an FP8 KV cache; FP8 weights and activations (W8A8); INT8
weights; INT4 weights; then each weight format with an FP8 KV cache (the FP8 ones only on GPUs
with FP8 tensor cores).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from costsim.domain.gpu import GpuSpec
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant
from costsim.errors import CostsimError, InfeasibleError
from costsim.perf.serving import ServingEstimate
from costsim.perf.sizing import replicas_for_rate

# Advice needs a saving the model can tell apart: its serving validation rows sit within
# ±20 % (docs/performance.md §4), so a format must need at most 80 % of the GPUs.
MIN_GPU_SAVING = 0.20


@dataclass(frozen=True, slots=True, kw_only=True)
class QuantCandidate:
    """A serving format to try, with the flags that select it."""

    precision: Dtype
    quant: Quant
    kv_dtype: Dtype | None
    flags: str


@dataclass(frozen=True, slots=True, kw_only=True)
class QuantOption:
    """A candidate's estimate and the GPUs it needs for the reference rate."""

    candidate: QuantCandidate
    estimate: ServingEstimate
    gpus: int | None


EstimateFn = Callable[[QuantCandidate], ServingEstimate]


def quantization_candidates(gpu: GpuSpec, precision: Dtype, quant: Quant,
                            kv_dtype: Dtype | None) -> tuple[QuantCandidate, ...]:
    """The formats to compare with the asked one (it excluded), least lossy first."""
    has_fp8 = gpu.dense_tflops(Dtype.FP8) is not None
    weights: list[tuple[Dtype, Quant, str]] = [(precision, quant, "")]
    if has_fp8:
        weights.append((Dtype.FP8, Quant.FP8, "--precision fp8 --quant fp8"))
    weights += [(precision, Quant.INT8, "--quant int8"), (precision, Quant.INT4, "--quant int4")]
    ordered = [(p, q, kv_dtype, f) for p, q, f in weights]
    # An FP8 KV cache only where the GPU has FP8 (Ada, Hopper, Blackwell, CDNA3): engines
    # support it there first, so the advice stays something a user can run.
    if has_fp8:
        kv_fp8 = "--kv-dtype fp8"
        ordered.insert(1, (precision, quant, Dtype.FP8, kv_fp8))
        ordered += [(p, q, Dtype.FP8, f"{f} {kv_fp8}") for p, q, f in weights[1:]]
    # Compared by the KV dtype in effect: unset is the compute precision for 16-bit weights;
    # for FP8 weights and activations it is the engine's default (16-bit in vLLM, SGLang and
    # TGI, FP8 in TensorRT-LLM: EngineProfile.fp8_kv_cache), so FP8 W8A8 is tried with and
    # without an FP8 KV cache and _options drops an estimate already seen.
    def in_effect(p: Dtype, kv: Dtype | None) -> Dtype | None:
        return kv if p is Dtype.FP8 else (kv or p)

    seen = {(precision, quant, in_effect(precision, kv_dtype))}
    found: list[QuantCandidate] = []
    for p, q, kv, flags in ordered:
        if (p, q, in_effect(p, kv)) in seen:
            continue
        seen.add((p, q, in_effect(p, kv)))
        found.append(QuantCandidate(precision=p, quant=q, kv_dtype=kv, flags=flags.strip()))
    return tuple(found)


def _gpus_for(est: ServingEstimate, rate_requests_per_s: float | None) -> int | None:
    if rate_requests_per_s is None or est.capacity_requests_per_s <= 0:
        return None
    return int(replicas_for_rate(rate_requests_per_s, est.capacity_requests_per_s)) * (
        est.gpus_per_replica)


def _options(estimate: EstimateFn, candidates: Sequence[QuantCandidate],
             rate_requests_per_s: float | None) -> list[QuantOption]:
    options = []
    formats: set[tuple[Dtype, Quant, Dtype]] = set()
    for candidate in candidates:
        try:
            est = estimate(candidate)
        except CostsimError:  # does not fit, or a precision the GPU lacks: not a candidate
            continue
        # the same format in effect (an FP8 KV cache asked where the engine keeps one anyway)
        if (est.precision, est.quant, est.kv_dtype) in formats:
            continue
        formats.add((est.precision, est.quant, est.kv_dtype))
        options.append(QuantOption(candidate=candidate, estimate=est,
                                   gpus=_gpus_for(est, rate_requests_per_s)))
    return options


def _gpu_seconds_per_request(est: ServingEstimate) -> float:
    return est.gpus_per_replica / est.capacity_requests_per_s


def better_quantizations(asked: ServingEstimate, estimate: EstimateFn,
                         candidates: Sequence[QuantCandidate]) -> tuple[QuantOption, ...]:
    """The candidates to advise over ``asked``: the least lossy one that qualifies and, when
    another saves more, the one that saves most (empty when none qualifies).

    Where ``asked`` misses its SLO at every load, a candidate qualifies by meeting it. Otherwise
    it must meet the SLO too and need at most 80 % of the GPUs: for ``asked``'s rate (whole
    replicas), or without a rate, GPU time per request at the sized load.
    """
    options = _options(estimate, candidates, asked.rate_requests_per_s)
    if not asked.slo_met:
        qualifying = [o for o in options if o.estimate.slo_met]
    elif asked.rate_requests_per_s is not None:
        asked_gpus = _gpus_for(asked, asked.rate_requests_per_s)
        qualifying = [o for o in options if o.estimate.slo_met and o.gpus is not None
                      and asked_gpus is not None
                      and o.gpus <= (1 - MIN_GPU_SAVING) * asked_gpus]
    else:
        limit = (1 - MIN_GPU_SAVING) * _gpu_seconds_per_request(asked)
        qualifying = [o for o in options if o.estimate.slo_met
                      and _gpu_seconds_per_request(o.estimate) <= limit]
    if not qualifying:
        return ()

    def cost(option: QuantOption) -> float:
        if option.gpus is not None:
            return float(option.gpus)
        if option.estimate.capacity_requests_per_s > 0:
            return _gpu_seconds_per_request(option.estimate)
        return float("inf")

    least_lossy = qualifying[0]
    cheapest = min(qualifying, key=cost)  # min keeps the first (least lossy) of equals
    return (least_lossy,) if cheapest is least_lossy else (least_lossy, cheapest)


def first_fitting(estimate: EstimateFn,
                  candidates: Sequence[QuantCandidate]) -> QuantOption | None:
    """The least lossy candidate that fits at all (for a configuration that does not)."""
    for candidate in candidates:
        fitting = _options(estimate, [candidate], None)
        if fitting:
            return fitting[0]
    return None


def _count(n: int | None, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def describe(option: QuantOption, asked: ServingEstimate | None) -> str:
    """One advice line: the flags to try and what they give, with the quality caveat."""
    est = option.estimate
    replica = f"{est.gpus_per_replica} x {est.gpu} per replica"
    latency = (f"p95 TTFT {est.ttft_p95_s:.2f} s, TPOT {est.tpot_p95_s * 1000:.0f} ms"
               if est.load_requests_per_s is not None else "")
    caveat = "check output quality on your own evaluations"
    if asked is None:
        return f"{option.candidate.flags} fits: {replica}; {caveat}"
    if not asked.slo_met:
        what = (f"meets the SLO up to {est.max_requests_per_s_at_slo:.2f} req/s per replica "
                f"({replica})")
    elif asked.rate_requests_per_s is not None:
        asked_gpus = _gpus_for(asked, asked.rate_requests_per_s)
        what = (f"serves {asked.rate_requests_per_s:g} req/s on {_count(option.gpus, 'GPU')} "
                f"instead of {asked_gpus} ({replica}" + (f"; {latency}" if latency else "")
                + ")")
    else:
        saving = 1 - _gpu_seconds_per_request(est) / _gpu_seconds_per_request(asked)
        what = (f"takes {est.capacity_requests_per_s:.2f} req/s per replica of "
                f"{est.gpus_per_replica} x {est.gpu} against {asked.capacity_requests_per_s:.2f}"
                f" on {asked.gpus_per_replica}: {saving:.0%} less GPU time per request")
    return f"{option.candidate.flags} {what}; {caveat}"


def estimate_with_advice(estimate: EstimateFn, asked: QuantCandidate,
                         candidates: Sequence[QuantCandidate]
                         ) -> tuple[ServingEstimate, tuple[str, ...]]:
    """The estimate of ``asked`` and its advice lines (:func:`better_quantizations`).

    Raises:
        InfeasibleError: ``asked`` does not fit; the message names the least lossy candidate
            that does, if any.
    """
    try:
        est = estimate(asked)
    except InfeasibleError as exc:
        fitting = first_fitting(estimate, candidates)
        if fitting is None:
            raise
        raise InfeasibleError(f"{exc}; {describe(fitting, None)}") from None
    return est, tuple(describe(option, est)
                      for option in better_quantizations(est, estimate, candidates))
