"""``costsim memory --grid`` on the command line: what is refused before anything is read
(the output naming the input, --json), grids without rows, and how a row that hit a bug is
reported (issue 8, items 1-2)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

GRID = "model,tp\ngpt2,1\nllama-2-7b,2\n"


@pytest.fixture
def grid(tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    path.write_text(GRID, encoding="utf-8")
    return path


def _same_file_spellings(grid: Path) -> dict[str, Path]:
    (grid.parent / "link.csv").symlink_to(grid)
    os.link(grid, grid.parent / "hard.csv")
    return {"same path": grid, "./ and ..": grid.parent / "." / ".." / grid.parent.name / grid.name,
            "symlink": grid.parent / "link.csv", "hard link": grid.parent / "hard.csv"}


@pytest.mark.parametrize("spelling", ["same path", "./ and ..", "symlink", "hard link"])
@pytest.mark.parametrize("force", [False, True])
def test_the_output_may_never_be_the_input(grid: Path, cli: Cli, spelling: str,
                                           force: bool) -> None:
    out = _same_file_spellings(grid)[spelling]
    code, stdout, err = cli("memory", "--grid", str(grid), "--out", str(out),
                            *(["--force"] if force else []))
    assert code == 2
    assert stdout == ""
    assert f"--out: {out} is the input grid {grid}" in err
    assert "--force does not overwrite the input" in err
    assert err.count("\n") == 1
    assert grid.read_text(encoding="utf-8") == GRID


def test_the_output_may_name_the_inputs_folder_relative(grid: Path, cli: Cli,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative --grid and a different --out in the same folder run as usual."""
    monkeypatch.chdir(grid.parent)
    code, _, _ = cli("memory", "--grid", "in.csv", "--out", "./out.csv")
    assert code == 0
    code, _, err = cli("memory", "--grid", "./in.csv", "--out", "in.csv", "--force")
    assert code == 2
    assert "is the input grid" in err
    assert grid.read_text(encoding="utf-8") == GRID


def test_json_does_not_go_with_grid(grid: Path, cli: Cli) -> None:
    out = grid.parent / "out.csv"
    code, stdout, err = cli("memory", "--grid", str(grid), "--out", str(out), "--json")
    assert code == 2
    assert stdout == ""
    assert "--json: does not go with --grid" in err
    assert err.count("\n") == 1
    assert not out.exists()


def test_a_bad_utf8_byte_is_named_by_its_offset_in_the_file(tmp_path: Path, cli: Cli) -> None:
    """The offset is the file's, not the offset in one buffered chunk of it."""
    grid = tmp_path / "in.csv"
    body = b"model,tp\n" + b"gpt2,1\n" * 3000
    grid.write_bytes(body + b"gpt2,\xff\n")
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(tmp_path / "out.csv"))
    assert code == 2
    assert f"is not UTF-8 text (byte {len(body) + 5})" in err


@pytest.mark.usefixtures("gpt2_rows_hit_a_bug")
def test_a_row_that_hits_a_bug_exits_1_with_every_other_row_written(grid: Path,
                                                                    cli: Cli) -> None:
    out = grid.parent / "out.csv"
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(out))
    assert code == 1
    assert "1 of 2 grid rows have errors" in err
    assert "1 of those rows hit a costsim bug" in err
    assert "Traceback" not in err
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert rows[0]["error"].startswith("internal error (a costsim bug")
    assert rows[1]["error"] == ""
    assert rows[1]["verdict"]


@pytest.mark.parametrize("kind", ["device", "folder"])
def test_a_grid_that_is_not_a_regular_file_is_refused_before_reading(tmp_path: Path, cli: Cli,
                                                                     kind: str) -> None:
    """/dev/zero used to hang the command (read to an end that never comes)."""
    source = Path("/dev/zero") if kind == "device" else tmp_path
    if not source.exists():
        pytest.skip("no /dev/zero on this system")
    out = tmp_path / "out.csv"
    code, stdout, err = cli("memory", "--grid", str(source), "--out", str(out))
    assert code == 2
    assert stdout == ""
    assert "is not a regular file" in err
    assert not out.exists()
