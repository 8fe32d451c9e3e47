"""Serving: roofline decode, continuous batching, latency at load, SLO capacity, cost."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from costsim.catalog.gpus import get_gpu
from costsim.domain.architecture import Architecture
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import InferenceSetup, ParallelLayout, Quant, ServingEngine
from costsim.errors import InfeasibleError, InputError
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.perf.latency import latency_at_load
from costsim.perf.roofline import decode_step_s, replica_terms
from costsim.perf.serving import ServingEstimate, estimate_serving, with_price
from tests.perf.conftest import arch


def _serve(defaults: PerfDefaults, model: str | Architecture = "llama-3-8b", gpu: str = "H100",
           **kw: object) -> ServingEstimate:
    """``estimate_serving`` with the CLI defaults; ``model``: a test architecture or its name."""
    args: dict[str, object] = {
        "engine": ServingEngine.VLLM, "precision": Dtype.BF16, "quant": Quant.NONE,
        "kv_dtype": None, "prompt_tokens": 512, "output_tokens": 256, "batch": 1, "tp": None,
        "rate_requests_per_s": None, "slo_ttft_s": None, "slo_tpot_s": None,
        "price_usd_per_gpu_hour": 2.0, "assumptions": defaults.serving}
    args.update(kw)
    model_arch = arch(model) if isinstance(model, str) else model
    return estimate_serving(model_arch, get_gpu(gpu), **args)  # type: ignore[arg-type]


def _terms(defaults: PerfDefaults, gpu: str = "H100") -> object:
    setup = InferenceSetup(precision=Dtype.BF16, layout=ParallelLayout(), context_tokens=768)
    return replica_terms(arch("llama-3-8b"), get_gpu(gpu), setup,
                         defaults.serving.engine(ServingEngine.VLLM), defaults.serving,
                         DEFAULT_POLICY)


def test_batch1_decode_is_bandwidth_bound(defaults: PerfDefaults) -> None:
    est = _serve(defaults)
    weights_s = est.weights_bytes_per_gpu / (3350e9 * 0.75)
    assert est.decode_step_s == pytest.approx(weights_s, rel=0.05)


def test_decode_vectorized_equals_scalar(defaults: PerfDefaults) -> None:
    terms = _terms(defaults)
    batches = np.array([1, 8, 64, 256])
    vector = decode_step_s(terms, batches, 600.0)  # type: ignore[arg-type]
    assert [float(decode_step_s(terms, int(b), 600.0)) for b in batches] == pytest.approx(
        list(vector))  # type: ignore[arg-type]
    assert np.all(np.diff(vector) > 0)
    assert np.all(np.diff(batches / vector) > 0)  # throughput still grows with the batch


def test_l2_roofline_matches_vidur_h100_profile_near_the_knee() -> None:
    """Vidur's H100 profile of Llama-2-7B linear layers (405 MB BF16 per layer): 0.156 ms at
    1 token, 0.180 ms at 128, 0.329 ms at 512 (reference §1.3); the L2 roofline with 77 % of
    HBM and 76 % of peak reproduces them within 6 %."""
    mem_s = 405e6 / (3350e9 * 0.77)
    for tokens, measured_ms in ((1, 0.156), (128, 0.180), (512, 0.329)):
        comp_s = tokens * 2 * 202.4e6 / (989e12 * 0.76)
        assert math.hypot(mem_s, comp_s) * 1e3 == pytest.approx(measured_ms, rel=0.06)


def test_max_batch_limited_by_engine_or_kv_cache(defaults: PerfDefaults) -> None:
    roomy = _serve(defaults)
    assert roomy.max_batch == 256  # vLLM's max_num_seqs
    tight = _serve(defaults, model="llama-2-13b", gpu="A100", precision=Dtype.FP16,
                   prompt_tokens=2000, output_tokens=2000)
    # paged KV (issue 18): a running request holds prompt + output/2 = 3000 tokens on average
    assert tight.max_batch == tight.kv_capacity_tokens // 3000 < 256


def test_latency_grows_with_load_and_slo_capacity_below_max(defaults: PerfDefaults) -> None:
    est = _serve(defaults, slo_ttft_s=0.5, slo_tpot_s=0.03)
    assert est.max_requests_per_s_at_slo is not None
    assert 0 < est.max_requests_per_s_at_slo <= est.max_requests_per_s
    terms = _terms(defaults)
    rates = np.linspace(0.1, 0.95, 8) * est.max_requests_per_s
    lat = latency_at_load(terms, rates, 512, 256, est.max_batch,  # type: ignore[arg-type]
                          est.max_requests_per_s, defaults.serving)
    assert np.all(np.diff(lat.ttft_p95_s) > 0)
    assert np.all(np.diff(lat.tpot_p95_s) > 0)
    assert np.all(lat.ttft_p95_s >= lat.ttft_s)
    assert np.all(lat.tpot_p95_s >= lat.tpot_s)


def test_tight_slo_cannot_be_met(defaults: PerfDefaults) -> None:
    est = _serve(defaults, slo_tpot_s=0.001, rate_requests_per_s=5.0)
    assert est.max_requests_per_s_at_slo == 0
    assert est.replicas_needed is None
    assert any("SLO" in w for w in est.warnings)


def test_replicas_and_cost_per_token(defaults: PerfDefaults) -> None:
    est = _serve(defaults, rate_requests_per_s=100.0)
    assert est.replicas_needed == math.ceil(100.0 / est.capacity_requests_per_s)
    usd_per_s = est.replicas_needed * 2.0 / 3600
    assert est.cost_per_million_output_tokens_usd == pytest.approx(usd_per_s / (100 * 256) * 1e6)
    assert est.cost_per_million_tokens_usd == pytest.approx(usd_per_s / (100 * 768) * 1e6)


def test_cost_without_rate_is_at_the_sized_capacity(defaults: PerfDefaults) -> None:
    """Without --rate, a replica is priced at the load its sizing rule lets it take (70 % of
    its maximum by default), not at 100 %."""
    est = _serve(defaults)
    assert est.capacity_requests_per_s == pytest.approx(0.70 * est.max_requests_per_s)
    assert est.cost_per_million_output_tokens_usd == pytest.approx(
        2.0 / 3600 / (est.capacity_requests_per_s * 256) * 1e6)


def test_big_model_gets_tensor_parallel_replicas(defaults: PerfDefaults) -> None:
    from costsim.catalog.models import load_preset

    model = load_preset("llama-2-70b").architecture
    est = _serve(defaults, model, "A100-80GB", price_usd_per_gpu_hour=1.0)
    assert est.gpus_per_replica == 2
    with pytest.raises(InfeasibleError, match="kv_cache"):
        estimate_serving(model, get_gpu("A100-80GB"), engine=ServingEngine.VLLM,
                         precision=Dtype.BF16, quant=Quant.NONE, kv_dtype=None,
                         prompt_tokens=512, output_tokens=256, batch=1, tp=1,
                         rate_requests_per_s=None, slo_ttft_s=None, slo_tpot_s=None,
                         price_usd_per_gpu_hour=1.0, assumptions=defaults.serving)


def test_model_too_big_for_any_tp(defaults: PerfDefaults) -> None:
    from costsim.catalog.models import load_preset

    with pytest.raises(InfeasibleError, match="does not fit 8 x T4"):
        estimate_serving(load_preset("llama-3.1-405b").architecture, get_gpu("T4"),
                         engine=ServingEngine.VLLM, precision=Dtype.FP16, quant=Quant.NONE,
                         kv_dtype=None, prompt_tokens=512, output_tokens=256, batch=1, tp=None,
                         rate_requests_per_s=None, slo_ttft_s=None, slo_tpot_s=None,
                         price_usd_per_gpu_hour=1.0, assumptions=defaults.serving)


def test_batch_beyond_kv_capacity_is_infeasible(defaults: PerfDefaults) -> None:
    with pytest.raises(InfeasibleError, match="overflows the KV cache"):
        _serve(defaults, batch=100_000)


def test_bad_numbers_are_input_errors(defaults: PerfDefaults) -> None:
    with pytest.raises(InputError, match="--output-tokens"):
        _serve(defaults, output_tokens=0)
    with pytest.raises(InputError, match="--rate"):
        _serve(defaults, rate_requests_per_s=-1.0)


def test_quantized_weights_decode_faster(defaults: PerfDefaults) -> None:
    bf16 = _serve(defaults)
    int4 = _serve(defaults, quant=Quant.INT4)
    assert int4.weights_bytes_per_gpu < 0.4 * bf16.weights_bytes_per_gpu
    assert int4.decode_tokens_per_s > 2 * bf16.decode_tokens_per_s


def test_moe_reads_only_touched_experts_at_batch_1(defaults: PerfDefaults) -> None:
    from costsim.catalog.models import load_preset

    model = load_preset("mixtral-8x7b").architecture
    est = _serve(defaults, model, "H100", price_usd_per_gpu_hour=1.0)
    all_weights_s = est.weights_bytes_per_gpu / (3350e9 * 0.75)
    assert est.decode_step_s < all_weights_s


def test_replicas_on_different_gpus_in_one_call(defaults: PerfDefaults) -> None:
    from costsim.perf.roofline import max_throughput_arrays, stack_replicas

    engine = defaults.serving.engine(ServingEngine.VLLM)
    names = ("H100", "A100-80GB", "L40S", "L4")
    replicas = []
    for name in names:
        setup = InferenceSetup(precision=Dtype.BF16, layout=ParallelLayout(),
                               context_tokens=768)
        replicas.append(replica_terms(arch("llama-3-8b"), get_gpu(name), setup, engine,
                                      defaults.serving, DEFAULT_POLICY))
    stacked = stack_replicas(replicas)
    vector = max_throughput_arrays(stacked, 512, 256)
    scalar = [_serve(defaults, gpu=name).max_requests_per_s for name in names]
    assert list(vector) == pytest.approx(scalar, rel=1e-9)
    assert vector[0] > vector[1] > vector[3]  # H100 > A100 > L4


def test_rate_at_exact_capacity_needs_one_replica_and_is_not_overloaded(
        defaults: PerfDefaults) -> None:
    base = _serve(defaults)
    est = _serve(defaults, rate_requests_per_s=base.capacity_requests_per_s)
    assert est.replicas_needed == 1
    lat = latency_at_load(_terms(defaults), base.max_requests_per_s,  # type: ignore[arg-type]
                          512, 256, base.max_batch, base.max_requests_per_s, defaults.serving)
    assert not lat.overloaded
    assert math.isfinite(float(lat.ttft_p95_s))
    assert math.isfinite(float(lat.tpot_p95_s))


@pytest.mark.parametrize(("kw", "needle"), [
    ({"model": "bert-base-uncased"}, "encoder-only"),
    ({"prompt_tokens": 8000, "output_tokens": 256}, "8192 positions"),
    ({"context_tokens": 700}, "--context: must hold prompt + output = 768"),
])
def test_requests_the_model_cannot_run_are_input_errors(defaults: PerfDefaults,
                                                        kw: dict[str, object],
                                                        needle: str) -> None:
    with pytest.raises(InputError, match=re.escape(needle)):
        _serve(defaults, **kw)


@pytest.mark.parametrize("kw", [
    {},
    {"rate_requests_per_s": 20.0},
    {"rate_requests_per_s": 20.0, "slo_ttft_s": 1.0, "slo_tpot_s": 0.05},
    {"slo_tpot_s": 0.05},
])
def test_pricing_an_estimate_equals_estimating_at_that_price(defaults: PerfDefaults,
                                                             kw: dict[str, float]) -> None:
    """``with_price`` (the CLI prices after sizing the replica) changes exactly what
    ``estimate_serving`` at that price would."""
    assert with_price(_serve(defaults, price_usd_per_gpu_hour=0.0, **kw), 3.7) == _serve(
        defaults, price_usd_per_gpu_hour=3.7, **kw)
    with pytest.raises(InputError, match="--price-usd-per-gpu-hour"):
        with_price(_serve(defaults, **kw), -1.0)
