"""Read shipped package data (``costsim/data``) so that a non-editable install works, and
user files with a bound on their size."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING

from costsim.errors import InputError

if TYPE_CHECKING:
    import _csv


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


def read_user_file(path: Path, limit: int) -> bytes:
    """The bytes of a user's file of at most ``limit`` bytes (:func:`read_user_bytes`).

    Raises:
        InputError: naming the file: it cannot be read, or it is over the limit.
    """
    try:
        data = read_user_bytes(path, limit)
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read: {exc.strerror or exc}") from None
    if data is None:
        raise InputError(str(path), "", f"file is over the limit of {limit:,} bytes")
    return data


def user_csv_rows(reader: _csv.Reader, header: list[str], name: str
                  ) -> Iterator[tuple[int, list[str]]]:
    """The data rows of a user's CSV file after its ``header``: (the line the row starts on,
    its cells), blank rows skipped. ``reader`` is a ``csv.reader`` over text opened with
    ``newline=""``, so a quoted multi-line cell keeps the file's own line numbers.

    Raises:
        InputError: ``name:LINE:COLUMN``, a row with more or fewer fields than the header.
        csv.Error: the text is not valid CSV (the caller names the line it reached).
    """
    line = 1
    for cells in reader:
        start, line = line + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise InputError(f"{name}:{start}:{min(len(cells), len(header)) + 1}", "",
                             f"expected {len(header)} fields, found {len(cells)}")
        yield start, cells


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
