"""Unit tests of the memory engine's parts: states, KV cache, LoRA, runtime policy, searches."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_architecture_file, load_preset
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
from costsim.errors import InputError
from costsim.memory.estimate import (
    estimate_inference,
    estimate_training,
    kv_cache_bytes_per_token,
    max_kv_tokens,
)
from costsim.memory.lora import adapter_counts, default_targets
from costsim.memory.runtime import Verdict, verdict_for
from costsim.memory.search import (
    fitting_layouts,
    jobs_sharing_node,
    max_micro_batch,
    n_plus_one_fits,
    smallest_gpu_count,
)
from costsim.memory.states import model_state_bytes, trainable_bytes_per_param

ARCH = Path(__file__).resolve().parents[1] / "data" / "architectures"
LLAMA2 = load_preset("llama-2-7b").architecture
H100 = get_gpu("H100")
A100 = get_gpu("A100-80GB")


def train(**kwargs: object) -> TrainingSetup:
    base: dict[str, object] = {"task": Task.TRAIN, "precision": Dtype.BF16,
                               "layout": ParallelLayout(), "seq_len": 4096}
    base.update(kwargs)
    return TrainingSetup(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(("preset", "per_param"), [
    (BytesPreset.PAPER, 16), (BytesPreset.FRAMEWORK, 18), (BytesPreset.DEEPSPEED, 20),
    (BytesPreset.PURE, 12),
])
def test_bytes_presets(preset: BytesPreset, per_param: int) -> None:
    per = trainable_bytes_per_param(Dtype.BF16, preset, OptimizerKind.ADAMW)
    assert per.weights + per.master + per.gradients + per.optimizer == per_param


def test_fp32_training_is_16_bytes_whatever_the_preset() -> None:
    for preset in BytesPreset:
        states = model_state_bytes(1e9, dp=1, zero=0, precision=Dtype.FP32, preset=preset)
        assert states.total_bytes == 16e9


def test_deepspeed_zero2_code_formula() -> None:
    # DeepSpeed ZeRO-2 estimator (current code): 2P + 18P/N (memory-estimators.md §3.2).
    states = model_state_bytes(1e9, dp=8, zero=2, preset=BytesPreset.DEEPSPEED)
    assert states.total_bytes == pytest.approx(2e9 + 18e9 / 8)


def test_kv_per_tensor_parallel_rank_and_pipeline_stage() -> None:
    llama3 = load_preset("llama-3-8b").architecture
    one = InferenceSetup(precision=Dtype.BF16, layout=ParallelLayout())
    assert kv_cache_bytes_per_token(llama3, one) == 131072
    tp2 = replace(one, layout=ParallelLayout(tp=2))
    assert kv_cache_bytes_per_token(llama3, tp2) == 131072 // 2
    tp16 = replace(one, layout=ParallelLayout(tp=16))  # 8 KV heads: replicated, 1 per rank
    assert kv_cache_bytes_per_token(llama3, tp16) == 131072 // 8
    pp4 = replace(one, layout=ParallelLayout(pp=4), kv_dtype=Dtype.FP8)
    assert kv_cache_bytes_per_token(llama3, pp4) == 131072 // 4 // 2


def test_max_kv_tokens_matches_the_free_memory() -> None:
    setup = InferenceSetup(precision=Dtype.BF16, layout=ParallelLayout(), batch=1,
                           context_tokens=1024)
    tokens = max_kv_tokens(LLAMA2, A100, setup)
    estimate = estimate_inference(LLAMA2, A100, replace(setup, batch=1, context_tokens=1))
    per_token = 524288
    assert 100_000 < tokens < 130_000
    # Filling that many tokens stays under usable; one more page of tokens would not.
    free = estimate.usable_bytes - (estimate.total_bytes - estimate.kv_cache_bytes)
    assert tokens * per_token <= free + per_token * 2


def test_default_lora_targets_per_family() -> None:
    assert default_targets(LLAMA2) == ("q_proj", "v_proj")
    assert default_targets(load_preset("gpt2").architecture) == ("c_attn",)
    assert default_targets(load_preset("bert-base-uncased").architecture) == ("query", "value")


def test_lora_counts() -> None:
    gpt2 = load_preset("gpt2").architecture
    counts = adapter_counts(gpt2, LoraConfig(rank=4, targets=("c_attn",)))
    assert counts.total == 12 * 4 * (768 + 3 * 768)
    tiny = load_preset("tiny-llama").architecture
    every = adapter_counts(tiny, LoraConfig(rank=2, targets=("all-linear",)))
    expected = sum(2 * (lay.in_features + lay.out_features) for lay in tiny.linear_layers())
    assert every.total == tiny.num_layers * expected
    with pytest.raises(InputError, match="'query'"):
        adapter_counts(LLAMA2, LoraConfig(rank=8, targets=("q_proj", "query")))


def test_flash_attention_removes_the_quadratic_term_once() -> None:
    eager = estimate_training(LLAMA2, H100, train(flash_attention=False))
    flash = estimate_training(LLAMA2, H100, train(flash_attention=True))
    selective = estimate_training(LLAMA2, H100, train(flash_attention=True,
                                                      recompute=Recompute.SELECTIVE))
    assert flash.activations_bytes < eager.activations_bytes
    # With flash attention there is no s² term left for selective recomputation to drop.
    assert selective.activations_bytes == flash.activations_bytes
    full = estimate_training(LLAMA2, H100, train(recompute=Recompute.FULL))
    assert full.activations_bytes < flash.activations_bytes / 5


def test_gqa_and_gated_mlp_change_activations() -> None:
    llama3 = load_architecture_file(ARCH / "llama-3-8b.json")
    plain = replace(llama3, gated_mlp=False)
    assert estimate_training(llama3, H100, train()).activations_bytes > \
        estimate_training(plain, H100, train()).activations_bytes


def test_pipeline_first_stage_holds_in_flight_micro_batches() -> None:
    one = estimate_training(LLAMA2, H100, train(layout=ParallelLayout(pp=4), grad_accum=1))
    eight = estimate_training(LLAMA2, H100, train(layout=ParallelLayout(pp=4), grad_accum=8))
    assert one.most_loaded_stage == "last"  # logits and loss outweigh one micro-batch
    assert eight.activations_bytes > 3 * one.activations_bytes
    assert eight.most_loaded_stage == "first"


def _stage_activations(pp: int, v: int, grad_accum: int) -> float:
    """First-stage activations without the micro-batch-independent parts (full recompute's
    working layer, the logits of a one-stage run): pp > 1, no recompute, so only the
    in-flight micro-batches remain."""
    est = estimate_training(LLAMA2, H100, train(layout=ParallelLayout(pp=pp, virtual_stages=v),
                                                grad_accum=grad_accum))
    return float(est.activations_bytes)


def test_interleaved_schedule_holds_megatrons_extra_in_flight_micro_batches() -> None:
    """Megatron's interleaved 1F1B warms up 2(p−1) + (v−1)p chunks on the first stage: with
    enough micro-batches it holds p·(1 + (p−1)/(p·v)) micro-batches' activations
    (theoretical_memory_usage.py's interleaved_schedule_memory_penalty) instead of p."""
    plain = _stage_activations(4, 1, 16)
    for v in (2, 4, 8):
        penalty = 1 + (4 - 1) / (4 * v)
        assert _stage_activations(4, v, 16) == pytest.approx(plain * penalty, rel=1e-6)


def test_interleaved_schedule_with_m_equal_p_runs_all_forwards_first() -> None:
    """With m = p micro-batches every chunk's forward runs before the first backward: the
    first stage holds the same p micro-batches as plain 1F1B, never more than the step has."""
    assert _stage_activations(4, 2, 4) == pytest.approx(_stage_activations(4, 1, 4), rel=1e-6)


def test_virtual_stages_must_hold_whole_layers() -> None:
    with pytest.raises(InputError, match="--virtual-stages: must divide the 8 layers"):
        estimate_training(LLAMA2, H100, train(layout=ParallelLayout(pp=4, virtual_stages=3),
                                              grad_accum=8))
    with pytest.raises(ValueError, match="grad_accum >= pp"):
        train(layout=ParallelLayout(pp=4, virtual_stages=2), grad_accum=2)
    with pytest.raises(ValueError, match="need pp > 1"):
        ParallelLayout(virtual_stages=2)


def test_zero3_adds_gathered_layers_only_with_data_parallelism() -> None:
    alone = estimate_training(LLAMA2, H100, train(layout=ParallelLayout(zero=3)))
    assert alone.zero3_gathered_bytes == 0
    sharded = estimate_training(LLAMA2, H100, train(layout=ParallelLayout(dp=8, zero=3)))
    assert sharded.zero3_gathered_bytes > 0
    assert sharded.weights_bytes == pytest.approx(alone.weights_bytes / 8, rel=1e-6)


def test_verdict_bands() -> None:
    assert verdict_for(90, 100, 0.05) is Verdict.FITS
    assert verdict_for(96, 100, 0.05) is Verdict.TIGHT
    assert verdict_for(101, 100, 0.05) is Verdict.OOM


def test_quantized_weights_need_lora_and_bf16_needs_support() -> None:
    with pytest.raises(InputError, match="--quant"):
        estimate_training(LLAMA2, H100, train(quant=Quant.INT4))
    with pytest.raises(InputError, match="bf16"):
        estimate_training(LLAMA2, get_gpu("V100"), train())


def test_max_micro_batch_is_the_boundary() -> None:
    setup = train(recompute=Recompute.FULL, layout=ParallelLayout(dp=8, zero=3))
    best = max_micro_batch(LLAMA2, H100, setup)
    assert best >= 1
    assert estimate_training(LLAMA2, H100, replace(setup, micro_batch=best)).verdict \
        is Verdict.FITS
    assert estimate_training(LLAMA2, H100, replace(setup, micro_batch=best + 1)).verdict \
        is not Verdict.FITS


def test_layout_search() -> None:
    setup = train(seq_len=2048, recompute=Recompute.FULL)
    found = fitting_layouts(LLAMA2, A100, setup, max_gpus=4)
    assert found
    assert all(f.total_bytes <= f.usable_bytes * 0.95 for f in found)
    assert [f.gpus for f in found] == sorted(f.gpus for f in found)
    best = smallest_gpu_count(LLAMA2, A100, setup)
    assert best is not None
    assert best.gpus == found[0].gpus
    assert best.gpus >= 2  # 18 B/param × 6.7B = 121 GB does not fit one 80 GB card


def test_n_plus_one() -> None:
    gib = 2**30
    # DESIGN.md §2: 2×A100-40GB running three 12 GB jobs.
    assert jobs_sharing_node(12 * gib, 80 * gib) == 5
    assert n_plus_one_fits(12 * gib, 3, 80 * gib)
    assert not n_plus_one_fits(30 * gib, 2, 80 * gib)


def test_encoder_inference_caches_nothing_and_runs_the_batch_at_once() -> None:
    """An encoder (BERT) decodes nothing: no KV cache; its forward pass is not chunked, so
    activations keep growing with the batch past the decoder's prefill chunk."""
    bert = load_preset("bert-base-uncased").architecture
    gpu = get_gpu("H100")
    small = InferenceSetup(precision=Dtype.BF16, layout=ParallelLayout(), batch=16,
                           context_tokens=512)
    large = replace(small, batch=64)  # 32768 tokens, beyond the 8192-token prefill chunk
    assert kv_cache_bytes_per_token(bert, small) == 0
    assert max_kv_tokens(bert, gpu, small) == 0
    est_small = estimate_inference(bert, gpu, small)
    est_large = estimate_inference(bert, gpu, large)
    assert est_small.kv_cache_bytes == est_large.kv_cache_bytes == 0
    assert est_large.activations_bytes > 3 * est_small.activations_bytes


def test_model_shape_counts_equal_the_architecture_counts() -> None:
    """Estimates report params_total/params_active from the memoized shape: they must be the
    architecture's exact counts."""
    from costsim.catalog.models import preset_names
    from costsim.memory.estimate import shape_of

    for name in preset_names():
        arch = load_preset(name).architecture
        counts = arch.params()
        shape = shape_of(arch)
        assert (shape.params_total, shape.params_active) == (counts.total, counts.active), name
