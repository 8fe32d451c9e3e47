"""Read shipped package data (``costsim/data``) so that a non-editable install works, and
user files with a bound on their size."""

from __future__ import annotations

import csv
import io
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path


def read_user_bytes(path: Path, limit: int) -> bytes | None:
    """The bytes of a user's file, or None when it holds more than ``limit`` bytes.

    Reads at most ``limit + 1`` bytes whatever the file's stated size: a device such as
    /dev/zero (size 0, endless) or a file still growing is never read into memory whole.

    Raises:
        OSError: the file cannot be opened or read.
    """
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


def read_data_text(*parts: str) -> str:
    """Return the text of a shipped data file, e.g. ``read_data_text("models", "gpt2.json")``."""
    node = resources.files("costsim").joinpath("data")
    for part in parts:
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


def read_data_csv(*parts: str) -> list[dict[str, str]]:
    """Return the rows of a shipped CSV file as dictionaries keyed by the header."""
    return list(csv.DictReader(io.StringIO(read_data_text(*parts))))


def csv_bool(text: str) -> bool:
    """A ``true``/``false`` cell of a shipped CSV (anything but ``true`` reads as False)."""
    return text.strip().lower() == "true"


def csv_optional_float(text: str) -> float | None:
    """A number cell of a shipped CSV that may be blank (blank reads as None)."""
    return float(text) if text.strip() else None


def shipped_data_sha256() -> str:
    """SHA-256 of every shipped data file (its path and bytes, in name order): the identity of
    the price book and of every default the engines read, for caches of computed results
    (``costsim sweep``) that must never outlive the data they came from."""
    import hashlib

    digest = hashlib.sha256()

    def walk(node: Traversable, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif not child.name.startswith("."):
                digest.update(f"{prefix}{child.name}\0".encode())
                digest.update(child.read_bytes())

    walk(resources.files("costsim").joinpath("data"), "")
    return digest.hexdigest()
