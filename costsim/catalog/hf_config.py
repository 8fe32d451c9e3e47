"""Hugging Face ``config.json`` dictionaries → :class:`Architecture`.

Each family's keys and defaults follow the ``*Config`` class of the transformers library
(e.g. ``LlamaConfig``: ``num_key_value_heads`` defaults to ``num_attention_heads``, ``head_dim``
to hidden / heads). Keys are read, never executed.
"""

from __future__ import annotations

from collections.abc import Mapping

from costsim.catalog.hf_families import FAMILY_READERS, MODEL_TYPE_ALIASES
from costsim.catalog.hf_keys import ConfigKeys
from costsim.domain.architecture import ArchFamily, Architecture
from costsim.errors import ConfigError

# Real config.json files are a few KB; a bound on input size (README: bad input) keeps a wrong path
# (a weights file, a data set) from being read into memory.
MAX_CONFIG_BYTES = 1_000_000


def architecture_from_config(
    config: object, *, name: str, source: str = "config.json"
) -> Architecture:
    """Build the :class:`Architecture` a Hugging Face config describes.

    Raises:
        ConfigError: the config is not a JSON object, names an unsupported ``model_type``, or a
            size is missing, non-integer, non-positive or inconsistent (heads not dividing hidden).
    """
    if not isinstance(config, Mapping):
        raise ConfigError(source, "", "a config must be a JSON object")
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ConfigError(source, "model_type", "required key is missing")
    family = MODEL_TYPE_ALIASES.get(model_type.lower())
    if family is None:
        supported = ", ".join(f.value for f in ArchFamily)
        raise ConfigError(
            source, "model_type", f"unsupported model_type {model_type!r} (supported: {supported})"
        )
    keys = ConfigKeys(config, source)
    fields = FAMILY_READERS[family](keys)
    try:
        return Architecture(name=name, family=family, **fields)
    except ValueError as exc:
        raise ConfigError(source, "", str(exc)) from exc
