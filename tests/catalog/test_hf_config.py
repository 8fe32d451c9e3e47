"""Bad model configs give one clear error naming the file, the key and the rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from costsim.catalog.hf_config import architecture_from_config
from costsim.catalog.models import load_architecture_file, load_preset
from costsim.errors import CatalogError, ConfigError

LLAMA = {
    "model_type": "llama",
    "hidden_size": 512,
    "num_attention_heads": 8,
    "num_hidden_layers": 2,
    "intermediate_size": 1024,
    "vocab_size": 1000,
}


@pytest.mark.parametrize(
    ("change", "key", "rule"),
    [
        ({"hidden_size": 0}, "hidden_size", "must be a whole number in 1..1,000,000 (got 0)"),
        ({"num_hidden_layers": -3}, "num_hidden_layers", "in 1..10,000 (got -3)"),
        ({"vocab_size": 1.5}, "vocab_size", "must be a whole number in 1..100,000,000"),
        ({"intermediate_size": "big"}, "intermediate_size", "(got 'big')"),
        # issue 8: non-finite, overflowing and absurd sizes, lists and unicode
        ({"hidden_size": float("nan")}, "hidden_size", "(got NaN)"),
        ({"hidden_size": float("inf")}, "hidden_size", "(got Infinity)"),
        ({"vocab_size": -float("inf")}, "vocab_size", "(got -Infinity)"),
        ({"num_hidden_layers": 10**12}, "num_hidden_layers",
         "in 1..10,000 (got 1000000000000)"),
        ({"max_position_embeddings": 1e20}, "max_position_embeddings", "(got 1e+20)"),
        ({"num_hidden_layers": [32]}, "num_hidden_layers", "(got [32])"),
        ({"num_attention_heads": "３２"}, "num_attention_heads", "(got '３２')"),
        ({"head_dim": True}, "head_dim", "(got True)"),
        ({"vocab_size": 10**400}, "vocab_size", "(got 10000000000"),
        ({"model_type": ["llama"]}, "model_type", "must be a string"),
        ({"model_type": "llämä"}, "model_type", "unsupported model_type 'llämä'"),
        ({"attention_dropout": float("nan")}, "attention_dropout", "probability in [0, 1)"),
        ({"hidden_size": 1_000_000, "num_attention_heads": 1000, "intermediate_size": 10**7,
          "num_hidden_layers": 10}, "", "parameters; a model must have at most 10^14"),
        ({"num_attention_heads": 7}, "num_attention_heads", "must divide the hidden size"),
        ({"num_key_value_heads": 3}, "", "num_key_value_heads must divide"),
        ({"tie_word_embeddings": "yes"}, "tie_word_embeddings", "true or false"),
        ({"model_type": "t5"}, "model_type", "unsupported model_type 't5'"),
    ],
)
def test_invalid_values_are_named(change: dict[str, Any], key: str, rule: str) -> None:
    """Each rule violation names the key and the rule."""
    with pytest.raises(ConfigError) as info:
        architecture_from_config({**LLAMA, **change}, name="x", source="my/config.json")
    message = str(info.value)
    assert message.startswith("my/config.json")
    assert key in message
    assert rule in message


def test_missing_model_type_is_an_error() -> None:
    """A config without model_type cannot be interpreted."""
    config = {k: v for k, v in LLAMA.items() if k != "model_type"}
    with pytest.raises(ConfigError, match="model_type: required key is missing"):
        architecture_from_config(config, name="x")


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    """A syntax error points at the line and column of the file."""
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama",\n "hidden_size": }\n')
    with pytest.raises(ConfigError, match=r"line 2 column \d+: not valid JSON"):
        load_architecture_file(path)


def test_missing_file_and_non_object(tmp_path: Path) -> None:
    """A missing file and a JSON array are both clear errors."""
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_architecture_file(tmp_path / "absent.json")
    path = tmp_path / "list.json"
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(ConfigError, match="must be a JSON object"):
        load_architecture_file(path)


def test_unknown_preset_suggests_close_names() -> None:
    """Unknown presets get 'did you mean'."""
    with pytest.raises(CatalogError, match="did you mean 'llama-3-8b'"):
        load_preset("llama3-8")


def test_preset_lookup_ignores_case_and_separators() -> None:
    """LLaMA_2 7B and llama-2-7b are the same preset."""
    assert load_preset("LLaMA_2 7B").name == "llama-2-7b"


def test_dropout_follows_the_config_and_the_family_default() -> None:
    """Dropout masks are saved only when the config trains with dropout (HF defaults: 0.1 for
    gpt2 and bert, 0.0 for llama-style and fused families)."""
    gpt2 = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 1}
    assert architecture_from_config(gpt2, name="g").dropout
    no_drop = {**gpt2, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0}
    assert not architecture_from_config(no_drop, name="g").dropout
    partial = {**gpt2, "attn_pdrop": 0.0}  # resid/embd keep their 0.1 default
    assert architecture_from_config(partial, name="g").dropout
    assert not architecture_from_config(LLAMA, name="l").dropout
    assert architecture_from_config({**LLAMA, "attention_dropout": 0.1}, name="l").dropout
    with pytest.raises(ConfigError, match="attention_dropout: must be a probability"):
        architecture_from_config({**LLAMA, "attention_dropout": 1.5}, name="l")
