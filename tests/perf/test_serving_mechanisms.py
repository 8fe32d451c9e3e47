"""The mechanisms of issue 18's serving model, one at a time (costsim/perf/roofline.py,
latency.py): host time per step that grows with the batch, eager kernel issue, tensor-parallel
all-reduce latency, paged KV residency, prefill/decode interference with and without chunked
prefill, weight-only dequantization per kernel family, bandwidth efficiency per memory class and
compute-bound decode at large batch on small cards."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.performance import EngineProfile, PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import InferenceSetup, ParallelLayout, Quant, ServingEngine
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.perf.flops import forward_flops_per_token
from costsim.perf.latency import closed_loop
from costsim.perf.roofline import (
    ReplicaTerms,
    decode_step_s,
    host_overhead_s,
    is_gddr,
    max_batch_arrays,
    prefill_latency_s,
    prefill_work_s,
    replica_terms,
)
from costsim.perf.serving import estimate_serving


def _terms(defaults: PerfDefaults, *, gpu: str = "H100", engine: ServingEngine = ServingEngine.VLLM,
           model: str = "llama-2-7b", tp: int = 1, precision: Dtype = Dtype.FP16,
           quant: Quant = Quant.NONE, profile: EngineProfile | None = None,
           context: int = 2048) -> ReplicaTerms:
    setup = InferenceSetup(precision=precision, layout=ParallelLayout(tp=tp),
                           context_tokens=context, quant=quant)
    chosen = profile or defaults.serving.engine(engine)
    policy = replace(DEFAULT_POLICY, infer_utilization=chosen.memory_utilization)
    return replica_terms(load_preset(model).architecture, get_gpu(gpu), setup, chosen,
                         defaults.serving, policy)


def _without_host(defaults: PerfDefaults, engine: ServingEngine) -> EngineProfile:
    return replace(defaults.serving.engine(engine), step_overhead_s=0.0,
                   step_overhead_per_seq_s=0.0, launch_s_per_layer=0.0)


def test_host_time_per_step_grows_with_the_batch(defaults: PerfDefaults) -> None:
    profile = replace(defaults.serving.engine(ServingEngine.VLLM), step_overhead_s=1e-3,
                      step_overhead_per_seq_s=50e-6)
    with_host = _terms(defaults, profile=profile)
    bare = _terms(defaults, profile=_without_host(defaults, ServingEngine.VLLM))
    batches = np.array([1.0, 16.0, 64.0, 256.0])
    extra = decode_step_s(with_host, batches, 500.0) - decode_step_s(bare, batches, 500.0)
    assert extra == pytest.approx(1e-3 + 50e-6 * batches)
    assert np.all(np.diff(extra) > 0)
    assert float(host_overhead_s(with_host, 0.0)) == pytest.approx(1e-3)


def test_shipped_host_time_per_engine(defaults: PerfDefaults) -> None:
    """TensorRT-LLM's fitted host time per step is paid at every batch; vLLM (v0.6 multi-step
    scheduling, asynchronous output) and SGLang (overlap scheduler) hide theirs."""
    trt = _terms(defaults, engine=ServingEngine.TENSORRT_LLM)
    assert float(host_overhead_s(trt, 64)) >= float(host_overhead_s(trt, 1)) > 0
    for engine in (ServingEngine.VLLM, ServingEngine.SGLANG):
        assert float(host_overhead_s(_terms(defaults, engine=engine), 256)) == 0.0


def test_eager_engine_is_host_bound_where_the_gpu_is_fast(defaults: PerfDefaults) -> None:
    """TGI 1.x issues each layer's kernels from Python: a 7B model split 8 ways on A100s
    leaves the GPU waiting on the host, one A10G holding the whole model is GPU-bound."""
    tgi = defaults.serving.engine(ServingEngine.TGI)
    assert tgi.launch_s_per_layer > 0
    layers = load_preset("llama-2-7b").architecture.num_layers
    tp8 = _terms(defaults, gpu="A100", engine=ServingEngine.TGI, tp=8)
    bare8 = _terms(defaults, gpu="A100", tp=8, profile=_without_host(defaults, ServingEngine.TGI))
    step8 = float(decode_step_s(tp8, 1, 300.0))
    assert step8 >= layers * tgi.launch_s_per_layer
    assert step8 > 3 * float(decode_step_s(bare8, 1, 300.0))
    a10g = _terms(defaults, gpu="A10G", engine=ServingEngine.TGI)
    bare = _terms(defaults, gpu="A10G", profile=_without_host(defaults, ServingEngine.TGI))
    assert float(decode_step_s(a10g, 1, 300.0)) == pytest.approx(
        float(decode_step_s(bare, 1, 300.0)), rel=0.02)


def test_tensor_parallel_allreduce_latency_is_paid_per_layer(defaults: PerfDefaults) -> None:
    profile = replace(_without_host(defaults, ServingEngine.VLLM), allreduce_latency_s=100e-6)
    slow = _terms(defaults, gpu="A100-80GB", tp=8, profile=profile)
    fast = _terms(defaults, gpu="A100-80GB", tp=8,
                  profile=replace(profile, allreduce_latency_s=0.0))
    layers = load_preset("llama-2-7b").architecture.num_layers
    gap = float(decode_step_s(slow, 1, 300.0) - decode_step_s(fast, 1, 300.0))
    assert gap == pytest.approx(2 * layers * 100e-6)
    single = _terms(defaults, gpu="A100-80GB", tp=1, profile=profile)
    assert float(decode_step_s(single, 1, 300.0)) == pytest.approx(
        float(decode_step_s(_terms(defaults, gpu="A100-80GB", profile=replace(
            profile, allreduce_latency_s=0.0)), 1, 300.0)))


def test_paged_kv_admits_by_mean_residency(defaults: PerfDefaults) -> None:
    """On a 24 GB card a 7B model leaves ~6 GB of KV cache: reserving prompt + output up front
    holds fewer requests than paging, where each holds prompt + output/2 on average."""
    paged = _terms(defaults, gpu="A10G")
    reserved = _terms(defaults, gpu="A10G",
                      profile=replace(defaults.serving.engine(ServingEngine.VLLM),
                                      paged_kv=False))
    prompt, output = 500.0, 1500.0
    whole = float(max_batch_arrays(reserved, prompt, output))
    by_use = float(max_batch_arrays(paged, prompt, output))
    assert 1 <= whole < by_use < 256
    assert by_use == np.floor(float(paged.kv_capacity_tokens) / (prompt + output / 2))
    est = estimate_serving(load_preset("llama-2-7b").architecture, get_gpu("A10G"),
                           engine=ServingEngine.VLLM, precision=Dtype.FP16, quant=Quant.NONE,
                           kv_dtype=None, prompt_tokens=500, output_tokens=1500, batch=1,
                           tp=1, rate_requests_per_s=None, slo_ttft_s=None, slo_tpot_s=None,
                           price_usd_per_gpu_hour=1.0, assumptions=defaults.serving)
    assert est.max_batch == by_use


def test_separate_prefill_stalls_decodes_longer_than_chunked(defaults: PerfDefaults) -> None:
    chunked = _terms(defaults, gpu="A10G")
    separate = _terms(defaults, gpu="A10G", profile=replace(
        defaults.serving.engine(ServingEngine.VLLM), chunked_prefill=False))
    assert float(prefill_work_s(separate, 32)) == pytest.approx(
        float(prefill_latency_s(separate, 32)))
    # a short prompt run on its own reads every weight: far longer than its compute alone
    assert float(prefill_work_s(separate, 32)) > 2 * float(prefill_work_s(chunked, 32))


def test_other_users_prompts_slow_each_decode_step(defaults: PerfDefaults) -> None:
    """Closed loop: TPOT at 20 users exceeds the idle step at batch 20 by the prefill share."""
    terms = _terms(defaults, gpu="A10G", engine=ServingEngine.TGI)
    est = estimate_serving(load_preset("llama-2-7b").architecture, get_gpu("A10G"),
                           engine=ServingEngine.TGI, precision=Dtype.FP16, quant=Quant.NONE,
                           kv_dtype=None, prompt_tokens=200, output_tokens=50, batch=1, tp=1,
                           rate_requests_per_s=None, slo_ttft_s=None, slo_tpot_s=None,
                           price_usd_per_gpu_hour=1.0, assumptions=defaults.serving)
    one = closed_loop(terms, 1, 200, 50, est.max_batch, est.max_requests_per_s,
                      defaults.serving)
    many = closed_loop(terms, 20, 200, 50, est.max_batch, est.max_requests_per_s,
                       defaults.serving)
    assert one.request_s == pytest.approx(float(prefill_latency_s(terms, 200))
                                          + 50 * float(decode_step_s(terms, 1, 225.0)),
                                          rel=0.05)
    assert many.tpot_s > 1.15 * float(decode_step_s(terms, 20, 225.0))
    assert many.output_tokens_per_s > 5 * one.output_tokens_per_s
    assert many.rate_per_s * many.request_s == pytest.approx(20, rel=1e-6)


def test_dequantize_then_gemm_int4_is_slower_than_fp16_at_large_batch(
        defaults: PerfDefaults) -> None:
    """bitsandbytes 4-bit (fused only at batch 1) beats fp16 at batch 1 and loses at batch 64
    on a small card, where it moves an fp16 copy of every weight on top of the 4-bit read."""
    bare = _without_host(defaults, ServingEngine.HF_TRANSFORMERS)
    fp16 = _terms(defaults, gpu="L4", profile=bare, context=600)
    nf4 = _terms(defaults, gpu="L4", profile=bare, quant=Quant.NF4, context=600)
    assert float(decode_step_s(nf4, 1, 300.0)) < 0.5 * float(decode_step_s(fp16, 1, 300.0))
    assert float(decode_step_s(nf4, 64, 300.0)) > float(decode_step_s(fp16, 64, 300.0))


def test_marlin_int4_keeps_its_edge_until_compute_bound(defaults: PerfDefaults) -> None:
    """vLLM's Marlin int4 reads a quarter of the bytes at small batch; at batch 256 on an L4
    both formats are compute-bound on the same fp16 tensor cores and run at about one speed."""
    fp16 = _terms(defaults, gpu="L4", context=600)
    int4 = _terms(defaults, gpu="L4", quant=Quant.INT4, context=600)
    speedup = decode_step_s(fp16, np.array([1.0, 256.0]), 300.0) / decode_step_s(
        int4, np.array([1.0, 256.0]), 300.0)
    assert speedup[0] > 2.5
    assert speedup[1] < 1.5


def test_compute_bound_decode_at_large_batch_on_small_cards(defaults: PerfDefaults) -> None:
    """Batch 256 of a 7B on an A10G (125 dense fp16 TFLOPS for 600 GB/s) needs more time for
    its FLOPs than for its bytes: the step is set by the tensor cores, not the memory."""
    bare = _without_host(defaults, ServingEngine.VLLM)
    terms = _terms(defaults, gpu="A10G", context=100, profile=bare)
    flops_s = 256 * forward_flops_per_token(terms.model, 50.0) / (
        terms.peak_flops * terms.compute_efficiency)
    bytes_s = (terms.weight_bytes_per_gpu + 256 * 50 * terms.kv_bytes_per_token_per_gpu) / (
        terms.hbm_bytes_per_s * terms.hbm_efficiency)
    assert float(flops_s) > float(bytes_s)
    assert float(decode_step_s(terms, 256, 50.0)) >= float(flops_s)
    # at batch 16 the same card is bandwidth-bound: the step is the weight read
    assert float(decode_step_s(terms, 16, 50.0)) < 1.1 * float(bytes_s)


def test_bandwidth_efficiency_per_memory_class(defaults: PerfDefaults) -> None:
    assert is_gddr(get_gpu("L4"))
    assert is_gddr(get_gpu("RTX4090"))
    assert not is_gddr(get_gpu("H100"))
    assert not is_gddr(get_gpu("A100"))
    profile = replace(defaults.serving.engine(ServingEngine.LLAMA_CPP),
                      hbm_efficiency=0.5, gddr_hbm_efficiency=0.87)
    assert float(_terms(defaults, gpu="RTX4090", profile=profile).hbm_efficiency) == 0.87
    assert float(_terms(defaults, gpu="H100", profile=profile).hbm_efficiency) == 0.5
    with pytest.raises(ValueError, match="gddr_hbm_efficiency"):
        replace(profile, gddr_hbm_efficiency=1.5)


def test_quantized_weights_are_read_at_the_kernels_bandwidth_factor() -> None:
    """Hand-computed: 1 GB of weights of which 0.6 GB quantized, κ = 0.5, 1 TB/s at η = 0.8,
    no KV, no FLOPs: t = 1e9/0.8e12 + 0.6e9·(1/0.5 − 1)/0.8e12 = 1.25 ms + 0.75 ms = 2 ms."""
    from costsim.memory.estimate import shape_of

    dense = shape_of(load_preset("llama-2-7b").architecture)

    def terms(factor: float, fused_max_batch: float = np.inf) -> ReplicaTerms:
        arr = np.asarray
        return ReplicaTerms(
            model=dense, tp=arr(1.0), weight_bytes_per_gpu=arr(1e9),
            expert_weight_bytes_per_gpu=arr(0.0), kv_bytes_per_token_per_gpu=arr(0.0),
            kv_capacity_tokens=arr(1e6), peak_flops=arr(1e30), hbm_bytes_per_s=arr(1e12),
            intra_node_bytes_per_s=arr(1e11), activation_bytes=arr(2.0),
            hbm_efficiency=arr(0.8), compute_efficiency=arr(1.0), step_overhead_s=arr(0.0),
            engine_max_batch=arr(8.0), allreduce_latency_s=arr(0.0),
            fused_max_batch=arr(fused_max_batch), dequant_bytes_per_gpu=arr(4e9),
            quant_weight_bytes_per_gpu=arr(0.6e9), quant_bandwidth_factor=arr(factor))

    from costsim.perf.roofline import _weights_read_s

    assert float(_weights_read_s(terms(0.5), np.asarray(1.0))) == pytest.approx(2e-3)
    assert float(_weights_read_s(terms(1.0), np.asarray(1.0))) == pytest.approx(1.25e-3)
    # above the fused batch the kernel writes and reads an fp16 copy (4 GB more) at full speed
    assert float(_weights_read_s(terms(0.5, fused_max_batch=1.0), np.asarray(4.0))) == (
        pytest.approx(5e9 / 0.8e12))


def test_torch_compile_int4_decode_is_slower_than_its_bytes_alone(
        defaults: PerfDefaults) -> None:
    """torch.compile's int4 (tinygemm) reads its quantized bytes at κ = 0.53 of bf16's rate:
    batch-1 decode of Llama-2-7B on an A100-80GB gains ~1.9x over bf16, not the ~3.4x of the
    bytes (torchao's README: 201 vs 107 tokens/s)."""
    bf16 = _terms(defaults, gpu="A100-80GB", engine=ServingEngine.TORCH_COMPILE,
                  precision=Dtype.BF16, context=106)
    int4 = _terms(defaults, gpu="A100-80GB", engine=ServingEngine.TORCH_COMPILE,
                  precision=Dtype.BF16, quant=Quant.INT4, context=106)
    assert float(int4.quant_bandwidth_factor) == pytest.approx(0.53)
    assert float(bf16.quant_bandwidth_factor) == 1.0
    speedup = float(decode_step_s(bf16, 1, 56.0) / decode_step_s(int4, 1, 56.0))
    assert 1.7 < speedup < 2.1
    # the quantized share is the blocks' linear weights with their constants (embeddings and
    # the LM head stay bf16)
    assert 0.8 < float(int4.quant_weight_bytes_per_gpu / int4.weight_bytes_per_gpu) < 0.95
    # engines without a measured factor read quantized bytes at the fp16 rate (Marlin)
    marlin = _terms(defaults, gpu="A100-80GB", quant=Quant.INT4, context=106)
    assert float(marlin.quant_bandwidth_factor) == 1.0


# --- issue 18, fourth serving round ----------------------------------------------------------

def test_fp8_weights_keep_a_16_bit_kv_cache_where_the_engine_does(defaults: PerfDefaults) -> None:
    """W8A8 FP8 without a KV dtype asked: vLLM and SGLang store the KV cache in bf16 (their
    kv_cache_dtype 'auto'), TensorRT-LLM's FP8 checkpoints in FP8; an asked KV dtype wins."""
    from costsim.perf.roofline import engine_kv_setup

    bf16 = _terms(defaults, precision=Dtype.BF16, model="llama-3.1-8b")
    for engine in (ServingEngine.VLLM, ServingEngine.SGLANG):
        fp8 = _terms(defaults, engine=engine, precision=Dtype.FP8, quant=Quant.FP8,
                     model="llama-3.1-8b")
        assert float(fp8.kv_bytes_per_token_per_gpu) == float(bf16.kv_bytes_per_token_per_gpu)
        assert float(fp8.weight_bytes_per_gpu) < 0.6 * float(bf16.weight_bytes_per_gpu)
    trt = _terms(defaults, engine=ServingEngine.TENSORRT_LLM, precision=Dtype.FP8,
                 quant=Quant.FP8, model="llama-3.1-8b")
    assert float(trt.kv_bytes_per_token_per_gpu) == float(bf16.kv_bytes_per_token_per_gpu) / 2
    vllm = defaults.serving.engine(ServingEngine.VLLM)
    asked = InferenceSetup(precision=Dtype.FP8, layout=ParallelLayout(), kv_dtype=Dtype.FP8,
                           quant=Quant.FP8)
    assert engine_kv_setup(asked, vllm).kv_cache_dtype is Dtype.FP8
    est = estimate_serving(load_preset("llama-3.1-8b").architecture, get_gpu("H100"),
                           engine=ServingEngine.VLLM, precision=Dtype.FP8, quant=Quant.FP8,
                           kv_dtype=None, prompt_tokens=500, output_tokens=200, batch=1, tp=1,
                           rate_requests_per_s=None, slo_ttft_s=None, slo_tpot_s=None,
                           price_usd_per_gpu_hour=1.0, assumptions=defaults.serving)
    assert est.kv_dtype is Dtype.BF16


def test_the_attention_factor_slows_the_kv_read_only(defaults: PerfDefaults) -> None:
    """vLLM's decode attention streams the paged KV cache at attention_bandwidth_factor of the
    weight kernels' share: the step grows by B·c̄·kv·(1/f − 1)/(BW·η) on a memory-bound step,
    nothing at batch 1 with no context, and TensorRT-LLM keeps f = 1."""
    base = replace(defaults.serving.engine(ServingEngine.VLLM), attention_bandwidth_factor=1.0)
    slow = replace(base, attention_bandwidth_factor=0.5)
    fast_terms, slow_terms = _terms(defaults, profile=base), _terms(defaults, profile=slow)
    assert float(decode_step_s(slow_terms, 1.0, 0.0)) == float(decode_step_s(fast_terms, 1.0, 0.0))
    kv_s = 8 * 1000 * float(fast_terms.kv_bytes_per_token_per_gpu) / float(
        fast_terms.hbm_bytes_per_s * fast_terms.hbm_efficiency)
    grown = float(decode_step_s(slow_terms, 8.0, 1000.0) - decode_step_s(fast_terms, 8.0, 1000.0))
    assert grown == pytest.approx(kv_s, rel=0.05)  # (1/0.5 − 1) = 1 × the KV time, L2-damped
    assert defaults.serving.engine(ServingEngine.VLLM).attention_bandwidth_factor < 1.0
    assert defaults.serving.engine(ServingEngine.TENSORRT_LLM).attention_bandwidth_factor == 1.0
    with pytest.raises(ValueError, match="attention_bandwidth_factor"):
        replace(base, attention_bandwidth_factor=0.0)


def test_fp8_prefill_gains_the_published_1_6x_not_the_2x_peak(defaults: PerfDefaults) -> None:
    """FP8 GEMMs reach fp8_compute_factor (0.8) of the 16-bit GEMMs' share of their doubled
    peak: a compute-bound prompt's work is 1 / (2 × 0.8) of bf16's (vLLM's FP8 documentation:
    up to 1.6x throughput); engines without an FP8 path keep 1."""
    bf16 = _terms(defaults, precision=Dtype.BF16, model="llama-3.1-8b")
    fp8 = _terms(defaults, precision=Dtype.FP8, quant=Quant.FP8, model="llama-3.1-8b")
    ratio = float(prefill_work_s(bf16, 8192.0) / prefill_work_s(fp8, 8192.0))
    assert ratio == pytest.approx(2 * 0.8, rel=1e-3)
    for engine in (ServingEngine.VLLM, ServingEngine.TENSORRT_LLM, ServingEngine.SGLANG):
        assert defaults.serving.engine(engine).fp8_compute_factor == 0.8
    assert defaults.serving.engine(ServingEngine.LLAMA_CPP).fp8_compute_factor == 1.0


def test_llama_server_decodes_its_four_default_slots_together(defaults: PerfDefaults) -> None:
    """llama-server batches its parallel slots in one decode step (continuous batching) and has
    started 4 by default since ggml-org/llama.cpp PR #16736 (issue 18, sixth serving round): a
    4-bit 7B on an L4 runs 4 sequences at once, and the saturated replica delivers over 3x the
    tokens of one sequence, as the weights are read once per step for all four."""
    from costsim.domain.workload import ServingEngine as Engine

    assert defaults.serving.engine(Engine.LLAMA_CPP).max_batch == 4
    est = estimate_serving(load_preset("qwen2.5-7b").architecture, get_gpu("L4"),
                           engine=Engine.LLAMA_CPP, precision=Dtype.FP16, quant=Quant.INT4,
                           kv_dtype=None, prompt_tokens=45, output_tokens=128, batch=1, tp=1,
                           rate_requests_per_s=None, slo_ttft_s=None, slo_tpot_s=None,
                           price_usd_per_gpu_hour=1.0, assumptions=defaults.serving)
    assert est.max_batch == 4
    assert est.output_tokens_per_s > 3 * est.decode_tokens_per_s
    # the slots hold their whole context each, so a long request fits fewer of them
    terms = _terms(defaults, gpu="L4", engine=Engine.LLAMA_CPP, model="qwen2.5-7b",
                   quant=Quant.INT4)
    assert float(max_batch_arrays(terms, 45, 128)) == 4


def test_vllm_v0_pays_host_time_per_running_sequence(defaults: PerfDefaults) -> None:
    """vLLM's V0 engine (releases up to 0.7) does its per-request work between steps in Python,
    serialized with the GPU: a host time per running sequence that does not shrink with tensor
    parallelism, so a small model gains little from more GPUs; V1 (the vllm profile) hides it
    (issue 18, sixth serving round)."""
    v0 = defaults.serving.engine(ServingEngine.VLLM_V0)
    v1 = defaults.serving.engine(ServingEngine.VLLM)
    assert v0.step_overhead_per_seq_s > 0 == v1.step_overhead_per_seq_s
    # everything else is vLLM's: the same kernels, defaults and attention factor
    assert replace(v0, engine=ServingEngine.VLLM, step_overhead_per_seq_s=0.0,
                   source=v1.source) == v1
    batch, context = np.array([150.0]), 600.0
    extra = {tp: float((decode_step_s(_terms(defaults, engine=ServingEngine.VLLM_V0, tp=tp,
                                             model="llama-3-8b"), batch, context)
                        - decode_step_s(_terms(defaults, tp=tp, model="llama-3-8b"),
                                        batch, context))[0])
             for tp in (1, 8)}
    assert extra[1] == pytest.approx(extra[8]) == pytest.approx(150 * v0.step_overhead_per_seq_s)
    # TP 8 takes a V0 step of Llama-3-8B at batch 150 to about half its TP 1 time, a V1 step
    # to under a quarter: the host time does not shrink with the GPUs' share of the work
    step = {(engine, tp): float(decode_step_s(_terms(defaults, engine=engine, tp=tp,
                                                     model="llama-3-8b"), batch, context)[0])
            for engine in (ServingEngine.VLLM_V0, ServingEngine.VLLM) for tp in (1, 8)}
    v0_gain = step[ServingEngine.VLLM_V0, 8] / step[ServingEngine.VLLM_V0, 1]
    v1_gain = step[ServingEngine.VLLM, 8] / step[ServingEngine.VLLM, 1]
    assert v0_gain > 0.4 > 0.25 > v1_gain
    for quant in ("int4", "int8"):
        old, new = (defaults.serving.quant_kernel(e, quant)
                    for e in (ServingEngine.VLLM_V0, ServingEngine.VLLM))
        assert (old.family, old.fused_max_batch, old.bandwidth_factor) == (
            new.family, new.fused_max_batch, new.bandwidth_factor)
