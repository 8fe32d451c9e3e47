"""The report folder rules: an existing --out is refused (untouched) unless --force, --force
replaces only report folders, and a failure or Ctrl-C while writing leaves nothing behind."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from costsim.cli.report_folder import check_out_dir, default_out_dir, staged_out_dir
from costsim.errors import InputError


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _write_then_fail(out: Path, *, force: bool, interruption: type[BaseException]) -> None:
    """Start writing a report into ``out`` and be interrupted half-way."""
    with staged_out_dir(out, force=force) as staging:
        (staging / "summary.json").write_text("half")
        raise interruption()


def test_default_folder_is_named_after_the_scenario_and_utc_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    now = dt.datetime(2027, 3, 4, 5, 6, 7, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    first = default_out_dir(Path("scenarios/acme.yaml"), now)
    assert first == Path("reports/acme-20270304T030607Z")
    first.mkdir(parents=True)
    assert default_out_dir(Path("acme.yaml"), now) == Path("reports/acme-20270304T030607Z-2")


def test_a_command_other_than_run_names_itself_in_the_folder(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    monkeypatch.chdir(tmp_path)
    now = dt.datetime(2027, 3, 4, 5, 6, 7, tzinfo=dt.UTC)
    assert default_out_dir(Path("acme.yaml"), now, "optimize") == Path(
        "reports/acme-optimize-20270304T050607Z")


def test_an_existing_folder_is_refused_without_force(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"--out: .*the folder exists.*--force"):
        check_out_dir(tmp_path, force=False)


def test_force_never_replaces_a_folder_that_is_not_a_report(tmp_path: Path) -> None:
    (tmp_path / "thesis.tex").write_text("years of work")
    with pytest.raises(InputError, match="not a costsim report"):
        check_out_dir(tmp_path, force=True)
    assert (tmp_path / "thesis.tex").read_text() == "years of work"


def test_a_file_is_refused_even_with_force(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        check_out_dir(target, force=True)


def test_written_files_appear_only_when_the_block_ends(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "report"
    with staged_out_dir(out, force=False) as staging:
        (staging / "summary.json").write_text("{}")
        assert not out.exists()
    assert _tree(out) == {"summary.json": b"{}"}
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["report"]


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, RuntimeError])
def test_an_interruption_while_writing_leaves_nothing_behind(tmp_path: Path,
                                                             interruption: type) -> None:
    out = tmp_path / "reports" / "q3" / "report"  # the folders above it are made, then removed
    with pytest.raises(interruption):
        _write_then_fail(out, force=False, interruption=interruption)
    assert list(tmp_path.iterdir()) == []


def test_force_replaces_an_old_report_and_an_interrupted_replacement_keeps_it(
        tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "summary.json").write_text("old")
    (out / "chart.png").write_text("old chart")
    with pytest.raises(KeyboardInterrupt):
        _write_then_fail(out, force=True, interruption=KeyboardInterrupt)
    assert _tree(out) == {"summary.json": b"old", "chart.png": b"old chart"}
    with staged_out_dir(out, force=True) as staging:
        (staging / "summary.json").write_text("new")
    assert _tree(out) == {"summary.json": b"new"}
    assert [p.name for p in tmp_path.iterdir()] == ["report"]
