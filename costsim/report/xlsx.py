"""``report.xlsx``: one sheet per view (summary, ledger, monthly, assumptions: prices, the
performance basis of each phase, defaults), numbers as
numbers with a display format, so finance can sum and pivot them as they are."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from costsim.domain.display import (
    XLSX_HOURS,
    XLSX_PERCENT,
    XLSX_USD_AMOUNT,
    XLSX_USD_RATE,
    xlsx_amount_format,
)
from costsim.report.tables import (
    Kind,
    Table,
    basis_table,
    default_table,
    ledger_table,
    monthly_table,
    price_table,
    summary_table,
)

# The text output's rounding (costsim.domain.display) as display formats; the cells keep the
# unrounded values, so sums and pivots are exact.
NUMBER_FORMATS = {Kind.USD: XLSX_USD_AMOUNT, Kind.RATE: XLSX_USD_RATE, Kind.NUMBER: "#,##0.###",
                  Kind.HOURS: XLSX_HOURS, Kind.SHARE: XLSX_PERCENT}
MAX_COLUMN_WIDTH = 60


def workbook_bytes(summary: Mapping[str, Any]) -> bytes:
    """The workbook of a run's summary, as the bytes of an .xlsx file."""
    book = Workbook()
    first = book.active
    assert first is not None
    book.remove(first)
    _sheet(book.create_sheet("summary"), [summary_table(summary)])
    _sheet(book.create_sheet("ledger"), [ledger_table(summary)])
    _sheet(book.create_sheet("monthly"), [monthly_table(summary)])
    _sheet(book.create_sheet("assumptions"), [price_table(summary), basis_table(summary),
                                               default_table(summary)])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _sheet(sheet: Worksheet, tables: Sequence[Table]) -> None:
    """The tables one under the other (a blank row and a title between them)."""
    row = 1
    widths: dict[int, int] = {}
    for index, table in enumerate(tables):
        if len(tables) > 1:
            sheet.cell(row=row, column=1, value=table.title).font = Font(bold=True)
            row += 1
        for col, column in enumerate(table.columns, start=1):
            sheet.cell(row=row, column=col, value=column.label).font = Font(bold=True)
            widths[col] = max(widths.get(col, 0), len(column.label))
        if index == 0:
            sheet.freeze_panes = sheet.cell(row=row + 1, column=1)
        for values in table.rows:
            row += 1
            for col, (column, value) in enumerate(zip(table.columns, values, strict=True),
                                                  start=1):
                cell = sheet.cell(row=row, column=col, value=value)
                if isinstance(value, str):
                    # text stays text: openpyxl would store "=..." as a formula
                    cell.data_type = "s"
                elif column.kind is Kind.USD and value is not None:
                    cell.number_format = xlsx_amount_format(table.currency)
                elif column.kind in NUMBER_FORMATS and value is not None:
                    cell.number_format = NUMBER_FORMATS[column.kind]
                widths[col] = max(widths.get(col, 0), len(str(value)) if value is not None
                                  else 0)
        row += 2
    for col, width in widths.items():
        sheet.column_dimensions[get_column_letter(col)].width = min(MAX_COLUMN_WIDTH, width + 2)
