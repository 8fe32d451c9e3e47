"""The ``dataset`` column of the published serving tables (tests/data/serving_published.csv and
the held-out sets' serving.csv) and the shipped length distributions of the datasets a
benchmark replay draws from (costsim/data/request_lengths.csv; issue 18, fifth serving round).

The column is optional and, where present, the last one: a file without it, or an empty cell,
means ``fixed`` (every request the row's stated size). A cell is ``fixed``, ``sharegpt`` or
``other:<name>`` (another varied-length set: llmperf's normal lengths, a fixed list of prompts
of different sizes...)."""

from __future__ import annotations

import csv
import re
from functools import cache
from pathlib import Path

from costsim.catalog.resources import read_data_csv
from costsim.domain.request_lengths import (
    FIXED_DATASET,
    DatasetKind,
    LengthDistribution,
    RequestDataset,
)
from costsim.errors import CatalogError, InputError

DATASET_COLUMN = "dataset"
_OTHER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
RULE = ("must be 'fixed', 'sharegpt' or 'other:<name>' (letters, digits, '.', '_', '+', '-'), "
        "or empty")


def parse_dataset(text: str, *, file: str, row: int) -> RequestDataset:
    """The dataset a cell names; empty is ``fixed``.

    Raises:
        InputError: naming the file, the row as a spreadsheet numbers it, the column, the rule
            and the value.
    """
    value = text.strip()
    if value in ("", DatasetKind.FIXED.value):
        return FIXED_DATASET
    if value == DatasetKind.SHAREGPT.value:
        return RequestDataset(kind=DatasetKind.SHAREGPT)
    prefix = f"{DatasetKind.OTHER.value}:"
    if value.startswith(prefix) and _OTHER_NAME.fullmatch(value[len(prefix):]):
        return RequestDataset(kind=DatasetKind.OTHER, name=value[len(prefix):])
    raise InputError(file, f"row {row}, column {DATASET_COLUMN}", f"{RULE}; got {value!r}")


def read_serving_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a published serving table, in file order, each with its ``dataset`` cell
    checked and written out (``fixed`` where the column is absent or the cell empty).

    Raises:
        InputError: a bad ``dataset`` cell (nothing is returned: the file is read whole first).
    """
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows: list[dict[str, str]] = []
        line = 1
        for row in reader:
            start, line = line + 1, reader.line_num
            dataset = parse_dataset(row.get(DATASET_COLUMN) or "", file=str(path), row=start)
            rows.append({**row, DATASET_COLUMN: dataset.label})
    return rows


def row_dataset(row: dict[str, str]) -> RequestDataset:
    """The dataset of a row read by :func:`read_serving_rows` (or of a hand-made row)."""
    return parse_dataset(row.get(DATASET_COLUMN) or "", file="serving row", row=0)


@cache
def length_distribution(kind: DatasetKind) -> LengthDistribution:
    """The shipped length distribution of a dataset (costsim/data/request_lengths.csv).

    Raises:
        CatalogError: no distribution is shipped for ``kind``.
    """
    rows = {row["dataset"]: row for row in read_data_csv("request_lengths.csv")}
    if kind.value not in rows:
        raise CatalogError("request-length distribution", kind.value, rows,
                           source="costsim/data/request_lengths.csv")
    row = rows[kind.value]
    return LengthDistribution(dataset=kind, min_tokens=int(row["min_tokens"]),
                              max_prompt_tokens=int(row["max_prompt_tokens"]),
                              max_total_tokens=int(row["max_total_tokens"]),
                              source=row["source"])
