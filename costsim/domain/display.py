"""How figures and names reach people: one rounding rule per kind of quantity, and the one rule
that keeps a CSV cell from running in a spreadsheet.

Every text output formats through these helpers — the terminal (``costsim.cli.numbers``
re-exports them), the HTML report, the XLSX number formats, ``compare`` and ``diff`` — so a price,
a cost, a share or a duration reads the same wherever it shows. JSON is never rounded (full
precision, so that a script can recompute what the text shows); amounts the price rules bill
(upfront payments, obligations, capex) are whole cents by construction.

They live in the domain layer because the CLI, the report and the sweep all show figures and
write CSV, and each may import the domain (DESIGN §4).
"""

from __future__ import annotations

import re

from costsim.domain.currency import USD, Currency
from costsim.units import bytes_to_gib

# Whole-dollar and cent amounts, shares and hours, as spreadsheet number formats (report.xlsx):
# the same rounding as the text helpers below, the value in the cell stays unrounded.
XLSX_USD_AMOUNT = "#,##0.00"
XLSX_USD_RATE = "#,##0.000"
XLSX_PERCENT = "0.0%"
# Excel/LibreOffice conditional sections: whole hours from 100 up, else 2 decimals (hours()).
XLSX_HOURS = "[>=100]#,##0;#,##0.00"


def xlsx_amount_format(currency: Currency = USD) -> str:
    """:data:`XLSX_USD_AMOUNT` for amounts in ``currency``: to its minor unit."""
    return "#,##0" + ("." + "0" * currency.decimals if currency.decimals else "")


def usd_rate(value: float) -> str:
    """A price per hour or per unit ($/GPU-h, $/M tokens): 3 decimals, since rates of cheap
    GPUs differ below a cent ($0.138 vs $0.145 per GPU-hour)."""
    return f"{value:,.3f}"


def usd_amount(value: float) -> str:
    """An amount of money (a cost, a capex): dollars and cents with thousands separators, the
    sign first (-$531.11, as accounts write a credit such as a residual value)."""
    return _dollars(value, 2)


def usd_estimate(value: float) -> str:
    """A simulated cost (a Monte Carlo mean or percentile) in a ranking: whole dollars, since its
    spread over the replications is far above a cent; the ledger's lines stay to the cent."""
    return _dollars(value, 0)


def _dollars(value: float, decimals: int, symbol: str = "$") -> str:
    """``$1,234.50`` / ``-$1,234.50``; an amount that rounds to zero has no sign."""
    magnitude = f"{abs(value):,.{decimals}f}"
    negative = value < 0 and magnitude.strip("0.,") != ""
    return f"{'-' if negative else ''}{symbol}{magnitude}"


# -- amounts already in a display currency (costsim.domain.currency) ----------------------------
def money_amount(value: float, currency: Currency = USD) -> str:
    """:func:`usd_amount` for an amount in ``currency``: its symbol (or code) and its minor
    unit (``€1,234.50``, ``¥1,235``, ``CHF 1,234.50``)."""
    return _dollars(value, currency.decimals, currency.symbol)


def money_estimate(value: float, currency: Currency = USD) -> str:
    """:func:`usd_estimate` for an amount in ``currency``: whole units."""
    return _dollars(value, 0, currency.symbol)


def money_rate(value: float, currency: Currency = USD) -> str:
    """:func:`usd_rate` (the number, no symbol) for a rate in ``currency``."""
    del currency  # 3 decimals in every currency: a yen rate to 3 decimals hides nothing
    return usd_rate(value)


def money_change(delta: float, old: float | None, currency: Currency = USD) -> str:
    """:func:`usd_change` for amounts in ``currency``."""
    sign = "+" if delta > 0 else "-" if delta < 0 else "±"
    share = f", {sign}{abs(delta) / abs(old):.1%}" if old else ""
    return f"{sign}{money_amount(abs(delta), currency)}{share}"


def usd_change(delta: float, old: float | None) -> str:
    """A change of an amount: ``+$1,234.00, +3.1%`` (``±$0.00`` when none; no share when the
    old amount is zero or unknown)."""
    return money_change(delta, old)


def gib(n_bytes: float) -> str:
    """A memory size in GiB (2^30 bytes): 2 decimals."""
    return f"{bytes_to_gib(n_bytes):,.2f}"


def hours(value: float) -> str:
    """A number of hours (GPU-hours, durations): whole hours from 100 up, else 2 decimals."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def percent(fraction: float) -> str:
    """A computed share (MFU, goodput, break-even utilization, P(over budget), P(late), SLO
    attainment): one decimal of a percent. Settings the user gives or a fixed grid (target
    utilization 70 %, the break-even curve's 10 %, 20 %, ...) are shown as given."""
    return f"{fraction:.1%}"


def kilowatts(value: float) -> str:
    """Electrical power in kW: 2 decimals (10 W)."""
    return f"{value:,.2f}"


def gb(n_bytes: float) -> str:
    """A size in GB (10^9 bytes, vendor labels and bandwidth only): 2 decimals."""
    return f"{n_bytes / 1e9:,.2f}"


def number(value: float) -> str:
    """A figure of no kind above (a setting, a default's value): whole numbers with thousands
    separators (2e10 tokens: 20,000,000,000), others to 6 significant digits, so that float
    noise (0.9957962499999999) reads as the number it is (0.995796)."""
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e18):
        return f"{int(value):,}"
    if abs(value) >= 1e6:
        return f"{value:,.0f}"
    return f"{value:.6g}"


# -- CSV cells -----------------------------------------------------------------------------------
# OWASP "CSV Injection": a spreadsheet reads a cell that starts with = + - @ (or a tab or CR,
# which some strip before looking) as a formula; a single quote in front makes it text and
# shows nothing of itself. A number (-12.5, -1e-05, -inf) is left as it is: it cannot run, and
# a quote would turn it into text that no longer sums.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf|nan)", re.IGNORECASE)


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text: a quote put in front where it
    would start a formula (``=HYPERLINK(...)`` → ``'=HYPERLINK(...)``); numbers unchanged.
    Every CSV costsim writes passes each cell through here (the csv module quotes it after)."""
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text
