"""The CSV files of ``costsim memory --grid``: read into columns with pandas' C parser, written
from columns in bulk, with the same cells and bytes as Python's :mod:`csv` module.

Reading: the file is decoded once (UTF-8, a leading BOM dropped, as ``utf-8-sig`` does). A file
whose cells the C parser is known to split exactly as :func:`csv.reader` does (no quote
character, no NUL, every CR part of a CRLF, no leading blank line or second BOM) is read by
pandas, every cell as text (``dtype=object``, no NA conversion), and the result is accepted only
if it has one row per non-empty line: pandas skips whitespace-only lines, which ``csv`` keeps as
rows. Any other file (quoted cells, a row longer than the header, …) is read with
:func:`csv.reader`, so its cells and its error messages are the ``csv`` module's own.

Writing: each column's distinct values are turned into text and quoted once (QUOTE_MINIMAL, as
:func:`csv.writer` does: a cell with a comma, a quote, CR or LF is quoted, quotes doubled), then
the rows are assembled as bytes with numpy (:func:`write_columns`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from costsim.domain.display import csv_cell
from costsim.errors import InputError

if TYPE_CHECKING:
    import _csv

ObjectArray = npt.NDArray[np.object_]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# csv.writer's QUOTE_MINIMAL triggers for the excel dialect (delimiter, quotechar, the
# lineterminator's characters), CPython Modules/_csv.c, join_append_data.
_NEEDS_QUOTES = (",", '"', "\r", "\n")
_LINE_END = "\r\n"  # csv.writer's default lineterminator
_PAD_BYTE = 0xFF  # never part of UTF-8 text (RFC 3629 §1): marks the padding of short cells
_PAD = bytes([_PAD_BYTE])
_CHUNK_BYTES = 4 * 2**20  # the byte matrix of one chunk of rows (a few MB: stays in cache)


def decode_grid(data: bytes, source: str) -> str:
    """The text of a grid file: UTF-8, one leading BOM dropped (spreadsheets add one).

    Raises:
        InputError: the bytes are not UTF-8 (the message names the byte offset in the file).
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(source, "", f"is not UTF-8 text (byte {exc.start}); save the grid "
                                     "as CSV (UTF-8)") from None


def csv_records(text: str) -> _csv.Reader:
    """:func:`csv.reader` over a decoded grid, lines split as a file opened with newline=""."""
    return csv.reader(io.StringIO(text, newline=""))


def pandas_cells(text: str) -> list[ObjectArray] | None:
    """Every line's cells as columns (the header line included, short rows padded with ""),
    read by pandas' C parser; None where the file is not one the C parser reads exactly as
    :func:`csv.reader` does (see the module docstring), or where it rejects the file."""
    if (not text or text[0] in "\r\n\ufeff" or '"' in text or "\0" in text
            or text.count("\r") != text.count("\r\n")):
        return None
    import pandas as pd  # the grid path's only pandas use: imported here, not at start-up

    data = text.encode("utf-8")
    try:
        frame = pd.read_csv(io.BytesIO(data), header=None, dtype=object, engine="c",
                            keep_default_na=False, na_filter=False, skip_blank_lines=True,
                            low_memory=False, encoding="utf-8")
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        return None  # e.g. a row longer than the header: csv.reader names its line
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    if len(frame) != len(lines) - lines.count(b""):  # a whitespace-only line was skipped
        return None
    return [frame[name].to_numpy(dtype=object) for name in frame.columns]


def columns_of(rows: Sequence[Sequence[str]], width: int) -> list[ObjectArray]:
    """The ``width`` columns of rows of at most ``width`` cells, short rows padded with ""
    (an empty cell and a missing one read and write the same)."""
    if rows and min(map(len, rows)) < width:
        rows = [[*row, *([""] * (width - len(row)))] for row in rows]
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in range(width)]
    arrays = []
    for column in columns:
        array = np.empty(len(rows), dtype=object)
        array[:] = column
        arrays.append(array)
    return arrays


class CodedColumn(NamedTuple):
    """A column as each row's code into its distinct values (in order of first appearance)."""

    codes: IntArray
    values: list[Any]

    def __len__(self) -> int:
        return len(self.codes)

    def cell(self, row: int) -> Any:
        return self.values[int(self.codes[row])]


def factorize(values: npt.NDArray[Any]) -> CodedColumn:
    """``values`` coded through a hash table in C (pandas.factorize). None, the only missing
    value the grid's columns hold, is kept as a value of its own."""
    import pandas as pd

    codes, uniques = pd.factorize(values)  # None gets code -1
    distinct = list(uniques.tolist())
    if len(codes) and codes.min() < 0:
        codes = np.where(codes < 0, len(distinct), codes)
        distinct.append(None)
    return CodedColumn(codes.astype(np.int64, copy=False), distinct)


def blanked(column: CodedColumn, blank: BoolArray) -> CodedColumn:
    """``column`` with the rows where ``blank`` is set made empty (None)."""
    return CodedColumn(np.where(blank, len(column.values), column.codes),
                       [*column.values, None])


def cell_texts(values: Sequence[str | int | None]) -> list[str]:
    """Texts and whole numbers as :func:`csv.writer` writes them (None empty), each quoted
    where it needs it, and no text a spreadsheet would run (:func:`csv_cell`)."""
    texts = ["" if value is None else csv_cell(value) if isinstance(value, str) else str(value)
             for value in values]
    joined = "".join(texts)  # most columns have nothing to quote: one scan decides
    if not any(char in joined for char in _NEEDS_QUOTES):
        return texts
    return ['"' + text.replace('"', '""') + '"'
            if any(char in text for char in _NEEDS_QUOTES) else text for text in texts]


def write_columns(handle: IO[bytes], header: Sequence[str], columns: Sequence[CodedColumn]
                  ) -> None:
    """Write the header and the rows as :func:`csv.writer` would (cells joined by commas, CRLF
    after every row, UTF-8).

    Each column's distinct cells are encoded once into a table of fixed-width rows padded with
    0xFF, a byte UTF-8 never uses; the rows of a chunk are laid side by side in one byte matrix
    (cell, comma, cell, …, CRLF) and the padding dropped in one pass (``matrix[matrix != PAD]``).
    """
    text = io.StringIO()
    csv.writer(text).writerow([csv_cell(name) for name in header])
    handle.write(text.getvalue().encode("utf-8"))
    if not columns:
        return
    tables: list[npt.NDArray[np.uint8]] = []
    for column in columns:
        cells = cell_texts(column.values)
        if len(columns) == 1:  # csv.writer quotes a row's only cell when it is empty
            cells = [cell or '""' for cell in cells]
        encoded = [cell.encode("utf-8") for cell in cells]
        width = max(map(len, encoded), default=0)
        packed = b"".join(cell.ljust(width, _PAD) for cell in encoded)
        tables.append(np.frombuffer(packed, dtype=np.uint8).reshape(len(encoded), width))
    row_width = sum(table.shape[1] + 1 for table in tables) + 1  # separators, then CRLF
    rows = len(columns[0])
    chunk = max(1, _CHUNK_BYTES // row_width)
    for start in range(0, rows, chunk):
        stop = min(rows, start + chunk)
        matrix = np.empty((stop - start, row_width), dtype=np.uint8)
        at = 0
        for column, table in zip(columns, tables, strict=True):
            width = table.shape[1]
            matrix[:, at:at + width] = table[column.codes[start:stop]]
            matrix[:, at + width] = ord(",")
            at += width + 1
        matrix[:, at - 1:] = np.frombuffer(_LINE_END.encode("ascii"), dtype=np.uint8)
        handle.write(matrix[matrix != _PAD_BYTE].tobytes())
