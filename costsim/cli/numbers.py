"""How numbers are written in costsim's text output: one rule per kind of quantity.

The rules live in :mod:`costsim.domain.display`, so that the report (HTML, XLSX), ``compare``
and ``diff`` round exactly as the terminal does; this module is the CLI's name for them. JSON
output is not rounded (full precision, so that a script can recompute what the text shows).
"""

from __future__ import annotations

from costsim.domain.display import (
    gb,
    gib,
    hours,
    kilowatts,
    number,
    percent,
    usd_amount,
    usd_change,
    usd_estimate,
    usd_rate,
)

__all__ = ["gb", "gib", "hours", "kilowatts", "number", "percent", "usd_amount", "usd_change",
           "usd_estimate", "usd_rate"]
