"""Reports: tables, charts, HTML/XLSX/CSV (Pillow, jinja2 and openpyxl only here; charts are
drawn by costsim's own ``report/plot`` package).

``summary_json``, ``compare_json`` and ``diff_json`` build documents without the plotting and
spreadsheet libraries; ``write_report`` imports them when called, so ``--json`` stays light.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costsim.domain.breakeven import BreakEven
from costsim.report.compare import compare_json
from costsim.report.diff import diff_json
from costsim.report.summary import summary_json
from costsim.sim.run_result import RunResult

__all__ = ["compare_json", "diff_json", "summary_json", "write_report"]


def write_report(run: RunResult, summary: Mapping[str, Any], out_dir: Path, *,
                 breakevens: Sequence[BreakEven] | None = None) -> tuple[Path, ...]:
    """Write the report folder's files (see :func:`costsim.report.write.write_report`)."""
    from costsim.report.write import write_report as write

    return write(run, summary, out_dir, breakevens=breakevens)
