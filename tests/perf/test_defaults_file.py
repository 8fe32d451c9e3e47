"""scripts/defaults_file.py: the estimating scripts rewrite their rows of a defaults file and
nothing else, and ``--check`` fails exactly when the file differs from the estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.defaults_file import with_rows, write_or_check

CURRENT = ("key,value,unit,source\n"
           "a,1,log-sd,old a\n"
           "b,2,days,old b\n")


def test_with_rows_rewrites_value_and_source_and_keeps_the_rest() -> None:
    text = with_rows(CURRENT, {"a": (0.123456, "new a")})
    assert text == "key,value,unit,source\na,0.1235,log-sd,new a\nb,2,days,old b\n"


def test_a_missing_row_is_added_after_the_named_one_or_refused() -> None:
    text = with_rows(CURRENT, {"c": (0.5, "new c")}, new_after="a")
    assert text.splitlines()[2] == "c,0.5,log-sd,new c"
    with pytest.raises(KeyError, match="c: no such row"):
        with_rows(CURRENT, {"c": (0.5, "new c")})


def test_check_fails_only_when_the_file_differs_and_write_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "defaults.csv"
    path.write_text(CURRENT, encoding="utf-8")
    wanted = with_rows(CURRENT, {"b": (3.0, "new b")})
    assert write_or_check(path, CURRENT, CURRENT, "b", write=False, check=True,
                          root=tmp_path) == 0
    assert write_or_check(path, CURRENT, wanted, "b", write=False, check=True,
                          root=tmp_path) == 1
    assert path.read_text(encoding="utf-8") == CURRENT  # a check never writes
    assert write_or_check(path, CURRENT, wanted, "b", write=True, check=False,
                          root=tmp_path) == 0
    assert path.read_text(encoding="utf-8") == wanted
