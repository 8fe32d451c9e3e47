"""Typed reads from a Hugging Face config dictionary; every error names the file and the key.

Every size is checked once, here, against :data:`KEY_MAXIMA`: a whole number (JSON ``NaN``,
``Infinity``, ``1e400`` and fractions are refused) within what any real model has, so that no
count downstream overflows or runs for hours (docs/inputs.md lists the ranges).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from costsim.errors import ConfigError

_DEPTH = "~80x the deepest published LLM (Llama 3.1 405B: 126 layers)"
_WIDTH = "~40x the widest published LLM (Megatron 1T: hidden 25,600)"
_HEADS = "~600x the most heads published (Megatron 1T: 160)"
_FFN = "~190x the widest published MLP (Llama 3.1 405B: 53,248)"
_POSITIONS = "10x the longest published context (Llama 4 Scout: 10M tokens)"

# Largest value of each size key, with why (the smallest is 1; type_vocab_size 0). Families
# read a size under several names (n_layer / num_hidden_layers): each name has an entry.
KEY_MAXIMA: dict[str, tuple[int, str]] = {
    **dict.fromkeys(("num_hidden_layers", "n_layer"), (10_000, _DEPTH)),
    **dict.fromkeys(("hidden_size", "n_embd", "n_embed"), (1_000_000, _WIDTH)),
    **dict.fromkeys(("num_attention_heads", "n_head", "num_key_value_heads", "num_kv_heads",
                     "n_head_kv"), (100_000, _HEADS)),
    "head_dim": (100_000, "~400x the largest published head (Gemma: 256)"),
    **dict.fromkeys(("intermediate_size", "n_inner", "ffn_hidden_size"), (10_000_000, _FFN)),
    "vocab_size": (100_000_000, "~400x the largest published vocabulary (Gemma: 256,000)"),
    **dict.fromkeys(("max_position_embeddings", "n_positions", "seq_length", "sliding_window"),
                    (100_000_000, _POSITIONS)),
    "num_local_experts": (100_000, "~260x the most experts published (Kimi K2: 384)"),
    "num_experts_per_tok": (100_000, "at most the experts"),
    "type_vocab_size": (1_000, "BERT uses 2 token types"),
    "num_ln_in_parallel_attn": (2, "Falcon's parallel block has one or two norms"),
}


class ConfigKeys:
    """Typed reads from a config dict; every error names the source and the key."""

    def __init__(self, config: Mapping[str, Any], source: str) -> None:
        self.config = config
        self.source = source

    def _raw(self, names: tuple[str, ...]) -> tuple[str, Any]:
        for name in names:
            if name in self.config and self.config[name] is not None:
                return name, self.config[name]
        return names[0], None

    def get_int(self, *names: str, default: int | None = None, minimum: int = 1) -> int:
        """The whole number under the first present key of ``names`` (else ``default``),
        within ``minimum``..:data:`KEY_MAXIMA`."""
        key, value = self._raw(names)
        if value is None:
            if default is None:
                raise ConfigError(self.source, key, "required key is missing")
            return default
        maximum, _ = KEY_MAXIMA[key]
        rule = f"must be a whole number in {minimum:,}..{maximum:,}"
        whole = isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)
                                           and value.is_integer())
        if isinstance(value, bool) or not whole or not minimum <= value <= maximum:
            raise ConfigError(self.source, key, f"{rule} (got {show_value(value)})")
        return int(value)

    def optional_int(self, *names: str) -> int | None:
        _, value = self._raw(names)
        return None if value is None else self.get_int(*names)

    def get_bool(self, *names: str, default: bool) -> bool:
        key, value = self._raw(names)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(self.source, key, f"must be true or false (got {show_value(value)})")
        return value

    def any_dropout(self, *names: str, default: float) -> bool:
        """True when any dropout probability ``names`` is > 0; a missing one is ``default``
        (the family's transformers default)."""
        dropout = False
        for name in names:
            value = self.config.get(name)
            if value is None:
                value = default
            elif isinstance(value, bool) or not isinstance(value, int | float) or not (
                0 <= value < 1
            ):
                raise ConfigError(self.source, name,
                                  f"must be a probability in [0, 1) (got {show_value(value)})")
            dropout = dropout or value > 0
        return dropout


def show_value(value: object) -> str:
    """A config value for an error message: JSON's spelling, cut to a readable length."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def head_dim_of(keys: ConfigKeys, hidden: int, heads: int, heads_key: str) -> int:
    explicit = keys.optional_int("head_dim")
    if explicit is not None:
        return explicit
    if hidden % heads:
        raise ConfigError(
            keys.source,
            heads_key,
            f"attention heads must divide the hidden size (got {heads} heads, hidden {hidden})",
        )
    return hidden // heads
