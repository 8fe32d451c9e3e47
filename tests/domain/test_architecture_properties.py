"""Properties of parameter counting over random llama-style shapes."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from costsim.catalog.hf_config import architecture_from_config
from costsim.domain.architecture import Architecture


@st.composite
def llama_shapes(draw: st.DrawFn) -> Architecture:
    kv = draw(st.integers(1, 8))
    heads = kv * draw(st.integers(1, 8))
    head_dim = draw(st.sampled_from([16, 32, 64, 128]))
    config = {
        "model_type": draw(st.sampled_from(["llama", "mistral", "qwen2", "qwen3"])),
        "hidden_size": heads * head_dim,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "num_hidden_layers": draw(st.integers(1, 96)),
        "intermediate_size": draw(st.integers(1, 50_000)),
        "vocab_size": draw(st.integers(1, 200_000)),
        "tie_word_embeddings": draw(st.booleans()),
    }
    return architecture_from_config(config, name="random")


@given(llama_shapes(), st.integers(1, 8))
def test_more_layers_never_mean_fewer_parameters(arch: Architecture, extra: int) -> None:
    """Adding layers adds exactly per_layer parameters each."""
    deeper = replace(arch, num_layers=arch.num_layers + extra)
    assert deeper.params().total - arch.params().total == extra * arch.params().per_layer


@given(llama_shapes())
def test_counts_are_positive_and_active_at_most_total(arch: Architecture) -> None:
    """Counts are positive, active ≤ total, and the parts add up to the total."""
    counts = arch.params()
    assert 0 < counts.active <= counts.total
    linear = sum(layer.params for layer in arch.linear_layers())
    assert counts.per_layer >= linear
    assert counts.total == (
        counts.embedding
        + counts.num_layers * counts.per_layer
        + counts.final_norm
        + counts.lm_head
        + counts.pooler
    )


@given(llama_shapes(), st.integers(2, 16), st.integers(1, 2))
def test_moe_total_grows_with_experts_active_with_top_k(
    arch: Architecture, experts: int, top_k: int
) -> None:
    """An MoE version holds `experts` MLPs per layer but activates only top-k of them."""
    moe = replace(arch, num_experts=experts, experts_per_token=top_k)
    mlp = 3 * arch.hidden_size * arch.intermediate_size * arch.num_layers
    router = arch.hidden_size * experts * arch.num_layers
    assert moe.params().total == arch.params().total + (experts - 1) * mlp + router
    assert moe.params().active == arch.params().total + (top_k - 1) * mlp + router
