"""Exact parameter counts: every validation row and every shipped preset family."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

from costsim.catalog.hf_config import architecture_from_config
from costsim.catalog.models import load_architecture_file, load_preset, preset_names
from costsim.domain.architecture import LinearRole

DATA_DIR = Path(__file__).parents[1] / "data"


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA_DIR / name).open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize(
    "row",
    _rows("params.csv") + _rows("family_params.csv"),
    ids=lambda row: Path(row["config"]).stem,
)
def test_config_parameter_counts_are_exact(row: dict[str, str]) -> None:
    """A config.json gives exactly the documented total and active parameter count."""
    arch = load_architecture_file(DATA_DIR / row["config"])
    counts = arch.params()
    assert counts.total == int(row["expected_params_total"])
    assert counts.active == int(row["expected_params_active"])


@pytest.mark.parametrize("row", _rows("preset_params.csv"), ids=lambda row: row["preset"])
def test_preset_parameter_counts_are_exact(row: dict[str, str]) -> None:
    """Each shipped preset matches its publicly documented parameter count."""
    counts = load_preset(row["preset"]).architecture.params()
    assert counts.total == int(row["expected_params_total"])
    assert counts.active == int(row["expected_params_active"])


def test_every_preset_has_a_documented_count_or_is_synthetic() -> None:
    """No preset ships without an exact-count test (the synthetic test models aside)."""
    documented = {row["preset"] for row in _rows("preset_params.csv")}
    untested = {name for name in preset_names() if name not in documented}
    assert untested == {"tiny-llama", "tiny-mixtral"}


def test_untying_the_head_adds_exactly_one_vocab_by_hidden_matrix() -> None:
    """An untied LM head costs vocab × hidden parameters; a tied one costs none."""
    arch = load_preset("gpt2").architecture
    untied = replace(arch, tie_word_embeddings=False)
    assert untied.params().total - arch.params().total == arch.vocab_size * arch.hidden_size


def test_gqa_shrinks_key_and_value_projections() -> None:
    """With 8 KV heads of 32, k_proj and v_proj are a quarter of q_proj."""
    layers = {layer.role: layer for layer in load_preset("llama-3-8b").architecture.linear_layers()}
    assert layers[LinearRole.K].out_features * 4 == layers[LinearRole.Q].out_features
    assert layers[LinearRole.V].params * 4 == layers[LinearRole.Q].params


def test_moe_active_params_count_only_routed_experts() -> None:
    """Mixtral: total − active = (experts − top-k) × one expert's MLP × layers."""
    arch = load_preset("mixtral-8x7b").architecture
    expert_mlp = 3 * arch.hidden_size * arch.intermediate_size
    counts = arch.params()
    assert counts.total - counts.active == (8 - 2) * expert_mlp * arch.num_layers


def test_hf_defaults_fill_missing_keys() -> None:
    """num_key_value_heads defaults to the attention heads and head_dim to hidden / heads."""
    arch = architecture_from_config(
        {
            "model_type": "llama",
            "hidden_size": 512,
            "num_attention_heads": 8,
            "num_hidden_layers": 2,
            "intermediate_size": 1024,
            "vocab_size": 1000,
        },
        name="x",
    )
    assert arch.num_kv_heads == 8
    assert arch.head_dim == 64
    assert arch.max_position_embeddings == 2048  # LlamaConfig default


def test_qwen2_has_qkv_biases_and_qwen3_has_qk_norms() -> None:
    """The two Qwen generations differ exactly where their modeling code does."""
    base = {
        "hidden_size": 256,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "num_hidden_layers": 1,
        "intermediate_size": 512,
        "vocab_size": 100,
        "head_dim": 64,
    }
    qwen2 = architecture_from_config({**base, "model_type": "qwen2"}, name="q2")
    qwen3 = architecture_from_config({**base, "model_type": "qwen3"}, name="q3")
    llama = architecture_from_config({**base, "model_type": "llama"}, name="l")
    q_out, kv_out = 4 * 64, 2 * 64
    assert qwen2.params().total - llama.params().total == q_out + 2 * kv_out
    assert qwen3.params().total - llama.params().total == 2 * 64


def test_old_falcon_keys_are_understood(tmp_path: Path) -> None:
    """RefinedWebModel configs (n_layer, n_head) read the same as model_type falcon."""
    new = json.loads((DATA_DIR / "architectures/families/falcon-7b.json").read_text())
    old = {
        key: value
        for key, value in new.items()
        if key not in ("num_hidden_layers", "num_attention_heads")
    }
    old.update(model_type="RefinedWebModel", n_layer=32, n_head=71)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(old))
    assert load_architecture_file(path).params().total == 6921720704
