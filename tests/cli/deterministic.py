"""What DESIGN §7 lets differ between two runs with the same inputs and seed."""

from __future__ import annotations

from typing import Any


def deterministic(value: Any) -> Any:
    """``value`` without the keys allowed to differ: ``wall_s``, ``generated_at`` and keys
    ending in ``_path`` or ``_dir``."""
    if isinstance(value, dict):
        return {k: deterministic(v) for k, v in value.items()
                if k not in ("wall_s", "generated_at") and not k.endswith(("_path", "_dir"))}
    if isinstance(value, list):
        return [deterministic(v) for v in value]
    return value
