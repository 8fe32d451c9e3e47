"""FLOPs per token: PaLM's model FLOPs and the hardware FLOPs of recomputation."""

from __future__ import annotations

import numpy as np
import pytest

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
