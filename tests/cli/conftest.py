"""Shared fixture of the CLI tests: run ``costsim`` in-process and capture what it prints."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pytest

from costsim.cli.main import main


class CliResult(NamedTuple):
    """Exit code and captured output of one in-process ``costsim`` run."""

    code: int
    out: str
    err: str


Cli = Callable[..., CliResult]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    """A callable ``cli(*argv)`` that runs ``costsim argv…`` and returns (code, out, err).

    argparse usage errors raise SystemExit; the callable turns them into the exit code so that
    every test checks bad input the same way.
    """
    def run(*argv: str) -> CliResult:
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
