"""``write_report``: every file of a report folder (docs/report.md).

Each file is written atomically inside ``out_dir`` (the CLI creates the folder and owns the
rules about existing ones); charts first (:mod:`costsim.report.chart_files`), the HTML last,
with the charts' SVGs. Tables are read from the summary document, so CSV, XLSX and HTML agree
with ``summary.json`` to the cent.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costsim.domain.breakeven import BreakEven
from costsim.domain.display import csv_cell
from costsim.report.chart_files import draw_jobs, write_charts, write_drawn
from costsim.report.charts import chart_jobs, missing_charts
from costsim.report.compare import compare_plans
from costsim.report.currency_view import displayed
from costsim.report.files import json_bytes, write_atomic
from costsim.report.html import report_html
from costsim.report.tables import Kind, Table, ledger_table, monthly_table
from costsim.report.xlsx import workbook_bytes
from costsim.sim.run_result import RunResult


def write_report(run: RunResult, summary: Mapping[str, Any], out_dir: Path, *,
                 breakevens: Sequence[BreakEven] | None = None) -> tuple[Path, ...]:
    """Write report.html, summary.json, ledger.csv, monthly.csv, report.xlsx and
    charts/*.png + *.svg into the existing folder ``out_dir``; return the paths written.

    ``breakevens`` (default: the run's own, for the GPUs its plans use) feed the break-even
    chart.
    """
    written: list[Path] = []
    curves = run.breakevens if breakevens is None else tuple(breakevens)
    drawn = draw_jobs(chart_jobs(run, curves))
    rendered = write_drawn(out_dir, drawn, written)
    written.append(write_atomic(out_dir, "ledger.csv", csv_bytes(ledger_table(summary))))
    written.append(write_atomic(out_dir, "monthly.csv", csv_bytes(monthly_table(summary))))
    written.append(write_atomic(out_dir, "report.xlsx", workbook_bytes(summary)))
    written.append(write_atomic(out_dir, "summary.json", json_bytes(summary)))
    # the page shows the display currency: the plans compared as converted
    comparison = compare_plans(displayed(summary)["plans"], summary["baseline"],
                               [phase.name for phase in run.scenario.phases])
    html = report_html(summary, comparison, rendered, missing_charts(drawn), curves)
    written.append(write_atomic(out_dir, "report.html", html.encode("utf-8")))
    return tuple(written)


def csv_bytes(table: Table) -> bytes:
    """A table as CSV: machine column names, money to the cent, empty cells for null, and no
    cell a spreadsheet would run (:func:`~costsim.domain.display.csv_cell`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(column.key) for column in table.columns])
    for row in table.rows:
        writer.writerow([_csv_cell(value, column.kind, table.currency.decimals)
                         for value, column in zip(row, table.columns, strict=True)])
    return buffer.getvalue().encode("utf-8")


def _csv_cell(value: object, kind: Kind, decimals: int = 2) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind is Kind.USD and isinstance(value, int | float):
        return f"{value:.{decimals}f}"  # to the currency's minor unit (cents for USD)
    return csv_cell(str(value))


# json_bytes and write_charts live in files.py and chart_files.py (no spreadsheet or page code
# with them); the names stay importable from here.
__all__ = ["csv_bytes", "json_bytes", "write_charts", "write_report"]
