"""FLOPs per token: PaLM's model FLOPs, the hardware FLOPs of recomputation, and what LoRA
computes (frozen weights 4N, adapters 6N)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.memory.shape import model_shape
from costsim.perf.flops import (
    forward_flops_per_token,
    hardware_flops_per_token,
    model_flops_per_token,
)
from tests.perf.conftest import arch


def test_model_flops_follow_palm_definition() -> None:
    shape = model_shape(arch("llama-2-7b"))
    expected = 6 * 6_738_415_616 + 12 * 32 * 4096 * 4096
    assert float(model_flops_per_token(shape, 4096)) == pytest.approx(expected, rel=1e-12)


def test_full_recompute_adds_one_forward_of_the_layers_not_the_head() -> None:
    shape = model_shape(arch("megatron-gpt-1.7b"))
    s = 2048
    extra = float(hardware_flops_per_token(shape, s, 2) - model_flops_per_token(shape, s))
    assert extra == pytest.approx(2 * shape.all_layers_params_active + 4 * 24 * 2304 * s)
    # Megatron's hardware-FLOP formula (full recompute) agrees to ~1 %: it counts the linear
    # layers as 12h² per layer and leaves out norms, biases and embeddings.
    megatron = 96 * 24 * 2304**2 * (1 + s / (6 * 2304) + 51200 / (16 * 24 * 2304))
    assert float(hardware_flops_per_token(shape, s, 2)) == pytest.approx(megatron, rel=0.02)


def test_selective_recompute_adds_only_the_attention_core() -> None:
    shape = model_shape(arch("llama-2-7b"))
    extra = hardware_flops_per_token(shape, 4096, 1) - model_flops_per_token(shape, 4096)
    assert float(extra) == pytest.approx(4 * 32 * 4096 * 4096)
    assert float(hardware_flops_per_token(shape, 4096, 0)) == float(
        model_flops_per_token(shape, 4096))


def test_flops_accept_arrays() -> None:
    shape = model_shape(arch("llama-2-7b"))
    seqs = np.array([1024, 2048, 4096])
    vector = model_flops_per_token(shape, seqs)
    assert vector.shape == (3,)
    assert [float(model_flops_per_token(shape, s)) for s in seqs] == pytest.approx(list(vector))
    assert float(forward_flops_per_token(shape, 0)) == 2 * shape.params_active


def test_moe_counts_active_parameters() -> None:
    from costsim.catalog.models import load_preset

    shape = model_shape(load_preset("mixtral-8x7b").architecture)
    assert shape.params_active < shape.params_total / 2
    assert shape.expert_params > 0


def test_shape_counts_match_the_architecture() -> None:
    from costsim.catalog.models import load_preset

    for model in (arch("llama-2-7b"), load_preset("mixtral-8x7b").architecture):
        counts = model.params()
        shape = model_shape(model)
        assert shape.params_total == counts.total
        assert shape.params_active == counts.active
        # all_layers_* spans every block; layer_params_active is one block.
        assert shape.all_layers_params_active == counts.num_layers * counts.per_layer_active
    dense = model_shape(arch("llama-2-7b"))
    assert dense.num_experts == 0
    assert dense.expert_params == 0


def test_lora_model_flops_count_frozen_weights_at_4n_and_adapters_at_6n() -> None:
    """Frozen weights: forward 2N + activation gradient 2N, no weight gradient."""
    shape = model_shape(arch("llama-2-7b"))
    attention = 12 * 32 * 4096 * 4096
    adapters = 4_194_304  # rank 8 on q_proj, v_proj of 32 layers: 8·(4096+4096)·2·32
    lora = float(model_flops_per_token(shape, 4096, True, adapters))
    assert lora == pytest.approx(4 * shape.params_active + 6 * adapters + attention)


@settings(max_examples=60, deadline=None)
@given(seq=st.integers(1, 32_768), adapter_share=st.floats(0.0, 0.2),
       recompute=st.sampled_from([0, 1, 2]))
def test_lora_flops_lie_between_4n_and_6n_and_never_exceed_hardware(
        seq: int, adapter_share: float, recompute: int) -> None:
    """Per token, LoRA's weight FLOPs (without the attention core) lie between 4N and 6N of
    the model it trains (base + adapters), and its model FLOPs never exceed its hardware
    FLOPs nor full training's."""
    shape = model_shape(arch("llama-2-7b"))
    adapters = adapter_share * shape.params_active
    attention = 12 * shape.num_layers * shape.q_size * seq
    lora = float(model_flops_per_token(shape, seq, True, adapters))
    weights = lora - attention
    trained = shape.params_active + adapters
    assert 4 * trained <= weights * (1 + 1e-12)
    assert weights <= 6 * trained * (1 + 1e-12)
    assert lora <= float(hardware_flops_per_token(shape, seq, recompute, True, adapters))
    assert lora <= float(model_flops_per_token(shape, seq)) + 6 * adapters
