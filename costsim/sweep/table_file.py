"""The results table on disk: Parquet when pyarrow is installed (the ``distributed`` extra),
CSV otherwise, written atomically into the sweep folder.

Override values keep their type where a column holds one (numbers stay numbers); a column that
mixes types, or holds lists or mappings, is written as JSON text.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from costsim.domain.display import csv_cell
from costsim.sweep.cache import write_atomic
from costsim.sweep.results import SweepResult, table_columns

PARQUET_NAME = "results.parquet"
CSV_NAME = "results.csv"


def _uniform(values: list[Any]) -> list[Any]:
    """A column pyarrow can type: numbers, or text, or None; else each value as JSON text."""
    present = [v for v in values if v is not None]
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return [None if v is None else float(v) for v in values]
    if all(isinstance(v, str) for v in present) or all(isinstance(v, bool) for v in present):
        return values
    return [None if v is None else json.dumps(v, sort_keys=True, default=str) for v in values]


def write_table(result: SweepResult, out_dir: Path) -> Path:
    """Write the results table; return its path."""
    columns = {name: _uniform(values) for name, values in table_columns(result).items()}
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return write_atomic(out_dir / CSV_NAME, _csv_bytes(columns))
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return write_atomic(out_dir / PARQUET_NAME, sink.getvalue())


def _csv_bytes(columns: dict[str, list[Any]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(name) for name in columns])
    for row in zip(*columns.values(), strict=True):
        writer.writerow([_cell(value) for value in row])
    return buffer.getvalue().encode("utf-8")


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # every digit: the file round-trips the figures
    return csv_cell(str(value))  # text (a plan name, an override) never runs in a spreadsheet
