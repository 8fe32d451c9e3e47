"""``costsim memory --grid IN.csv --out OUT.csv``: the memory of every row of a CSV grid.

Two paths give byte-identical output files (tests/cli/test_memory_grid.py):

* the **reference** path (:func:`evaluate_grid`): every row is converted, resolved into domain
  objects, validated and encoded one by one (about 100 µs a row), then all rows are evaluated
  in two vectorized calls;
* the **fast** path (:func:`evaluate_columns`, the default): each column's distinct texts are
  converted once; rows are grouped by the values that need Python objects (model or arch, GPU,
  task, precision, quantization, optimizer, bytes preset, LoRA, recompute, sp, flash attention,
  and which numeric cells are given). Each group is resolved, validated and encoded once, on a
  probe row whose numbers are always valid; the numeric columns (tp, pp, dp, gpus, zero,
  micro-batch, seq-len, grad-accum, batch, context, prompt and output tokens) are checked and
  encoded for all rows at once with numpy. A row that fails a bulk check, fails a conversion or
  belongs to a group whose probe fails after resolving its objects goes through the reference
  path, so its message is exactly the one-by-one message.

Rows are evaluated in one call for training and one for inference, in row order, as the
reference path does. The fast path reads the file with :func:`csv.reader` in one go and writes
with :func:`csv.writer` from columns, and keeps the garbage collector off the row lists (paused
while they are read, then frozen): 100k rows take about 1.5 s instead of 12 s
(``benchmarks/bench_memory.py --compare``).
"""

from __future__ import annotations

import csv
import gc
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from costsim.cli.flags import (
    CONVERTERS,
)
from costsim.cli.memory_grid_bulk import evaluate_columns, transpose
from costsim.cli.memory_grid_rows import (
    GRID_OUTPUT_COLUMNS,
    MAX_GRID_ROWS,
    column_flag,
    evaluate_grid,
)
from costsim.errors import CatalogError, InputError


def check_header(columns: list[str], source: str) -> None:
    """Known, distinct flag columns incl. model or arch.

    Raises:
        InputError / CatalogError: a bad header.
    """
    if not columns:
        raise InputError(source, "", "is empty: the first line must name the columns "
                                     "(flag names such as model, micro_batch)")
    seen: dict[str, str] = {}
    for column in columns:
        flag = column_flag(column)
        if flag not in CONVERTERS:
            raise CatalogError("grid column", column, list(CONVERTERS), source=source)
        if flag in seen:
            raise InputError(source, column, f"repeats the column {seen[flag]!r} (each flag "
                                             "once)")
        seen[flag] = column
    if "model" not in seen and "arch" not in seen:
        raise InputError(source, "", "needs a 'model' or 'arch' column")


def read_grid_dicts(reader: csv.DictReader[str], source: str
                    ) -> tuple[list[str], list[dict[str, str]]]:
    """The reference reader: the header (checked) and the rows as dicts.

    Raises:
        InputError / CatalogError: a bad header, a row with more cells than the header, or more
            than ``MAX_GRID_ROWS`` rows.
    """
    columns = list(reader.fieldnames or [])
    check_header(columns, source)
    rows: list[dict[str, str]] = []
    for index, raw in enumerate(reader):
        if index >= MAX_GRID_ROWS:
            raise InputError(source, "", f"more than {MAX_GRID_ROWS} rows")
        if None in raw:  # DictReader files surplus cells under the key None
            raise InputError(source, f"line {reader.line_num}",
                             f"has more cells than the {len(columns)} columns of the header")
        rows.append(raw)
    return columns, rows


def read_grid_cells(handle: IO[str], source: str) -> tuple[list[str], list[list[str]]]:
    """The fast reader: what :func:`read_grid_dicts` reads (blank lines skipped, the same
    errors), as lists of cells. The file is read in one go; a file with a row longer than the
    header, or that the csv module rejects, is read again line by line, so that the error
    (and its line number) is the one the reference reader gives."""
    reader = csv.reader(handle)
    columns = list(next(reader, []))
    check_header(columns, source)
    width = len(columns)
    rows: list[list[str]] | None
    try:
        rows = list(filter(None, reader))  # blank lines are skipped
    except csv.Error:
        if not handle.seekable():  # pragma: no cover - grid files are regular files
            raise
        rows = None
    if rows is not None and max(map(len, rows), default=0) <= width:
        if len(rows) > MAX_GRID_ROWS:
            raise InputError(source, "", f"more than {MAX_GRID_ROWS} rows")
        return columns, rows
    if not handle.seekable():  # pragma: no cover - grid files are regular files
        raise InputError(source, "", f"has a row with more cells than the {width} columns of "
                                     "the header")
    handle.seek(0)
    reader = csv.reader(handle)
    next(reader)
    rows = []
    for row in reader:
        if not row:
            continue
        if len(rows) >= MAX_GRID_ROWS:
            raise InputError(source, "", f"more than {MAX_GRID_ROWS} rows")
        if len(row) > width:
            raise InputError(source, f"line {reader.line_num}",
                             f"has more cells than the {width} columns of the header")
        rows.append(row)
    return columns, rows  # pragma: no cover - the first pass found a bad row


def _write_atomic(path: Path, write: Callable[[IO[str]], None]) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            write(handle)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _output_header(columns: list[str]) -> list[str]:
    return columns + [c for c in GRID_OUTPUT_COLUMNS if c not in columns]


def run_grid(grid: Path, out: Path, *, reference: bool = False) -> tuple[int, int]:
    """Read ``grid``, evaluate every row, write ``out`` (to a temporary name, then renamed);
    return (rows, rows with errors). ``reference`` takes the one-by-one path.

    Raises:
        InputError / CatalogError: the grid cannot be read or is malformed (nothing written), or
            ``out`` cannot be written.
    """
    if reference:
        return _run_reference(grid, out)
    return _run_fast(grid, out)


def _read(grid: Path, read: Callable[[IO[str]], tuple[list[str], Any]]
          ) -> tuple[list[str], Any]:
    try:
        handle = grid.open(newline="", encoding="utf-8-sig")  # spreadsheets add a BOM
    except OSError as exc:
        raise InputError(str(grid), "", f"cannot read the file ({exc.strerror})") from exc
    try:
        with handle:
            return read(handle)
    except UnicodeDecodeError as exc:
        raise InputError(str(grid), "", f"is not UTF-8 text (byte {exc.start}); save "
                                        "the grid as CSV (UTF-8)") from None
    except csv.Error as exc:
        raise InputError(str(grid), "", f"is not a valid CSV file ({exc})") from None


def _write(out: Path, write: Callable[[IO[str]], None]) -> None:
    try:
        _write_atomic(out, write)
    except OSError as exc:
        raise InputError("", "--out", f"cannot write {out} ({exc.strerror})") from None


def _run_reference(grid: Path, out: Path) -> tuple[int, int]:
    columns, rows = _read(grid, lambda handle: read_grid_dicts(csv.DictReader(handle),
                                                                 str(grid)))
    header = _output_header(columns)
    results, errors = evaluate_grid(rows, base_dir=grid.parent)

    def write(handle: IO[str]) -> None:
        writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        for raw, result in zip(rows, results, strict=True):
            writer.writerow({**raw, **result})
    _write(out, write)
    return len(rows), errors


def _run_fast(grid: Path, out: Path) -> tuple[int, int]:
    # The cyclic garbage collector would walk the hundreds of thousands of row lists again and
    # again while they are read and as long as they live (a third of the time of a large grid):
    # it is paused while they are read, and then they are frozen out of its sight.
    enabled = gc.isenabled()
    gc.disable()
    try:
        columns, cells = _read(grid, lambda handle: read_grid_cells(handle, str(grid)))
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    try:
        return _evaluate_and_write(grid, out, columns, cells)
    finally:
        del cells  # freed by reference counting, before they rejoin the collector's view
        gc.unfreeze()


def _evaluate_and_write(grid: Path, out: Path, columns: list[str], cells: list[list[str]]
                        ) -> tuple[int, int]:
    header = _output_header(columns)
    texts = transpose(cells, len(columns))
    outputs, errors = evaluate_columns(columns, texts, base_dir=grid.parent)

    def write(handle: IO[str]) -> None:
        writer = csv.writer(handle)
        writer.writerow(header)
        # Input cells + output values, row by row, iterated in C. (An input column never
        # shares a name with an output column: input columns are flags.)
        writer.writerows(zip(*texts, *outputs, strict=True))
    _write(out, write)
    return len(cells), errors
