"""The grid's CSV reader and writer give exactly what Python's csv module gives: the cells of
every file pandas is allowed to read, and the bytes csv.writer writes for any cells."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import costsim.cli.memory_grid_io as grid_io
from costsim.cli.memory_grid_io import (
    blanked,
    csv_records,
    factorize,
    pandas_cells,
    write_columns,
)
from costsim.domain.display import csv_cell

# Characters that matter to a CSV parser, and some that must pass through untouched.
SPECIAL = ',"\r\n \t\x00\x0b\x0c\x1a\x1c\x85\u2028\ufeff#\'\\'
PLAIN = "ab1_-.é€😀"


def _csv_rows(text: str) -> list[list[str]]:
    return [row for row in csv_records(text) if row]  # csv skips blank lines as the grid does


def _rows_of(columns: list[np.ndarray]) -> list[list[str]]:
    return [list(row) for row in zip(*(column.tolist() for column in columns), strict=True)]


def _check_reader(text: str) -> None:
    columns = pandas_cells(text)
    if columns is None:
        return  # read by csv.reader itself
    expected = _csv_rows(text)
    width = len(expected[0])
    assert all(len(row) <= width for row in expected), "a longer row must go to csv.reader"
    assert _rows_of(columns) == [row + [""] * (width - len(row)) for row in expected]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=SPECIAL + PLAIN, max_size=60))
def test_pandas_reads_the_cells_csv_reads_from_any_text(text: str) -> None:
    _check_reader(text)


_cell = st.text(alphabet=" \t" + PLAIN + '"', max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_cell, min_size=0, max_size=5), min_size=1, max_size=8),
       st.sampled_from(("\n", "\r\n")), st.booleans())
def test_pandas_reads_the_cells_csv_reads_from_grid_like_text(
        rows: list[list[str]], newline: str, final_newline: bool) -> None:
    """Lines of cells (some blank, some whitespace-only, some with quotes): the shape of a
    real grid, which random text rarely has."""
    text = newline.join(",".join(row) for row in rows) + (newline if final_newline else "")
    _check_reader(text)


def test_pandas_reads_a_plain_grid_and_leaves_the_rest_to_csv() -> None:
    plain = pandas_cells("model,tp\r\nllama-2-7b, 2 \r\n\r\ngpt2\r\n")
    assert plain is not None
    assert _rows_of(plain) == [["model", "tp"], ["llama-2-7b", " 2 "], ["gpt2", ""]]
    # Texts pandas would otherwise turn into missing values, numbers or booleans stay text.
    texts = ["NA", "nan", "NULL", "#N/A", "None", "", "1e3", "007", "1_0", "True", "-0", " 1"]
    typed = pandas_cells("model," + ",".join(f"c{i}" for i in range(len(texts)))
                         + "\nx," + ",".join(texts) + "\n")
    assert typed is not None
    assert _rows_of(typed)[1] == ["x", *texts]
    for text in ('model,lora_targets\ngpt2,"c_attn,c_proj"\n',  # a quote
                 "model,tp\n  \ngpt2,1\n",                        # a whitespace-only line
                 "model,tp\rgpt2,1\r",                            # CR line ends
                 "\nmodel,tp\ngpt2,1\n",                          # a leading blank line
                 "model,tp\ngpt2,1,2\n",                          # a row longer than the header
                 ""):
        assert pandas_cells(text) is None, text


_value = st.one_of(st.none(), st.text(alphabet=SPECIAL.replace("\x00", "") + PLAIN + "x",
                                      max_size=8))


def _written_by_csv(header: list[str], rows: Sequence[Sequence[object]]) -> bytes:
    """csv.writer's bytes of the cells as a spreadsheet may read them (text that would start a
    formula quoted: costsim.domain.display.csv_cell)."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow([csv_cell(name) for name in header])
    writer.writerows([[csv_cell(cell) if isinstance(cell, str) else cell for cell in row]
                      for row in rows])
    return text.getvalue().encode("utf-8")


def _written_by_grid(header: list[str], columns: list[np.ndarray]) -> bytes:
    handle = io.BytesIO()
    write_columns(handle, header, [factorize(column) for column in columns])
    return handle.getvalue()


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4).flatmap(lambda width: st.tuples(
    st.just(width), st.lists(st.lists(_value, min_size=width, max_size=width), max_size=12))))
def test_the_writer_writes_the_bytes_csv_writer_writes(shape: tuple[int, list[list[object]]]
                                                       ) -> None:
    width, rows = shape
    header = [f"c{i}" for i in range(width)]
    columns = []
    for i in range(width):
        column = np.empty(len(rows), dtype=object)
        column[:] = [row[i] for row in rows]
        columns.append(column)
    assert _written_by_grid(header, columns) == _written_by_csv(header, rows)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=20), st.data())
def test_the_writer_writes_whole_numbers_and_blanks_as_csv_writer(numbers: list[int],
                                                                  data: st.DataObject) -> None:
    blank = np.array(data.draw(st.lists(st.booleans(), min_size=len(numbers),
                                        max_size=len(numbers))))
    handle = io.BytesIO()
    write_columns(handle, ["n", "m"], [blanked(factorize(np.array(numbers)), blank),
                                       factorize(np.array(numbers[::-1]))])
    rows = [["" if hidden else value, other]
            for value, hidden, other in zip(numbers, blank.tolist(), numbers[::-1], strict=True)]
    assert handle.getvalue() == _written_by_csv(["n", "m"], rows)


def test_the_writer_chunks_long_grids(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [[f"r{i}", "a,b" if i % 7 == 0 else "", i] for i in range(1000)]
    columns = [np.array([row[i] for row in rows], dtype=object) for i in range(3)]
    monkeypatch.setattr(grid_io, "_CHUNK_BYTES", 64)  # a few rows per chunk
    assert _written_by_grid(["a", "b", "c"], columns) == _written_by_csv(["a", "b", "c"], rows)
