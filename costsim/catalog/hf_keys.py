"""Typed reads from a Hugging Face config dictionary; every error names the file and the key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costsim.errors import ConfigError


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
        key, value = self._raw(names)
        if value is None:
            if default is None:
                raise ConfigError(self.source, key, "required key is missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise ConfigError(self.source, key, f"must be an integer (got {value!r})")
        if value < minimum:
            raise ConfigError(self.source, key, f"must be >= {minimum} (got {value!r})")
        return int(value)

    def optional_int(self, *names: str) -> int | None:
        _, value = self._raw(names)
        return None if value is None else self.get_int(*names)

    def get_bool(self, *names: str, default: bool) -> bool:
        key, value = self._raw(names)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(self.source, key, f"must be true or false (got {value!r})")
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
                                  f"must be a probability in [0, 1) (got {value!r})")
            dropout = dropout or value > 0
        return dropout


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
