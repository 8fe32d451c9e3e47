"""Quantization advice: candidates, and advice computed by the serving engine itself."""

from __future__ import annotations

import functools

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant, ServingEngine
from costsim.errors import InfeasibleError
from costsim.perf.quant_advice import (
    QuantCandidate,
    better_quantizations,
    describe,
    first_fitting,
    quantization_candidates,
)
from costsim.perf.serving import ServingEstimate, estimate_serving


def _estimate(defaults: PerfDefaults, model: str, gpu: str, candidate: QuantCandidate,
              **kw: object) -> ServingEstimate:
    args: dict[str, object] = {
        "engine": ServingEngine.VLLM, "prompt_tokens": 512, "output_tokens": 256, "batch": 1,
        "tp": None, "rate_requests_per_s": None, "slo_ttft_s": None, "slo_tpot_s": None,
        "price_usd_per_gpu_hour": 0.0, "assumptions": defaults.serving}
    args.update(kw)
    return estimate_serving(load_preset(model).architecture, get_gpu(gpu),  # type: ignore[arg-type]
                            precision=candidate.precision, quant=candidate.quant,
                            kv_dtype=candidate.kv_dtype, **args)


def _asked(precision: Dtype = Dtype.BF16) -> QuantCandidate:
    return QuantCandidate(precision=precision, quant=Quant.NONE, kv_dtype=None, flags="")


def test_candidates_least_lossy_first_without_the_asked_format() -> None:
    h100 = quantization_candidates(get_gpu("H100"), Dtype.BF16, Quant.NONE, None)
    assert [c.flags for c in h100] == [
        "--kv-dtype fp8", "--precision fp8 --quant fp8", "--quant int8", "--quant int4",
        "--precision fp8 --quant fp8 --kv-dtype fp8", "--quant int8 --kv-dtype fp8",
        "--quant int4 --kv-dtype fp8"]
    # FP8 W8A8 keeps the engine's default KV cache (bf16 in vLLM, SGLang and TGI: issue 18's
    # fourth serving round), so it is tried with an FP8 KV cache too; asked for FP8 W8A8, its
    # FP8-KV variant comes first and the asked format is not offered back.
    fp8 = quantization_candidates(get_gpu("H100"), Dtype.FP8, Quant.FP8, None)
    assert fp8[0].flags == "--kv-dtype fp8"
    assert "--precision fp8 --quant fp8" not in [c.flags for c in fp8]
    # No FP8 tensor cores, no FP8 candidates.
    a100 = quantization_candidates(get_gpu("A100-80GB"), Dtype.BF16, Quant.NONE, None)
    assert [c.flags for c in a100] == ["--quant int8", "--quant int4"]
    asked_int4 = quantization_candidates(get_gpu("A100-80GB"), Dtype.BF16, Quant.INT4, None)
    assert [c.flags for c in asked_int4] == ["--quant int8"]


def test_issue8_example_gets_fp8_advice_from_the_engine(defaults: PerfDefaults) -> None:
    """llama-3-8b on H100 at 30 req/s needs 2 bf16 replicas; FP8 weights, activations and KV
    cache serve it on one. (Issue 8's example was 36 req/s, when one bf16 replica peaked at
    36.1 req/s and FP8 W8A8 alone served it; since issue 18's fourth serving round vLLM's
    decode attention and its bf16 KV cache under FP8 weights make it 26.5 and 47.9 req/s.)"""
    estimate = functools.partial(_estimate, defaults, "llama-3-8b", "H100",
                                 rate_requests_per_s=30.0)
    asked = estimate(_asked())
    assert asked.replicas_needed == 2
    options = better_quantizations(asked, estimate,
                                   quantization_candidates(get_gpu("H100"), Dtype.BF16,
                                                           Quant.NONE, None))
    assert options
    best = options[0]
    assert best.candidate.flags == "--precision fp8 --quant fp8 --kv-dtype fp8"
    assert best.gpus == 1
    # The option is the engine's own estimate for those flags, not a rule of thumb.
    assert best.estimate == estimate(best.candidate)
    assert best.estimate.slo_met
    line = describe(best, asked)
    assert line.startswith("--precision fp8 --quant fp8 --kv-dtype fp8 serves 30 req/s on 1 GPU "
                           "instead of 2")
    assert "quality" in line


def test_slo_the_asked_format_cannot_meet(defaults: PerfDefaults) -> None:
    """On an L4, bf16 llama-3-8b cannot decode at 50 ms per token; quantized weights can."""
    estimate = functools.partial(_estimate, defaults, "llama-3-8b", "L4", slo_tpot_s=0.05)
    asked = estimate(_asked())
    assert not asked.slo_met
    options = better_quantizations(asked, estimate,
                                   quantization_candidates(get_gpu("L4"), Dtype.BF16,
                                                           Quant.NONE, None))
    assert options
    assert all(o.estimate.slo_met for o in options)
    assert "meets the SLO" in describe(options[0], asked)


def test_no_advice_when_nothing_saves_a_fifth(defaults: PerfDefaults) -> None:
    asked_format = QuantCandidate(precision=Dtype.FP8, quant=Quant.FP8, kv_dtype=None, flags="")
    estimate = functools.partial(_estimate, defaults, "llama-3-8b", "H100",
                                 rate_requests_per_s=1.0)
    asked = estimate(asked_format)
    candidates = quantization_candidates(get_gpu("H100"), Dtype.FP8, Quant.FP8, None)
    assert better_quantizations(asked, estimate, candidates) == ()


def test_a_model_that_does_not_fit_gets_the_least_lossy_format_that_does(
        defaults: PerfDefaults) -> None:
    estimate = functools.partial(_estimate, defaults, "llama-3-70b", "T4")
    with pytest.raises(InfeasibleError):
        estimate(_asked(Dtype.FP16))
    fitting = first_fitting(estimate, quantization_candidates(get_gpu("T4"), Dtype.FP16,
                                                              Quant.NONE, None))
    assert fitting is not None
    assert fitting.candidate.flags == "--quant int8"
    assert describe(fitting, None).startswith("--quant int8 fits: 8 x T4 per replica")
