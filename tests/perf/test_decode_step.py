"""The hoisted decode step (:class:`costsim.perf.roofline.DecodeStep`) and the latency model's
early-stopping fixed point give the very bits the formulas gave before issue 20's speed work.

The references below are the formulas as costsim/perf/roofline.py and latency.py wrote them at
main 34571ac, one expression each, every term recomputed per call; the engines must equal them
exactly (``==`` on every element, no tolerance), on dense, MoE, quantized, tensor-parallel and
stacked replicas.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import ArrayLike

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.performance import PerfDefaults, ServingAssumptions
from costsim.domain.precision import Dtype
from costsim.domain.workload import InferenceSetup, ParallelLayout, Quant, ServingEngine
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.perf import latency
from costsim.perf.flops import FloatArray, forward_flops_per_token
from costsim.perf.latency import latency_at_load, max_rate_at_slo
from costsim.perf.roofline import (
    DecodeStep,
    ReplicaTerms,
    decode_step_s,
    prefill_latency_s,
    prefill_work_s,
    replica_terms,
    stack_replicas,
)


def _reference_weights_read_s(r: ReplicaTerms, b: FloatArray) -> FloatArray:
    m = r.model
    if m.num_experts:
        touched = 1.0 - (1.0 - m.experts_per_token / m.num_experts) ** b
        weights = r.weight_bytes_per_gpu - r.expert_weight_bytes_per_gpu * (1.0 - touched)
    else:
        weights = r.weight_bytes_per_gpu + 0.0 * b
    weights = weights + np.where(b > r.fused_max_batch, r.dequant_bytes_per_gpu, 0.0)
    bandwidth = r.hbm_bytes_per_s * r.hbm_efficiency
    fused = np.where(b > r.fused_max_batch, 0.0, 1.0)
    share = np.where(r.weight_bytes_per_gpu > 0,
                     np.minimum(weights, r.weight_bytes_per_gpu)
                     / np.maximum(r.weight_bytes_per_gpu, 1.0), 0.0)
    slow = fused * share * r.quant_weight_bytes_per_gpu * (1.0 / r.quant_bandwidth_factor - 1.0)
    return (weights + slow) / bandwidth


def _reference_tp_comm_s(r: ReplicaTerms, tokens: FloatArray) -> FloatArray:
    volume = 2.0 * (r.tp - 1.0) / r.tp * tokens * r.model.hidden_size * r.activation_bytes
    comm = 2.0 * r.model.num_layers * (r.allreduce_latency_s + volume / r.intra_node_bytes_per_s)
    return np.where(r.tp > 1, comm, 0.0)


def reference_decode_step_s(r: ReplicaTerms, batch: ArrayLike,
                            context_tokens: ArrayLike) -> FloatArray:
    """decode_step_s as main 34571ac computed it, with the KV read at the decode attention's
    bandwidth factor (issue 18, fourth serving round)."""
    b = np.asarray(batch, dtype=np.float64)
    c = np.asarray(context_tokens, dtype=np.float64)
    mem_s = _reference_weights_read_s(r, b) + b * c * r.kv_bytes_per_token_per_gpu / (
        r.hbm_bytes_per_s * r.hbm_efficiency * r.attention_bandwidth_factor)
    comp_s = b * forward_flops_per_token(r.model, c) / r.tp / (r.peak_flops
                                                              * r.compute_efficiency)
    gpu_s = np.maximum(np.sqrt(mem_s**2 + comp_s**2), r.launch_s)
    host_s = r.step_overhead_s + r.step_overhead_per_seq_s * b
    return gpu_s + _reference_tp_comm_s(r, b) + host_s


def reference_latency(r: ReplicaTerms, rate_per_s: ArrayLike, prompt_tokens: int,
                      output_tokens: int, max_batch: int, max_rps: float,
                      assumptions: ServingAssumptions) -> dict[str, FloatArray]:
    """latency_at_load as main 34571ac computed it: all 60 fixed-point iterations."""
    lam = np.asarray(rate_per_s, dtype=np.float64)
    context = prompt_tokens + output_tokens / 2.0
    busy = np.clip(1.0 - lam * float(prefill_work_s(r, prompt_tokens)), 1e-9, 1.0)
    n = np.zeros_like(lam)
    for _ in range(60):
        n = np.minimum(lam * output_tokens
                       * reference_decode_step_s(r, np.maximum(n, 1.0), context) / busy,
                       float(max_batch))
    tpot = reference_decode_step_s(r, np.maximum(n, 1.0), context) / busy
    n95 = np.minimum(n + assumptions.tail_concurrency_z * np.sqrt(n), float(max_batch))
    tpot95 = reference_decode_step_s(r, np.maximum(n95, 1.0), context) / busy
    rho = np.clip(lam / max_rps, 0.0, 0.999999)
    first = float(prefill_latency_s(r, prompt_tokens))
    step = reference_decode_step_s(r, np.maximum(n, 1.0), context)
    wait = rho / (2.0 * (1.0 - rho)) * first
    overloaded = lam > max_rps * (1.0 + 1e-9)
    inf = np.full_like(lam, np.inf)
    return {"concurrency": n,
            "ttft_s": np.where(overloaded, inf, first + step / 2.0 + wait),
            "tpot_s": np.where(overloaded, inf, tpot),
            "ttft_p95_s": np.where(overloaded, inf,
                                   first + step + assumptions.tail_wait_multiplier * wait),
            "tpot_p95_s": np.where(overloaded, inf, tpot95)}


def _same_bits(a: ArrayLike, b: ArrayLike) -> bool:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return x.shape == y.shape and x.tobytes() == y.tobytes()


# (model, GPU, engine, TP, precision, quant): dense fp16, tensor-parallel, weight-only
# quantized (fused below a batch threshold, dequantize-then-GEMM above it), MoE, fp8, GDDR
CASES = [
    ("llama-2-7b", "H100", ServingEngine.VLLM, 1, Dtype.FP16, Quant.NONE),
    ("llama-2-7b", "A100-80GB", ServingEngine.TGI, 2, Dtype.FP16, Quant.NONE),
    ("llama-2-7b", "L4", ServingEngine.VLLM, 1, Dtype.FP16, Quant.INT4),
    ("llama-2-7b", "A10G", ServingEngine.HF_TRANSFORMERS, 1, Dtype.FP16, Quant.INT8),
    ("mixtral-8x7b", "H100", ServingEngine.SGLANG, 4, Dtype.BF16, Quant.NONE),
    ("llama-3-8b", "H100", ServingEngine.TENSORRT_LLM, 1, Dtype.FP8, Quant.NONE),
]


def _replica(defaults: PerfDefaults, case: tuple[str, str, ServingEngine, int, Dtype, Quant]
             ) -> ReplicaTerms:
    model, gpu, engine, tp, precision, quant = case
    profile = defaults.serving.engine(engine)
    setup = InferenceSetup(precision=precision, layout=ParallelLayout(tp=tp),
                           context_tokens=4096, quant=quant)
    policy = replace(DEFAULT_POLICY, infer_utilization=profile.memory_utilization)
    return replica_terms(load_preset(model).architecture, get_gpu(gpu), setup, profile,
                         defaults.serving, policy)


@pytest.fixture(scope="module")
def replicas(defaults: PerfDefaults) -> list[ReplicaTerms]:
    return [_replica(defaults, case) for case in CASES]


def test_cases_cover_every_path(replicas: list[ReplicaTerms]) -> None:
    steps = [DecodeStep(r, 600.0) for r in replicas]
    terms = [s.terms for s in steps]
    assert any(s.dense_read_s is not None for s in steps)  # the constant-read path
    assert any(s.dense_read_s is None and s.terms.moe_keep is None
               for s in steps)  # a fused threshold
    assert any(t.moe_keep is not None for t in terms)  # MoE
    assert any(t.any_sharded for t in terms)
    assert not all(t.any_sharded for t in terms)


# whole batches, the fractional concurrencies the fixed point passes, edge values
BATCHES = np.concatenate([np.arange(1.0, 300.0), np.random.default_rng(20).uniform(1.0, 600.0, 400),
                          [0.0, 0.5, 1.5, 511.25, 4096.0, 1e6]])


@pytest.mark.parametrize("index", range(len(CASES)))
def test_decode_step_equals_the_formula_bit_for_bit(replicas: list[ReplicaTerms],
                                                    index: int) -> None:
    r = replicas[index]
    for context in (1.0, 600.0, 3000.5, 1234.567):
        step = DecodeStep(r, context)
        assert _same_bits(step(BATCHES), reference_decode_step_s(r, BATCHES, context))
        assert _same_bits(decode_step_s(r, BATCHES, context),
                          reference_decode_step_s(r, BATCHES, context))
        for b in (1, 7, 64, 256):  # one batch at a time, as a Python int
            assert _same_bits(step(b), reference_decode_step_s(r, b, context))


def test_non_finite_batches_take_the_full_formula(replicas: list[ReplicaTerms]) -> None:
    odd = np.asarray([1.0, np.inf, 3.0, np.nan])
    with np.errstate(invalid="ignore"):
        for r in replicas:
            ours, ref = DecodeStep(r, 600.0)(odd), reference_decode_step_s(r, odd, 600.0)
            assert np.array_equal(ours, ref, equal_nan=True)


def test_stacked_replicas_equal_the_formula(replicas: list[ReplicaTerms]) -> None:
    dense = [r for r in replicas if r.model == replicas[0].model]
    stacked = stack_replicas(dense)
    batches = np.arange(1.0, 65.0)[:, None]
    assert _same_bits(DecodeStep(stacked, 900.0)(batches),
                      reference_decode_step_s(stacked, batches, 900.0))


@settings(max_examples=60, deadline=None)
@given(index=st.integers(0, len(CASES) - 1),
       batches=st.lists(st.floats(0.0, 1e5, allow_nan=False), min_size=1, max_size=40),
       context=st.floats(1.0, 32768.0))
def test_any_batches_and_context_equal_the_formula(
        defaults: PerfDefaults, index: int, batches: list[float], context: float) -> None:
    r = _replica(defaults, CASES[index])
    b = np.asarray(batches)
    assert _same_bits(DecodeStep(r, context)(b), reference_decode_step_s(r, b, context))


@pytest.mark.parametrize("index", range(len(CASES)))
def test_latency_at_load_equals_the_sixty_iteration_fixed_point(
        defaults: PerfDefaults, replicas: list[ReplicaTerms], index: int) -> None:
    r, a = replicas[index], defaults.serving
    prompt, output, max_batch = 700, 300, 128
    step_max = float(reference_decode_step_s(r, max_batch, prompt + output / 2.0))
    max_rps = 1.0 / (float(prefill_work_s(r, prompt)) + output * step_max / max_batch)
    # below, near and beyond the capacity: slow convergence near it, exact repeats far below
    rates = np.concatenate([np.linspace(1e-9 * max_rps, 1.2 * max_rps, 97), [max_rps]])
    ours = latency_at_load(r, rates, prompt, output, max_batch, max_rps, a)
    ref = reference_latency(r, rates, prompt, output, max_batch, max_rps, a)
    for name, values in ref.items():
        assert _same_bits(getattr(ours, name), values), name


def test_max_rate_at_slo_unchanged_by_the_early_stop(
        defaults: PerfDefaults, replicas: list[ReplicaTerms],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The SLO boundary search (five refinement rounds) finds what the full loop finds."""
    r, a = replicas[0], defaults.serving
    prompt, output, max_batch = 1000, 200, 256
    step_max = float(decode_step_s(r, max_batch, prompt + output / 2.0))
    max_rps = 1.0 / (float(prefill_work_s(r, prompt)) + output * step_max / max_batch)
    ours = max_rate_at_slo(r, prompt, output, max_batch, max_rps, a, 0.5, 0.05)

    def full(*args: Any) -> SimpleNamespace:
        return SimpleNamespace(**reference_latency(*args))

    monkeypatch.setattr(latency, "latency_at_load", full)
    theirs = max_rate_at_slo(r, prompt, output, max_batch, max_rps, a, 0.5, 0.05)
    assert ours == theirs
    assert 0 < ours < max_rps
