"""Shared fixture of the CLI tests: run ``costsim`` in-process and capture what it prints."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NamedTuple

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


@pytest.fixture
def gpt2_rows_hit_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the grid's architecture lookup raise ZeroDivisionError (a stand-in for any bug,
    not a CostsimError) for rows of model gpt2; other models resolve as usual."""
    from costsim.cli.layout_args import resolve_architecture as real

    def buggy(ns: argparse.Namespace) -> Any:
        if getattr(ns, "model", None) == "gpt2":
            raise ZeroDivisionError("division by zero")
        return real(ns)

    monkeypatch.setattr("costsim.cli.memory_grid_rows.resolve_architecture", buggy)


@pytest.fixture
def no_charts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports without charts: drawing them takes seconds a run, and the CLI tests check the
    folder rules, not the drawings (tests/report does; one CLI test keeps them)."""
    monkeypatch.setattr("costsim.report.write.chart_jobs", lambda *args, **kwargs: [])
    monkeypatch.setattr("costsim.report.optimize_write.optimize_charts",
                        lambda *args, **kwargs: [])
