"""Read shipped package data (``costsim/data``) so that a non-editable install works."""

from __future__ import annotations

import csv
import io
from importlib import resources


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
