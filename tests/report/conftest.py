"""One written report shared by the report tests (charts take seconds to draw)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from costsim.report import summary_json, write_report
from costsim.sim.run_result import RunResult
from tests.report.runs import FORMULA_NAME, SCRIPT_NAME, report_run

GENERATED_AT = "2026-12-01T04:00:00Z"


@pytest.fixture(scope="session")
def run() -> RunResult:
    """The report scenario's run, with plans named like markup and like a formula."""
    return report_run(SCRIPT_NAME, FORMULA_NAME)


@pytest.fixture(scope="session")
def summary(run: RunResult) -> dict[str, Any]:
    return summary_json(run, generated_at=GENERATED_AT)


@pytest.fixture(scope="session")
def report_dir(run: RunResult, summary: dict[str, Any],
               tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report folder written once for the session."""
    out = tmp_path_factory.mktemp("report")
    write_report(run, summary, out)  # the run's own break-evens: the plans' H100
    return out
