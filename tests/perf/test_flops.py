"""FLOPs per token: PaLM's model FLOPs and the hardware FLOPs of recomputation."""

from __future__ import annotations

import numpy as np
import pytest

from costsim.perf.flops import (
    ModelTerms,
    forward_flops_per_token,
    hardware_flops_per_token,
    model_flops_per_token,
)
from tests.perf.conftest import arch


def test_model_flops_follow_palm_definition() -> None:
    terms = ModelTerms.of(arch("llama-2-7b"))
    expected = 6 * 6_738_415_616 + 12 * 32 * 4096 * 4096
    assert float(model_flops_per_token(terms, 4096)) == pytest.approx(expected, rel=1e-12)


def test_full_recompute_adds_one_forward_of_the_layers_not_the_head() -> None:
    terms = ModelTerms.of(arch("megatron-gpt-1.7b"))
    s = 2048
    extra = float(hardware_flops_per_token(terms, s, 2) - model_flops_per_token(terms, s))
    assert extra == pytest.approx(2 * terms.layer_params_active + 4 * 24 * 2304 * s)
    # Megatron's hardware-FLOP formula (full recompute) agrees to ~1 %: it counts the linear
    # layers as 12h² per layer and leaves out norms, biases and embeddings.
    megatron = 96 * 24 * 2304**2 * (1 + s / (6 * 2304) + 51200 / (16 * 24 * 2304))
    assert float(hardware_flops_per_token(terms, s, 2)) == pytest.approx(megatron, rel=0.02)


def test_selective_recompute_adds_only_the_attention_core() -> None:
    terms = ModelTerms.of(arch("llama-2-7b"))
    extra = hardware_flops_per_token(terms, 4096, 1) - model_flops_per_token(terms, 4096)
    assert float(extra) == pytest.approx(4 * 32 * 4096 * 4096)
    assert float(hardware_flops_per_token(terms, 4096, 0)) == float(
        model_flops_per_token(terms, 4096))


def test_flops_accept_arrays() -> None:
    terms = ModelTerms.of(arch("llama-2-7b"))
    seqs = np.array([1024, 2048, 4096])
    vector = model_flops_per_token(terms, seqs)
    assert vector.shape == (3,)
    assert [float(model_flops_per_token(terms, s)) for s in seqs] == pytest.approx(list(vector))
    assert float(forward_flops_per_token(terms, 0)) == 2 * terms.params_active


def test_moe_counts_active_parameters() -> None:
    from costsim.catalog.models import load_preset

    terms = ModelTerms.of(load_preset("mixtral-8x7b").architecture)
    assert terms.params_active < terms.params_total / 2
    assert terms.expert_params > 0
