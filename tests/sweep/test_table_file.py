"""The results table: Parquet with pyarrow (typed columns), CSV without, the same rows."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from costsim.sweep.table_file import write_table
from tests.sweep.results_builders import factorial, plan_row, sweep_of


def test_parquet_keeps_numbers_numbers(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = write_table(factorial(), tmp_path)
    assert path.name == "results.parquet"
    table = pq.read_table(path).to_pydict()
    assert table["set:a"] == [1.0, 1.0, 2.0, 2.0]
    assert table["set:b"] == ["x", "y", "x", "y"]
    assert table["cost_usd_mean"] == [100.0, 110.0, 150.0, 160.0]
    assert table["plan"] == ["p"] * 4


def test_without_pyarrow_the_table_is_csv(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    path = write_table(factorial(), tmp_path)
    assert path.name == "results.csv"
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["set:a"], r["set:b"], r["cost_usd_mean"]) for r in rows] == [
        ("1.0", "x", "100.0"), ("1.0", "y", "110.0"), ("2.0", "x", "150.0"),
        ("2.0", "y", "160.0")]
    assert rows[0]["p_over_budget"] == ""  # no budget: empty, not "None"


def test_without_pyarrow_no_text_cell_can_run_in_a_spreadsheet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A swept text value or a plan name that starts like a formula is written as text (a quote
    in front, OWASP's CSV-injection rule); negative numbers stay numbers."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    rows = [plan_row(i, {"a": -1.5, "b": b}, -500.0 + 10 * i, plan="+cmd|' /C calc'!A0")
            for i, b in enumerate(("=HYPERLINK(\"http://x\")", "@SUM(A1)"))]
    result = sweep_of(rows)
    path = write_table(result, tmp_path)
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["set:b"] for r in rows} == {"'=HYPERLINK(\"http://x\")", "'@SUM(A1)"}
    assert {r["plan"] for r in rows} == {"'+cmd|' /C calc'!A0"}
    assert [r["cost_usd_mean"] for r in rows] == ["-500.0", "-490.0"]
    assert {r["set:a"] for r in rows} == {"-1.5"}
