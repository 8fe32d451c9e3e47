"""Training step time: structure of the equations, vectorization, breakdown."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from costsim.catalog.gpus import get_gpu
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Recompute, Task, TrainingSetup
from costsim.errors import InputError
from costsim.memory.estimate import adapter_counts_of
from costsim.memory.shape import model_shape
from costsim.perf.training import (
    estimate_training_step,
    hardware_terms,
    layout_arrays,
    training_step_arrays,
)
from tests.perf.conftest import arch

BASE = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16,
                     layout=ParallelLayout(tp=1, pp=1, dp=8, zero=1), micro_batch=1,
                     seq_len=4096, grad_accum=16)


def _step(setup: TrainingSetup, defaults: PerfDefaults, gpu: str = "H100",
          model: str = "llama-2-7b") -> object:
    g = get_gpu(gpu)
    return estimate_training_step(model_shape(arch(model)), g, setup,
                                  network=defaults.network_for(g.name),
                                  assumptions=defaults.training)


def test_scalar_equals_vectorized(defaults: PerfDefaults) -> None:
    setups = [
        BASE,
        replace(BASE, layout=ParallelLayout(tp=2, pp=2, dp=16, zero=0), grad_accum=8),
        replace(BASE, layout=ParallelLayout(tp=8, pp=4, dp=32, zero=3), micro_batch=2,
                recompute=Recompute.FULL),
        replace(BASE, layout=ParallelLayout(tp=4, pp=1, dp=2, zero=2),
                recompute=Recompute.SELECTIVE, seq_len=2048),
    ]
    gpu = get_gpu("H100")
    shape = model_shape(arch("llama-2-13b"))
    hw = hardware_terms(gpu, Dtype.BF16, defaults.network_for("H100"), defaults.training)
    arrays = training_step_arrays(shape, hw, layout_arrays(setups), defaults.training)
    for i, setup in enumerate(setups):
        one = estimate_training_step(shape, gpu, setup, network=defaults.network_for("H100"),
                                     assumptions=defaults.training)
        assert one.step_time_s == pytest.approx(float(arrays.step_time_s[i]), rel=1e-12)
        assert one.tokens_per_s == pytest.approx(float(arrays.tokens_per_s[i]), rel=1e-12)


def test_breakdown_adds_up_to_the_step(defaults: PerfDefaults) -> None:
    setup = replace(BASE, layout=ParallelLayout(tp=4, pp=4, dp=8, zero=1), grad_accum=32)
    step = _step(setup, defaults, model="llama-2-13b")
    parts = (step.compute_s + step.communication_exposed_s  # type: ignore[attr-defined]
             + step.pipeline_bubble_s + step.sync_s)  # type: ignore[attr-defined]
    assert parts == pytest.approx(step.step_time_s)  # type: ignore[attr-defined]


def test_pipeline_bubble_is_p_minus_1_over_m_plus_p_minus_1(defaults: PerfDefaults) -> None:
    setup = replace(BASE, layout=ParallelLayout(tp=1, pp=4, dp=2, zero=0), grad_accum=12)
    step = _step(setup, defaults)
    busy = step.compute_s + step.tensor_parallel_s + step.pipeline_p2p_s  # type: ignore[attr-defined]
    fraction = step.pipeline_bubble_s / (busy + step.pipeline_bubble_s)  # type: ignore[attr-defined]
    assert fraction == pytest.approx(3 / (12 + 3))


def test_interleaved_bubble_is_p_minus_1_over_v_m(defaults: PerfDefaults) -> None:
    """Narayanan et al. 2021 §2.2.2: v virtual stages per GPU cut the bubble to (p−1)/(v·m) of
    the busy time and multiply the point-to-point sends by v."""
    plain = _step(replace(BASE, layout=ParallelLayout(tp=1, pp=4, dp=2, zero=0),
                          grad_accum=12), defaults)
    for v in (2, 4, 8):
        step = _step(replace(BASE, layout=ParallelLayout(tp=1, pp=4, dp=2, zero=0,
                                                         virtual_stages=v), grad_accum=12),
                     defaults)
        busy = (step.compute_s + step.tensor_parallel_s  # type: ignore[attr-defined]
                + step.pipeline_p2p_s)  # type: ignore[attr-defined]
        assert step.pipeline_bubble_s / busy == pytest.approx(3 / (v * 12))  # type: ignore[attr-defined]
        assert step.pipeline_p2p_s == pytest.approx(  # type: ignore[attr-defined]
            v * plain.pipeline_p2p_s)  # type: ignore[attr-defined]
        assert step.compute_s == pytest.approx(plain.compute_s)  # type: ignore[attr-defined]


def test_uneven_stages_run_at_the_pace_of_the_busiest(defaults: PerfDefaults) -> None:
    """32 layers on 3 stages: the busiest holds 11, so the stage computes 11/(32/3) of an even
    share."""
    even = _step(replace(BASE, layout=ParallelLayout(tp=1, pp=4, dp=1), grad_accum=12), defaults)
    uneven = _step(replace(BASE, layout=ParallelLayout(tp=1, pp=3, dp=1), grad_accum=12),
                   defaults)
    per_gpu_even = even.compute_s * 4  # type: ignore[attr-defined]
    assert uneven.compute_s * 3 == pytest.approx(  # type: ignore[attr-defined]
        per_gpu_even * 11 * 3 / 32)


def test_tensor_parallel_costs_communication(defaults: PerfDefaults) -> None:
    one = _step(replace(BASE, layout=ParallelLayout(tp=1, pp=1, dp=8, zero=1)), defaults)
    eight = _step(replace(BASE, layout=ParallelLayout(tp=8, pp=1, dp=1, zero=0),
                          grad_accum=128), defaults)
    assert one.tensor_parallel_s == 0  # type: ignore[attr-defined]
    assert eight.tensor_parallel_s > 0  # type: ignore[attr-defined]
    assert eight.mfu < one.mfu  # type: ignore[attr-defined]


def test_tp_across_nodes_uses_the_slow_network(defaults: PerfDefaults) -> None:
    inside = _step(replace(BASE, layout=ParallelLayout(tp=8, pp=1, dp=2)), defaults,
                   model="megatron-gpt-145b")
    across = _step(replace(BASE, layout=ParallelLayout(tp=16, pp=1, dp=1), grad_accum=32),
                   defaults, model="megatron-gpt-145b")
    per_layer_inside = inside.tensor_parallel_s / inside.compute_s  # type: ignore[attr-defined]
    per_layer_across = across.tensor_parallel_s / across.compute_s  # type: ignore[attr-defined]
    assert per_layer_across > 3 * per_layer_inside


def test_full_recompute_raises_hfu_over_mfu_by_about_a_third(defaults: PerfDefaults) -> None:
    step = _step(replace(BASE, recompute=Recompute.FULL), defaults)
    assert step.hfu / step.mfu == pytest.approx(4 / 3, rel=0.03)  # type: ignore[attr-defined]


def test_h100_faster_than_a100_but_lower_mfu(defaults: PerfDefaults) -> None:
    a100 = _step(BASE, defaults, gpu="A100-80GB")
    h100 = _step(BASE, defaults, gpu="H100")
    assert h100.tokens_per_s > 2 * a100.tokens_per_s  # type: ignore[attr-defined]
    assert h100.mfu < a100.mfu  # type: ignore[attr-defined]


def test_wider_models_run_closer_to_peak(defaults: PerfDefaults) -> None:
    narrow = _step(BASE, defaults, model="gpt2")
    wide = _step(BASE, defaults, model="llama-2-13b")
    assert wide.mfu > narrow.mfu  # type: ignore[attr-defined]


def test_dp_allreduce_hides_behind_backward_with_one_micro_batch(defaults: PerfDefaults
                                                                 ) -> None:
    # One micro-batch: the whole backward overlaps the gradient all-reduce.
    one = _step(replace(BASE, grad_accum=1, micro_batch=4), defaults)
    assert one.data_parallel_exposed_s == 0  # type: ignore[attr-defined]
    # 64 nodes over slow Ethernet, many micro-batches: the all-reduce shows.
    gpu = get_gpu("H100")
    slow = estimate_training_step(
        model_shape(arch("llama-2-13b")), gpu,
        replace(BASE, layout=ParallelLayout(dp=512, zero=1), grad_accum=64),
        network=defaults.networks["eth-100"], assumptions=defaults.training)
    assert slow.data_parallel_exposed_s > 0


def test_missing_precision_is_an_input_error(defaults: PerfDefaults) -> None:
    with pytest.raises(InputError, match="bf16"):
        _step(BASE, defaults, gpu="V100")


def test_throughput_grows_with_gpus(defaults: PerfDefaults) -> None:
    gpu = get_gpu("H100")
    shape = model_shape(arch("llama-2-7b"))
    hw = hardware_terms(gpu, Dtype.BF16, defaults.network_for("H100"), defaults.training)
    dps = [8, 64, 512, 4096]
    setups = [replace(BASE, layout=ParallelLayout(dp=dp, zero=1), grad_accum=max(1, 1024 // dp))
              for dp in dps]
    tokens = training_step_arrays(shape, hw, layout_arrays(setups), defaults.training).tokens_per_s
    assert np.all(np.diff(tokens) > 0)
    per_gpu = tokens / np.array(dps)
    assert np.all(np.diff(per_gpu) < 0)  # but each GPU does a little less


def test_options_on_different_gpus_in_one_call(defaults: PerfDefaults) -> None:
    from costsim.perf.train_estimate import FleetOption, score_fleet_options

    model = arch("llama-2-7b")
    options = [
        FleetOption(gpu=get_gpu(name), network=defaults.network_for(name),
                    setup=replace(BASE, precision=get_gpu(name).default_precision,
                                  layout=ParallelLayout(tp=tp, dp=dp, zero=zero)))
        for name, tp, dp, zero in (("A100-80GB", 1, 64, 3), ("H100", 2, 32, 1),
                                   ("V100-32GB", 4, 16, 1), ("L40S", 1, 8, 3))
    ]
    arrays = score_fleet_options(model, options, defaults=defaults)
    for i, option in enumerate(options):
        one = estimate_training_step(model_shape(model), option.gpu, option.setup,
                                     network=option.network, assumptions=defaults.training)
        assert one.step_time_s == pytest.approx(float(arrays.step_time_s[i]), rel=1e-12)
        assert one.mfu == pytest.approx(float(arrays.mfu[i]), rel=1e-12)


def test_lora_skips_weight_gradients_and_their_allreduce(defaults: PerfDefaults) -> None:
    from costsim.domain.workload import LoraConfig

    model = arch("llama-2-7b")
    gpu = get_gpu("A100-80GB")
    full = replace(BASE, layout=ParallelLayout(dp=64, zero=1), grad_accum=2)
    lora = replace(full, task=Task.FINETUNE,
                   lora=LoraConfig(rank=16, targets=("q_proj", "v_proj")))
    net = defaults.networks["eth-100"]  # slow network: the full gradient all-reduce shows
    one = estimate_training_step(model_shape(model), gpu, full, network=net,
                                 assumptions=defaults.training, arch=model)
    two = estimate_training_step(model_shape(model), gpu, lora, network=net,
                                 assumptions=defaults.training, arch=model)
    assert two.step_time_s < one.step_time_s
    # Frozen weights (all of them, head included) lose their weight gradients (2·N); the
    # adapters train fully (6·N_adapter).
    adapters = adapter_counts_of(model, lora.lora).total  # type: ignore[arg-type]
    assert two.hardware_flops_per_token == pytest.approx(
        one.hardware_flops_per_token - 2 * model_shape(model).params_active + 6 * adapters)
    assert two.model_flops_per_token <= two.hardware_flops_per_token
    assert two.data_parallel_exposed_s < 0.01 * one.data_parallel_exposed_s
    with pytest.raises(InputError, match="architecture"):
        layout_arrays([lora])


def test_tp_overlap_follows_the_generation(defaults: PerfDefaults) -> None:
    """Hopper-era frameworks hide part of the TP collectives (Transformer Engine); the A100
    tables (Megatron-LM 2021) ran them on the critical path."""
    assert defaults.training.tp_overlap("ampere") == 0.0
    assert 0.0 < defaults.training.tp_overlap("hopper") < 1.0
    setup = replace(BASE, layout=ParallelLayout(tp=8, pp=1, dp=1), grad_accum=64)
    shape = model_shape(arch("llama-2-13b"))
    net = defaults.network_for("H100")
    gpu = get_gpu("H100")
    exposed = replace(defaults.training, tp_overlap_by_generation={})
    full = estimate_training_step(shape, gpu, setup, network=net, assumptions=exposed)
    hidden = estimate_training_step(shape, gpu, setup, network=net,
                                    assumptions=defaults.training)
    assert hidden.tensor_parallel_s == pytest.approx(
        (1 - defaults.training.tp_overlap("hopper")) * full.tensor_parallel_s)


def test_zero1_hides_more_of_the_dp_collective_than_ddp(defaults: PerfDefaults) -> None:
    gpu = get_gpu("A100-80GB")
    shape = model_shape(arch("llama-2-7b"))
    net = defaults.networks["eth-100"]
    ddp = estimate_training_step(shape, gpu, replace(BASE, layout=ParallelLayout(dp=64)),
                                 network=net, assumptions=defaults.training)
    zero1 = estimate_training_step(shape, gpu,
                                   replace(BASE, layout=ParallelLayout(dp=64, zero=1)),
                                   network=net, assumptions=defaults.training)
    assert zero1.data_parallel_exposed_s < ddp.data_parallel_exposed_s


@pytest.mark.parametrize(("gpu", "vidur"), [
    # Vidur's Llama-2-7B linear layers, achieved fraction of peak at 128 / 512 / 4096 tokens
    # (microsoft/vidur data/profiling/compute/{a100,h100}/.../mlp.csv; reference §1.3).
    ("A100-80GB", (0.47, 0.70, 0.71)),
    ("H100", (0.29, 0.64, 0.76)),
])
def test_tokens_per_gemm_term_follows_vidurs_profile(gpu: str, vidur: tuple[float, ...],
                                                     defaults: PerfDefaults) -> None:
    """Compute time per token scales with 1/g(M), M = micro-batch × sequence length; relative
    to 4096 tokens, g reproduces Vidur's 128- and 512-token points within 0.15."""
    def compute_per_token(micro_batch: int, seq_len: int) -> float:
        setup = replace(BASE, micro_batch=micro_batch, seq_len=seq_len, grad_accum=1)
        step = _step(setup, defaults, gpu=gpu)
        flops = step.hardware_flops_per_token  # type: ignore[attr-defined]
        return step.compute_s / (micro_batch * seq_len) / flops  # type: ignore[attr-defined]

    half = defaults.training.gemm_half_tokens(get_gpu(gpu).generation)
    # Same sequence length, so the same FLOPs per token: only g(M) differs.
    ratio = compute_per_token(1, 4096) / compute_per_token(32, 4096)
    assert ratio == pytest.approx((1 + half / 4096) / (1 + half / (32 * 4096)), rel=1e-9)
    for tokens, measured in zip((128, 512), vidur[:2], strict=True):
        g_rel = (tokens / (tokens + half)) / (4096 / (4096 + half))
        assert g_rel == pytest.approx(measured / vidur[2], abs=0.15)


def test_bigger_micro_batches_run_closer_to_peak(defaults: PerfDefaults) -> None:
    small = _step(replace(BASE, seq_len=512, micro_batch=1, grad_accum=64), defaults)
    big = _step(replace(BASE, seq_len=512, micro_batch=16, grad_accum=4), defaults)
    assert big.mfu > 1.2 * small.mfu  # type: ignore[attr-defined]
