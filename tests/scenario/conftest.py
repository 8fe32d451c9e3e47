"""Fixtures of the scenario tests: run ``costsim validate`` in-process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from costsim.cli.main import main

HERE = Path(__file__).parent
Validate = Callable[..., tuple[int, str, str]]


@pytest.fixture
def validate(capsys: pytest.CaptureFixture[str]) -> Validate:
    """``validate(*paths)`` → (exit code, stdout, stderr) of ``costsim validate paths…``.

    Any exception other than SystemExit escapes, so a traceback fails the test."""

    def run(*paths: Path | str) -> tuple[int, str, str]:
        try:
            code = main(["validate", *map(str, paths)])
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
