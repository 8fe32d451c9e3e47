"""Malformed scenario files: each is refused by ``costsim validate`` with one line, exit 2.

Every file in ``bad/`` starts with ``# expect: FRAGMENT``, the part of the message it must
produce (files that are not text carry theirs in :data:`BINARY`). The >1 MiB file and the
deeply nested one are generated here, not committed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scenario.conftest import HERE, Validate

BAD = sorted((HERE / "bad").glob("*.yaml"))
BINARY = {
    "binary-junk.yaml": "binary-junk.yaml:1: not UTF-8 text (byte 0x89)",
    "latin1.yaml": "latin1.yaml:1: not UTF-8 text (byte 0xe9)",
}


def _expected(path: Path) -> str:
    if path.name in BINARY:
        return BINARY[path.name]
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name} must start with '# expect: '"
    return first.removeprefix("# expect: ")


def _one_line_refusal(validate: Validate, path: Path, fragment: str) -> str:
    code, out, err = validate(path)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"costsim validate: error: {path}"), err
    assert "Traceback" not in err
    assert fragment in err, f"{fragment!r} not in {err!r}"
    return err


def test_the_corpus_covers_the_issue_list() -> None:
    names = {p.stem for p in BAD}
    assert len(BAD) >= 30
    for wanted in ("wrong-type-horizon", "unknown-top-key", "negative-tokens", "zero-count",
                   "cycle", "unknown-gpu", "commitment-before-start", "alias-bomb",
                   "binary-junk", "python-object-tag", "duplicate-key", "empty-plans"):
        assert wanted in names


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_bad_file_is_refused_with_one_line(validate: Validate, path: Path) -> None:
    _one_line_refusal(validate, path, _expected(path))


def test_errors_name_the_line_of_the_key(validate: Validate) -> None:
    path = HERE / "bad" / "unknown-top-key.yaml"
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1)
                if text.startswith("horizon_month:"))
    err = _one_line_refusal(validate, path, "did you mean")
    assert err.startswith(f"costsim validate: error: {path}:{line}: horizon_month: ")


def test_a_file_over_one_mib_is_refused_before_parsing(validate: Validate,
                                                       tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    # valid YAML all the way: only the size can refuse it
    path.write_text("name: huge\n" + "# padding\n" * 110_000, encoding="utf-8")
    assert path.stat().st_size > 1024 * 1024
    _one_line_refusal(validate, path, "over the limit of 1,048,576 bytes")


def test_deep_nesting_is_refused(validate: Validate, tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("name: " + "[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8")
    _one_line_refusal(validate, path, "not valid YAML")


def test_control_characters_are_binary(validate: Validate, tmp_path: Path) -> None:
    path = tmp_path / "nul.yaml"
    path.write_bytes(b"name: a\nstart: \x00\x01\n")
    _one_line_refusal(validate, path, "nul.yaml:2: binary data")


def test_a_missing_file_and_a_folder(validate: Validate, tmp_path: Path) -> None:
    _one_line_refusal(validate, tmp_path / "absent.yaml", "cannot read")
    _one_line_refusal(validate, tmp_path, "cannot read")


def test_each_bad_file_reports_its_own_first_error(validate: Validate) -> None:
    good = HERE / "good" / "lifecycle.yaml"
    bad = [HERE / "bad" / "cycle.yaml", HERE / "bad" / "unknown-gpu.yaml"]
    code, out, err = validate(bad[0], good, bad[1])
    assert code == 2
    assert out.startswith(f"OK {good}: acme")
    lines = err.splitlines()
    assert [line.split(":")[2].strip() for line in lines] == [str(p) for p in bad]
