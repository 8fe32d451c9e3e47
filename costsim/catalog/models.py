"""Model presets (shipped Hugging Face configs) and user ``config.json`` files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from costsim.catalog.hf_config import MAX_CONFIG_BYTES, architecture_from_config
from costsim.catalog.resources import read_data_csv, read_data_text, read_user_bytes
from costsim.domain.architecture import Architecture
from costsim.errors import CatalogError, ConfigError, name_key, printable


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelPreset:
    """A shipped model: its architecture and where the config came from."""

    name: str
    description: str
    source: str
    source_date: str
    architecture: Architecture


@cache
def _preset_rows() -> dict[str, dict[str, str]]:
    return {row["name"]: row for row in read_data_csv("models", "presets.csv")}


def preset_names() -> tuple[str, ...]:
    """Names of every shipped model preset, in catalog order."""
    return tuple(_preset_rows())


def load_preset(name: str, source: str = "--model") -> ModelPreset:
    """Return the preset called ``name`` (case, '-', '_' and spaces ignored).

    Raises:
        CatalogError: no such preset; the message suggests close names.
    """
    rows = _preset_rows()
    by_key = {name_key(key): key for key in rows}
    canonical = by_key.get(name_key(name))
    if canonical is None:
        raise CatalogError("model preset", name, rows, source=source)
    row = rows[canonical]
    config = json.loads(read_data_text("models", row["file"]))
    return ModelPreset(
        name=canonical,
        description=row["description"],
        source=row["source"],
        source_date=row["source_date"],
        architecture=architecture_from_config(config, name=canonical, source=row["file"]),
    )


def preset_for_model_id(model_id: str) -> str | None:
    """The preset a benchmark's model id names, or None: a preset name, or the Hugging Face
    repository its config was taken from (``meta-llama/Meta-Llama-3-8B``, the ``source``
    column of presets.csv), also with an ``-Instruct`` / ``-Chat`` suffix (tuned variants keep
    the base model's shape). Case, '-', '_' and spaces are ignored."""
    rows = _preset_rows()
    by_key = {name_key(name): name for name in rows}
    for name, row in rows.items():
        words = row["source"].split()
        if words and words[0].startswith("huggingface.co/"):
            by_key.setdefault(name_key(words[0].removeprefix("huggingface.co/")), name)
    key = name_key(model_id)
    for suffix in ("", "instruct", "chat"):
        if suffix and not key.endswith(suffix):
            continue
        found = by_key.get(key.removesuffix(suffix) if suffix else key)
        if found is not None:
            return found
    return None


def load_architecture_file(path: Path) -> Architecture:
    """Read a Hugging Face ``config.json`` from ``path``.

    Raises:
        ConfigError: the file is missing, too large, not JSON, or not a supported config.
    """
    source = str(path)
    try:
        data = read_user_bytes(path, MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read the file ({exc.strerror or exc})") from exc
    if data is None:
        raise ConfigError(source, "", f"a config must be at most {MAX_CONFIG_BYTES:,} bytes "
                                      "(is this a weights or data file?)")
    try:
        config = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(source, "", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                                      f"offset {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(
            source, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg})"
        ) from exc
    except RecursionError:
        raise ConfigError(source, "", "not a config: JSON nested too deeply") from None
    name = config.get("_name_or_path") if isinstance(config, dict) else None
    fallback = path.parent.name if path.stem == "config" and path.parent.name else path.stem
    label = name if isinstance(name, str) and name.strip() else fallback
    return architecture_from_config(config, name=display_name(label), source=source)


# A model name is printed in tables and JSON; a real one is a short hub id ("org/model").
MAX_NAME_CHARS = 200


def display_name(name: str) -> str:
    """``name`` safe to print: control characters and lone surrogates (which no terminal or
    UTF-8 stream can show) escaped, and cut to :data:`MAX_NAME_CHARS`."""
    shown = printable(name.strip())
    return shown if len(shown) <= MAX_NAME_CHARS else shown[: MAX_NAME_CHARS - 3] + "..."
