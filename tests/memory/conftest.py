"""Shared helper of the memory tests: ``costsim memory --json`` run in-process."""

from __future__ import annotations

import json

import pytest

from costsim.cli.main import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    """Run ``costsim memory ARGV --json``; assert exit 0 and return the parsed JSON."""
    code = main(["memory", *argv, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    payload: dict[str, object] = json.loads(out)
    return payload
