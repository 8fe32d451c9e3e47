"""Properties of the step-time and serving formulas over random inputs (hypothesis)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.catalog.perf_defaults import perf_defaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import TrainingFramework
from costsim.memory.shape import model_shape
from costsim.perf.goodput import goodput_arrays
from costsim.perf.training import LayoutArrays, hardware_terms, training_step_arrays
from tests.perf.conftest import arch

DEFAULTS = perf_defaults()
SHAPE = model_shape(arch("llama-2-13b"))
HW = hardware_terms(get_gpu("H100"), Dtype.BF16, DEFAULTS.network_for("H100"),
                    DEFAULTS.training)


def _layout(tp: int, pp: int, dp: int, zero: int, mb: int, ga: int, seq: int,
            rc: int) -> LayoutArrays:
    def one(value: int) -> np.ndarray:
        return np.asarray([value], dtype=np.int64)

    return LayoutArrays(tp=one(tp), pp=one(pp), dp=one(dp), zero=one(zero), micro_batch=one(mb),
                        grad_accum=one(ga), seq_len=one(seq), recompute=one(rc))


layouts = st.tuples(st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([1, 2, 4, 8]),
                    st.integers(1, 4096), st.integers(0, 3), st.sampled_from([1, 2, 4, 8]),
                    st.integers(1, 256), st.sampled_from([512, 2048, 4096]),
                    st.integers(0, 2))


@settings(max_examples=200, deadline=None)
@given(layouts)
def test_step_is_positive_and_adds_up(layout: tuple[int, ...]) -> None:
    arrays = training_step_arrays(SHAPE, HW, _layout(*layout), DEFAULTS.training)
    step = float(arrays.step_time_s[0])
    parts = float(arrays.compute_s[0] + arrays.communication_exposed_s[0]
                  + arrays.pipeline_bubble_s[0] + arrays.sync_s[0])
    assert np.isfinite(step)
    assert step > 0
    assert abs(parts - step) <= 1e-9 * step
    assert 0 < float(arrays.mfu[0]) <= float(arrays.hfu[0]) < 1


@settings(max_examples=100, deadline=None)
@given(layouts, st.integers(2, 64))
def test_more_micro_batches_never_lower_throughput_per_rank(layout: tuple[int, ...],
                                                            factor: int) -> None:
    tp, pp, dp, zero, mb, ga, seq, rc = layout
    base = training_step_arrays(SHAPE, HW, _layout(*layout), DEFAULTS.training)
    more = training_step_arrays(SHAPE, HW, _layout(tp, pp, dp, zero, mb, ga * factor, seq, rc),
                                DEFAULTS.training)
    # More micro-batches per step shrink the bubble and amortize the DP collective; only
    # ZeRO-3's per-micro-batch gathers scale with them, and those stay hidden or proportional.
    assert float(more.tokens_per_s[0]) >= float(base.tokens_per_s[0]) * (1 - 1e-9)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200_000), st.floats(1e8, 2e12))
def test_goodput_between_floor_and_one(gpus: int, params: float) -> None:
    value = float(goodput_arrays(gpus, params, 8, DEFAULTS.goodput).goodput)
    assert 0.01 <= value <= 1 - DEFAULTS.goodput.evaluation_fraction + 1e-12


@settings(max_examples=200, deadline=None)
@given(layouts, st.sampled_from(["train", "lora", "qlora"]),
       st.sampled_from(list(TrainingFramework)), st.floats(1e-4, 0.05))
def test_mfu_never_exceeds_hfu_for_any_task_or_framework(layout: tuple[int, ...], task: str,
                                                         framework: TrainingFramework,
                                                         adapter_share: float) -> None:
    """Both utilizations count what is computed (LoRA: frozen weights 4N, adapters 6N), so
    MFU ≤ HFU < 1 for full training, LoRA and QLoRA under every framework."""
    one = _layout(*layout)
    if task != "train":
        adapters = np.asarray([adapter_share * SHAPE.params_total])
        quantized = SHAPE.num_layers * SHAPE.layer_linear_params if task == "qlora" else 0.0
        one = replace(one, trainable_params=adapters, frozen_base=np.asarray([True]),
                      quantized_params=np.asarray([float(quantized)]))
    hw = hardware_terms(get_gpu("H100"), Dtype.BF16, DEFAULTS.network_for("H100"),
                        DEFAULTS.training, framework)
    arrays = training_step_arrays(SHAPE, hw, one, DEFAULTS.training)
    assert 0 < float(arrays.mfu[0]) <= float(arrays.hfu[0]) < 1


@settings(max_examples=100, deadline=None)
@given(layouts)
def test_qlora_dequantization_only_slows_lora(layout: tuple[int, ...]) -> None:
    """The same LoRA step with 4-bit frozen weights moves the dequantized copies through HBM:
    never faster, the same model FLOPs, more hardware FLOPs (the dequantization)."""
    adapters = np.asarray([1e-3 * SHAPE.params_total])
    lora = replace(_layout(*layout), trainable_params=adapters, frozen_base=np.asarray([True]))
    qlora = replace(lora, quantized_params=np.asarray(
        [float(SHAPE.num_layers * SHAPE.layer_linear_params)]))
    a = training_step_arrays(SHAPE, HW, lora, DEFAULTS.training)
    b = training_step_arrays(SHAPE, HW, qlora, DEFAULTS.training)
    assert float(b.step_time_s[0]) > float(a.step_time_s[0])
    assert float(b.model_flops_per_token[0]) == float(a.model_flops_per_token[0])
    assert float(b.hardware_flops_per_token[0]) > float(a.hardware_flops_per_token[0])
