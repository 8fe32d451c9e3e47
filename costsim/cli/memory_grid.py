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
reference path does. The reference path reads with :class:`csv.DictReader` and writes with
:class:`csv.DictWriter`; the fast path reads the file into columns with pandas' C parser and
writes each column's distinct values once (:mod:`costsim.cli.memory_grid_io`), with the same
cells and bytes (``benchmarks/bench_memory.py --compare`` times both).
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NamedTuple

from costsim.cli.flags import (
    CONVERTERS,
)
from costsim.cli.memory_grid_bulk import evaluate_columns
from costsim.cli.memory_grid_io import (
    ObjectArray,
    blanked,
    columns_of,
    csv_records,
    decode_grid,
    factorize,
    pandas_cells,
    write_columns,
)
from costsim.cli.memory_grid_rows import (
    GRID_OUTPUT_COLUMNS,
    INTERNAL_ERROR_PREFIX,
    MAX_GRID_ROWS,
    column_flag,
    evaluate_grid,
)
from costsim.domain.display import csv_cell
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
    if not rows:
        raise _no_rows(source)
    return columns, rows


def _no_rows(source: str) -> InputError:
    return InputError(source, "", "has a header but no rows: add one configuration per line "
                                  "below the header")


def read_grid_columns(text: str, source: str) -> tuple[list[str], list[ObjectArray]]:
    """The fast reader: what :func:`read_grid_dicts` reads (blank lines skipped, short rows
    padded with empty cells, the same errors), as columns of cell texts. pandas' C parser
    reads the files it splits exactly as :mod:`csv` does; the others, and any file with a row
    longer than the header, are read with :func:`csv.reader` (memory_grid_io)."""
    read = pandas_cells(text)
    if read is not None:
        columns = [str(cell) for cell in (column[0] for column in read)]
        check_header(columns, source)
        if len(read[0]) - 1 > MAX_GRID_ROWS:
            raise InputError(source, "", f"more than {MAX_GRID_ROWS} rows")
        if len(read[0]) == 1:
            raise _no_rows(source)
        return columns, [column[1:] for column in read]
    reader = csv_records(text)
    columns = list(next(reader, []))
    check_header(columns, source)
    width = len(columns)
    rows: list[list[str]] = []
    for row in reader:
        if not row:
            continue  # a blank line
        if len(rows) >= MAX_GRID_ROWS:
            raise InputError(source, "", f"more than {MAX_GRID_ROWS} rows")
        if len(row) > width:
            raise InputError(source, f"line {reader.line_num}",
                             f"has more cells than the {width} columns of the header")
        rows.append(row)
    if not rows:
        raise _no_rows(source)
    return columns, columns_of(rows, width)


def _write_atomic(path: Path, write: Callable[[Any], None], *, binary: bool) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with (os.fdopen(fd, "wb") if binary
              else os.fdopen(fd, "w", newline="", encoding="utf-8")) as handle:
            write(handle)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _output_header(columns: list[str]) -> list[str]:
    return columns + [c for c in GRID_OUTPUT_COLUMNS if c not in columns]


class GridCounts(NamedTuple):
    """What a grid run did: its rows, the rows with an error, and of those the rows that hit
    a costsim bug (INTERNAL_ERROR_PREFIX)."""

    rows: int
    errors: int
    internal_errors: int


def run_grid(grid: Path, out: Path, *, reference: bool = False) -> GridCounts:
    """Read ``grid``, evaluate every row, write ``out`` (to a temporary name, then renamed);
    return the counts. ``reference`` takes the one-by-one path.

    Raises:
        InputError / CatalogError: the grid cannot be read or is malformed (nothing written), or
            ``out`` cannot be written.
    """
    if reference:
        return _run_reference(grid, out)
    return _run_fast(grid, out)


def _read(grid: Path, read: Callable[[str], tuple[list[str], Any]]) -> tuple[list[str], Any]:
    """Read and decode the whole file, then parse its text with ``read``."""
    if grid.exists() and not grid.is_file():
        # a device (/dev/zero) or a pipe has no end to read to: refuse it before reading
        raise InputError(str(grid), "", "is not a regular file (a folder, device or pipe)")
    try:
        data = grid.read_bytes()
    except OSError as exc:
        raise InputError(str(grid), "", f"cannot read the file ({exc.strerror})") from exc
    text = decode_grid(data, str(grid))
    del data
    try:
        return read(text)
    except csv.Error as exc:
        raise InputError(str(grid), "", f"is not a valid CSV file ({exc})") from None


def _write(out: Path, write: Callable[[Any], None], *, binary: bool = False) -> None:
    """Write ``out`` atomically: ``write`` gets a text handle (UTF-8, newline="") or, with
    ``binary``, a byte handle."""
    try:
        _write_atomic(out, write, binary=binary)
    except OSError as exc:
        raise InputError("", "--out", f"cannot write {out} ({exc.strerror})") from None


def _run_reference(grid: Path, out: Path) -> GridCounts:
    columns, rows = _read(grid, lambda text: read_grid_dicts(
        csv.DictReader(io.StringIO(text, newline="")), str(grid)))
    header = _output_header(columns)
    results, errors = evaluate_grid(rows, base_dir=grid.parent)

    def write(handle: IO[str]) -> None:
        writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore")
        writer.writerow({name: csv_cell(name) for name in header})
        for raw, result in zip(rows, results, strict=True):
            writer.writerow({key: csv_cell(value) if isinstance(value, str) else value
                             for key, value in {**raw, **result}.items()})
    _write(out, write)
    internal = sum(str(result.get("error", "")).startswith(INTERNAL_ERROR_PREFIX)
                   for result in results)
    return GridCounts(len(rows), errors, internal)


def _run_fast(grid: Path, out: Path) -> GridCounts:
    columns, texts = _read(grid, lambda text: read_grid_columns(text, str(grid)))
    coded = [factorize(column) for column in texts]
    del texts
    results = evaluate_columns(columns, coded, base_dir=grid.parent)
    # Input cells, then the results (an input column never shares a name with an output
    # column: input columns are flags).
    cells = [*coded, *(blanked(factorize(column), ~results.valid) for column in results.numbers),
             factorize(results.verdicts), factorize(results.messages)]
    _write(out, lambda handle: write_columns(handle, _output_header(columns), cells),
           binary=True)
    internal = sum(message.startswith(INTERNAL_ERROR_PREFIX)
                   for message in results.messages[~results.valid].tolist())
    return GridCounts(len(coded[0]), results.errors, internal)
