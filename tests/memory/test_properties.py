"""Hypothesis properties of the memory equations: monotone in batch and sequence, never rising
with sharding, never negative, components adding up, and scalar == vectorized."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.domain.architecture import Architecture
from costsim.domain.precision import Dtype
from costsim.domain.workload import (
    BytesPreset,
    InferenceSetup,
    LoraConfig,
    OptimizerKind,
    ParallelLayout,
    Quant,
    Recompute,
    Task,
    TrainingSetup,
)
from costsim.memory.estimate import (
    MemoryEstimate,
    component_arrays_for,
    encode_inference,
    encode_training,
    estimate_inference,
    estimate_training,
)

ARCHS: dict[str, Architecture] = {
    name: load_preset(name).architecture
    for name in ("tiny-llama", "tiny-mixtral", "gpt2", "bert-base-uncased", "llama-3-8b")
}
GPU = get_gpu("H100")
FAST = settings(max_examples=40, deadline=None)


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def training_cases(draw: st.DrawFn) -> tuple[Architecture, TrainingSetup]:
    arch = ARCHS[draw(st.sampled_from(sorted(ARCHS)))]
    tps = [t for t in divisors(arch.num_heads) if t <= 8
           and (arch.num_kv_heads % t == 0 or t % arch.num_kv_heads == 0)]
    tp = draw(st.sampled_from(tps))
    pp = draw(st.sampled_from([p for p in divisors(arch.num_layers) if p <= 4]))
    dp = draw(st.integers(1, 16))
    zero = draw(st.integers(0, 3))
    lora = draw(st.booleans())
    quant = draw(st.sampled_from(list(Quant))) if lora else Quant.NONE
    task = Task.FINETUNE if lora else draw(st.sampled_from([Task.TRAIN, Task.FINETUNE]))
    setup = TrainingSetup(
        task=task,
        precision=draw(st.sampled_from([Dtype.BF16, Dtype.FP16, Dtype.FP32, Dtype.FP8])),
        layout=ParallelLayout(tp=tp, pp=pp, dp=dp, zero=zero, sp=draw(st.booleans())),
        micro_batch=draw(st.integers(1, 16)),
        seq_len=draw(st.integers(1, min(arch.max_position_embeddings, 2048))),
        grad_accum=draw(st.integers(1, 8)),
        recompute=draw(st.sampled_from(list(Recompute))),
        flash_attention=draw(st.booleans()),
        optimizer=draw(st.sampled_from(list(OptimizerKind))),
        bytes_preset=draw(st.sampled_from(list(BytesPreset))),
        quant=quant,
        lora=LoraConfig(rank=draw(st.integers(1, 64)), targets=("all-linear",)) if lora else None,
    )
    return arch, setup


@st.composite
def inference_cases(draw: st.DrawFn) -> tuple[Architecture, InferenceSetup]:
    arch = ARCHS[draw(st.sampled_from(sorted(ARCHS)))]
    tps = [t for t in divisors(arch.num_heads) if t <= 8
           and (arch.num_kv_heads % t == 0 or t % arch.num_kv_heads == 0)]
    setup = InferenceSetup(
        precision=draw(st.sampled_from([Dtype.BF16, Dtype.FP16, Dtype.FP32])),
        layout=ParallelLayout(tp=draw(st.sampled_from(tps)),
                              pp=draw(st.sampled_from([p for p in divisors(arch.num_layers)
                                                       if p <= 4]))),
        batch=draw(st.integers(1, 64)),
        context_tokens=draw(st.integers(1, arch.max_position_embeddings)),
        kv_dtype=draw(st.sampled_from([None, Dtype.FP8, Dtype.FP16, Dtype.INT8])),
        quant=draw(st.sampled_from(list(Quant))),
        flash_attention=draw(st.booleans()),
    )
    return arch, setup


def components_ok(estimate: MemoryEstimate) -> None:
    parts = estimate.components()
    total = parts.pop("total")
    assert all(value >= 0 for value in parts.values()), parts
    assert sum(parts.values()) == total
    assert estimate.headroom_bytes == estimate.usable_bytes - total


@FAST
@given(training_cases(), st.integers(1, 8), st.integers(1, 512))
def test_training_monotone_in_batch_and_sequence(
        case: tuple[Architecture, TrainingSetup], more_batch: int, more_seq: int) -> None:
    arch, setup = case
    base = estimate_training(arch, GPU, setup)
    components_ok(base)
    bigger_batch = estimate_training(arch, GPU, replace(setup, micro_batch=setup.micro_batch
                                                        + more_batch))
    assert bigger_batch.total_bytes >= base.total_bytes
    longer = min(arch.max_position_embeddings, setup.seq_len + more_seq)
    bigger_seq = estimate_training(arch, GPU, replace(setup, seq_len=longer))
    assert bigger_seq.total_bytes >= base.total_bytes


@FAST
@given(training_cases())
def test_training_never_rises_with_sharding(case: tuple[Architecture, TrainingSetup]) -> None:
    arch, setup = case
    # Data parallelism from 2 GPUs up (1 → 2 adds communication buffers that do not exist on one
    # GPU); pipeline degrees with one micro-batch in flight (1F1B keeps pp in flight otherwise).
    setup = replace(setup, grad_accum=1,
                    layout=replace(setup.layout, dp=max(2, setup.layout.dp)))
    base = estimate_training(arch, GPU, setup).total_bytes
    more_dp = replace(setup, layout=replace(setup.layout, dp=setup.layout.dp * 2))
    assert estimate_training(arch, GPU, more_dp).total_bytes <= base
    tp = setup.layout.tp
    bigger_tps = [t for t in divisors(arch.num_heads) if t > tp and t % tp == 0 and t <= 8
                  and (arch.num_kv_heads % t == 0 or t % arch.num_kv_heads == 0)]
    for t in bigger_tps:
        more_tp = replace(setup, layout=replace(setup.layout, tp=t))
        assert estimate_training(arch, GPU, more_tp).total_bytes <= base
    # ZeRO stages 0 → 1 → 2 only shard (stage 3 adds gathered layers, which can outweigh the
    # saving for a model of a few layers on a few GPUs — a real effect, not tested here).
    if setup.layout.zero < 2:
        more_zero = replace(setup, layout=replace(setup.layout, zero=setup.layout.zero + 1))
        assert estimate_training(arch, GPU, more_zero).total_bytes <= base
    pp = setup.layout.pp
    for p in [p for p in divisors(arch.num_layers) if p > pp and p % pp == 0 and p <= 8]:
        more_pp = replace(setup, layout=replace(setup.layout, pp=p))
        assert estimate_training(arch, GPU, more_pp).total_bytes <= base


@FAST
@given(inference_cases(), st.integers(1, 16), st.integers(1, 4096))
def test_inference_monotone_and_sums(case: tuple[Architecture, InferenceSetup],
                                     more_batch: int, more_context: int) -> None:
    arch, setup = case
    base = estimate_inference(arch, GPU, setup)
    components_ok(base)
    bigger = estimate_inference(arch, GPU, replace(setup, batch=setup.batch + more_batch))
    assert bigger.total_bytes >= base.total_bytes
    longer = min(arch.max_position_embeddings, setup.context_tokens + more_context)
    assert estimate_inference(arch, GPU, replace(setup, context_tokens=longer)).total_bytes \
        >= base.total_bytes
    tp = setup.layout.tp
    for t in [t for t in divisors(arch.num_heads) if t > tp and t % tp == 0 and t <= 8
              and (arch.num_kv_heads % t == 0 or t % arch.num_kv_heads == 0)]:
        more_tp = replace(setup, layout=replace(setup.layout, tp=t))
        assert estimate_inference(arch, GPU, more_tp).total_bytes <= base.total_bytes


@settings(max_examples=15, deadline=None)
@given(st.lists(training_cases(), min_size=1, max_size=12),
       st.lists(inference_cases(), min_size=1, max_size=12))
def test_scalar_equals_vectorized(train: list[tuple[Architecture, TrainingSetup]],
                                  infer: list[tuple[Architecture, InferenceSetup]]) -> None:
    rows = [encode_training(arch, GPU, setup) for arch, setup in train]
    arrays = component_arrays_for(rows, infer=False)
    for i, (arch, setup) in enumerate(train):
        one = estimate_training(arch, GPU, setup)
        assert one.total_bytes == int(arrays.total[i])
        assert one.activations_bytes == int(arrays.activations[i])
        assert one.weights_bytes == int(arrays.weights[i])
    rows = [encode_inference(arch, GPU, setup) for arch, setup in infer]
    arrays = component_arrays_for(rows, infer=True)
    for i, (arch, setup) in enumerate(infer):
        one = estimate_inference(arch, GPU, setup)
        assert one.total_bytes == int(arrays.total[i])
        assert one.kv_cache_bytes == int(arrays.kv_cache[i])
    assert np.all(arrays.total >= 0)
