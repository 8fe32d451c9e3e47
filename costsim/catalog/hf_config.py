"""Hugging Face ``config.json`` dictionaries → :class:`Architecture`.

Each family's keys and defaults follow the ``*Config`` class of the transformers library
(e.g. ``LlamaConfig``: ``num_key_value_heads`` defaults to ``num_attention_heads``, ``head_dim``
to hidden / heads). Keys are read, never executed.
"""

from __future__ import annotations

from collections.abc import Mapping

from costsim.catalog.hf_families import FAMILY_READERS, MODEL_TYPE_ALIASES
from costsim.catalog.hf_keys import ConfigKeys, show_value
from costsim.domain.architecture import ArchFamily, Architecture
from costsim.errors import ConfigError

# Real config.json files are a few KB; a bound on input size (README: bad input) keeps a wrong path
# (a weights file, a data set) from being read into memory.
MAX_CONFIG_BYTES = 1_000_000

# The largest published models have 1-2 trillion parameters (Switch-C: 1.6T, Fedus et al.
# 2021; Kimi K2: 1T): 10^14 is ~60x that. A config past it is a typo, and its byte counts would
# overflow the int64 arrays of ``memory --grid``.
MAX_PARAMS_EXPONENT = 14
MAX_PARAMS = 10**MAX_PARAMS_EXPONENT


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
    if model_type is None or model_type == "":
        raise ConfigError(source, "model_type", "required key is missing")
    if not isinstance(model_type, str):
        raise ConfigError(source, "model_type", f"must be a string such as \"llama\" "
                                                f"(got {show_value(model_type)})")
    family = MODEL_TYPE_ALIASES.get(model_type.lower())
    if family is None:
        supported = ", ".join(f.value for f in ArchFamily)
        raise ConfigError(
            source, "model_type", f"unsupported model_type {model_type!r} (supported: {supported})"
        )
    keys = ConfigKeys(config, source)
    fields = FAMILY_READERS[family](keys)
    try:
        arch = Architecture(name=name, family=family, **fields)
    except ValueError as exc:
        raise ConfigError(source, "", str(exc)) from exc
    total = arch.params().total
    if total > MAX_PARAMS:
        raise ConfigError(source, "", f"describes {total:,} parameters; a model must have at "
                                      f"most 10^{MAX_PARAMS_EXPONENT} (60x the largest published, "
                                      "Switch-C's 1.6T)")
    return arch
