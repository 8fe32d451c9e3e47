"""The layout search keeps the global batch and uses every GPU, or says it cannot (issue 8 item
3): a grid over model sizes (124M to 405B), GPU counts (1 to 16,384, including awkward ones)
and batches (the default and given ones)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.catalog.perf_defaults import perf_defaults
from costsim.domain.architecture import Architecture
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Task, TrainingSetup
from costsim.errors import InfeasibleError
from costsim.perf.layouts import (
    BATCH_TOLERANCE,
    LayoutConstraints,
    candidate_setups,
    candidate_table,
    keeps_batch,
    max_batch_keeping_gpus,
)
from costsim.perf.train_estimate import estimate_training_run, target_batch_seqs

BATCHES = perf_defaults().batch  # the shipped default batches (pre-training: ~4M tokens)
MODELS = ("gpt2", "llama-2-7b", "llama-3-70b", "llama-3.1-405b")
GPU_COUNTS = (1, 3, 8, 24, 100, 1000, 1024, 4096, 16384)
BATCH_TOKENS = (None, 2**19, 2**24)  # None = the default batch
SEQ_LEN = 1024
GPUS_PER_NODE = 8


def _base(seq_len: int = SEQ_LEN) -> TrainingSetup:
    return TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout(),
                         seq_len=seq_len)


def _fixed(batch_tokens: int | None, seq_len: int = SEQ_LEN) -> LayoutConstraints:
    seqs = None if batch_tokens is None else batch_tokens // seq_len
    return LayoutConstraints(global_batch_seqs=seqs)


def _arch(name: str) -> Architecture:
    return load_preset(name).architecture


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("batch_tokens", BATCH_TOKENS)
def test_every_candidate_uses_every_gpu_and_keeps_the_batch(model: str,
                                                            batch_tokens: int | None) -> None:
    arch = _arch(model)
    fixed = _fixed(batch_tokens)
    for gpus in GPU_COUNTS:
        target = target_batch_seqs(_base(), fixed, BATCHES, gpus=gpus)
        assert target is not None
        c = candidate_table(arch, gpus, fixed, target, GPUS_PER_NODE).columns
        assert np.all(c["tp"] * c["pp"] * c["dp"] == gpus)
        batch = c["dp"] * c["micro_batch"] * c["grad_accum"]
        assert np.all(np.abs(batch - target) <= BATCH_TOLERANCE * target), gpus
        usable, layout = max_batch_keeping_gpus(arch, gpus, fixed, target, GPUS_PER_NODE)
        if len(c["tp"]):
            assert usable == gpus
        else:
            # The count the message offers really is usable.
            assert layout is not None
            assert 0 < usable < gpus
            assert len(candidate_table(arch, usable, fixed, target, GPUS_PER_NODE))
            assert usable == layout.gpus


def test_the_batch_caps_data_parallelism_and_model_parallelism_takes_the_rest() -> None:
    """405B, 16,384 GPUs, 2,048 sequences: dp ≤ 2,252, so every candidate shards the model
    over at least 8 GPUs (the issue's pure-FSDP dp = 16,384 layout made a 134M-token step)."""
    fixed = LayoutConstraints(global_batch_seqs=2048)
    setups = candidate_setups(_arch("llama-3.1-405b"), 16384, _base(8192), fixed, 2048,
                              GPUS_PER_NODE)
    assert setups
    assert all(s.layout.dp <= 2048 * (1 + BATCH_TOLERANCE) for s in setups)
    assert all(s.layout.tp * s.layout.pp >= 8 for s in setups)


RUNS = [("gpt2", 1, None), ("gpt2", 24, 2**19), ("gpt2", 16384, 2**19),
        ("llama-2-7b", 100, None), ("llama-2-7b", 1000, 2**22), ("llama-2-7b", 4096, 2**22),
        ("llama-3-70b", 1024, 2**22), ("llama-3-70b", 16384, 2**24)]


@pytest.mark.parametrize(("model", "gpus", "batch_tokens"), RUNS)
def test_an_estimate_keeps_the_batch_or_says_why_not(model: str, gpus: int,
                                                     batch_tokens: int | None,
                                                     defaults: PerfDefaults) -> None:
    """A whole estimate uses all the GPUs asked for; a batch off the target is never silent;
    a fleet the batch cannot use is refused naming the largest count it can use."""
    fixed = _fixed(batch_tokens)
    target = target_batch_seqs(_base(), fixed, BATCHES, gpus=gpus)
    assert target is not None
    model_arch = _arch(model)
    usable, _ = max_batch_keeping_gpus(model_arch, gpus, fixed, target, GPUS_PER_NODE)
    if usable < gpus:
        with pytest.raises(InfeasibleError, match=f"at most {usable} GPUs can"):
            estimate_training_run(model_arch, get_gpu("H100"), gpus, 1e10, _base(), fixed,
                                  defaults=defaults, price_usd_per_gpu_hour=1.0)
        return
    est = estimate_training_run(model_arch, get_gpu("H100"), gpus, 1e10, _base(), fixed,
                                defaults=defaults, price_usd_per_gpu_hour=1.0)
    setup = est.setup
    assert setup.layout.gpus == gpus
    assert keeps_batch(setup.global_batch, target)
    warned = any(f"global batch is {setup.global_batch} sequences" in w and f"not the {target}"
                 in w for w in est.warnings)
    assert warned == (setup.global_batch != target)


def test_a_fixed_grad_accum_decides_the_batch() -> None:
    """--grad-accum without a global batch: the batch follows from it, nothing is filtered."""
    fixed = LayoutConstraints(grad_accum=3, tp=1, pp=1)
    assert target_batch_seqs(_base(), fixed, BATCHES, gpus=8) is None
    setups = candidate_setups(_arch("gpt2"), 8, _base(), fixed, None, GPUS_PER_NODE)
    assert {s.global_batch for s in setups} == {3 * 8 * s.micro_batch for s in setups}
    assert replace(setups[0], grad_accum=3) == setups[0]


def test_the_search_rates_memory_exactly_as_one_estimate_per_layout() -> None:
    """The search's column-wise memory path equals estimate_training on each candidate."""
    from costsim.memory.estimate import estimate_training, training_components_of_layouts

    arch, gpu = _arch("llama-2-7b"), get_gpu("A100-80GB")
    base = _base(4096)
    table = candidate_table(arch, 64, LayoutConstraints(global_batch_seqs=256), 256,
                            GPUS_PER_NODE)
    assert len(table) > 100
    memory = training_components_of_layouts(arch, gpu, base, table.columns)
    for i in range(0, len(table), 7):
        one = estimate_training(arch, gpu, table.setup(base, i))
        assert int(memory.total[i]) == one.total_bytes
        assert int(memory.activations[i]) == one.activations_bytes


@settings(max_examples=150, deadline=None)
@given(limit=st.integers(1, 1500), target=st.integers(1, 1200),
       micro_batch=st.sampled_from([None, 1, 3, 8]))
def test_largest_batch_keeping_dp_equals_a_scan(limit: int, target: int,
                                                micro_batch: int | None) -> None:
    """The closed form (no scan over dp) finds what scanning every dp ≤ limit finds."""
    from costsim.perf.layouts import _batch_shapes, _largest_batch_keeping_dp

    fixed = LayoutConstraints(micro_batch=micro_batch, global_batch_seqs=target)
    scan = next((dp for dp in range(limit, 0, -1) if any(_batch_shapes(dp, fixed, target))), 0)
    assert _largest_batch_keeping_dp(limit, fixed, target) == scan


def test_a_billion_replicas_for_a_larger_batch_is_answered_at_once() -> None:
    """700M data-parallel GPUs (TP and PP fixed at 1) cannot keep a batch of 10^9 sequences:
    the largest count that can is found without scanning the counts in between."""
    fixed = LayoutConstraints(tp=1, pp=1, global_batch_seqs=10**9)
    usable, layout = max_batch_keeping_gpus(_arch("gpt2"), 700_000_000, fixed, 10**9,
                                            GPUS_PER_NODE)
    assert layout is not None
    assert usable == layout.dp
    assert 0 < usable < 700_000_000
    assert any(keeps_batch(usable * mb * g, 10**9) for mb in (1, 2, 4, 8, 16, 32)
               for g in (1, 2, 3))


@settings(max_examples=60, deadline=None)
@given(gpus=st.integers(1, 4096), model=st.sampled_from(["gpt2", "llama-2-7b"]),
       tp=st.sampled_from([None, 1, 2, 3, 4, 8]), pp=st.sampled_from([None, 1, 2, 3, 5, 16]),
       v=st.sampled_from([None, 1, 2, 3, 4]), mb=st.sampled_from([None, 1, 4]),
       ga=st.sampled_from([None, 1, 8]), batch=st.sampled_from([None, 1, 7, 512, 4096]))
def test_any_fixed_degrees_give_a_batch_keeping_layout_or_a_clear_error(
        gpus: int, model: str, tp: int | None, pp: int | None, v: int | None, mb: int | None,
        ga: int | None, batch: int | None) -> None:
    """Whatever the caller fixes, the search returns a layout of exactly the GPUs given that
    keeps the batch, or raises a CostsimError (exit 2 with one line), never anything else."""
    from costsim.errors import CostsimError
    from costsim.perf.train_estimate import choose_layout

    defaults = perf_defaults()
    fixed = LayoutConstraints(tp=tp, pp=pp, virtual_stages=v, micro_batch=mb,
                              grad_accum=None if batch else ga, global_batch_seqs=batch)
    try:
        choice = choose_layout(_arch(model), get_gpu("H100"), gpus, _base(), fixed,
                               network=defaults.network_for("H100"), defaults=defaults)
    except CostsimError:
        return
    setup = choice.step.setup
    assert setup.layout.gpus == gpus
    target = target_batch_seqs(_base(), fixed, BATCHES, gpus=gpus)
    assert target is None or keeps_batch(setup.global_batch, target)


@pytest.mark.parametrize("quant", ["none", "nf4"])
def test_the_search_scores_steps_exactly_as_one_setup_per_layout(quant: str) -> None:
    """The candidate table's step layouts (LoRA adapters, QLoRA's quantized base) give the
    step times that stacking one TrainingSetup per layout gives."""
    from costsim.domain.workload import ALL_LINEAR, LoraConfig, Quant
    from costsim.memory.estimate import shape_of
    from costsim.perf.layouts import candidate_table
    from costsim.perf.training import hardware_terms, layout_arrays, training_step_arrays

    defaults = perf_defaults()
    arch, gpu = _arch("llama-2-7b"), get_gpu("H100")
    base = replace(_base(4096), task=Task.FINETUNE, quant=Quant(quant),
                   lora=LoraConfig(rank=16, targets=(ALL_LINEAR,)))
    table = candidate_table(arch, 16, LayoutConstraints(global_batch_seqs=32), 32,
                            GPUS_PER_NODE)
    hw = hardware_terms(gpu, base.precision, defaults.network_for(gpu.name), defaults.training)
    fast = training_step_arrays(shape_of(arch), hw, table.step_layouts(base, arch),
                                defaults.training)
    setups = [table.setup(base, i) for i in range(len(table))]
    slow = training_step_arrays(shape_of(arch), hw, layout_arrays(setups, arch),
                                defaults.training)
    np.testing.assert_allclose(fast.step_time_s, slow.step_time_s, rtol=1e-12)
    np.testing.assert_allclose(fast.hfu, slow.hfu, rtol=1e-12)
