"""How numbers are written in costsim's text output: one rule per kind of quantity.

Every table and report line formats through these helpers, so that a price, a cost, a size or
a duration reads the same in every command. JSON output is not rounded (full precision, so that a
script can recompute what the text shows); amounts the price rules bill (upfront payments,
obligations, capex) are whole cents by construction.
"""

from __future__ import annotations

from costsim.units import bytes_to_gib


def usd_rate(value: float) -> str:
    """A price per hour or per unit ($/GPU-h, $/M tokens): 3 decimals, since rates of cheap
    GPUs differ below a cent ($0.138 vs $0.145 per GPU-hour)."""
    return f"{value:,.3f}"


def usd_amount(value: float) -> str:
    """An amount of money (a cost, a capex): dollars and cents with thousands separators, the
    sign first (-$531.11, as accounts write a credit such as a residual value)."""
    return _dollars(value, 2)


def usd_estimate(value: float) -> str:
    """A simulated cost (a Monte Carlo mean or percentile): whole dollars, since its spread
    over the replications is far above a cent; the ledger's lines stay to the cent."""
    return _dollars(value, 0)


def _dollars(value: float, decimals: int) -> str:
    """``$1,234.50`` / ``-$1,234.50``; an amount that rounds to zero has no sign."""
    magnitude = f"{abs(value):,.{decimals}f}"
    negative = value < 0 and magnitude.strip("0.,") != ""
    return f"{'-' if negative else ''}${magnitude}"


def gib(n_bytes: float) -> str:
    """A memory size in GiB (2^30 bytes): 2 decimals."""
    return f"{bytes_to_gib(n_bytes):,.2f}"


def hours(value: float) -> str:
    """A number of hours (GPU-hours, durations): whole hours from 100 up, else 2 decimals."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def percent(fraction: float) -> str:
    """A computed share (MFU, goodput, break-even utilization): one decimal of a percent.
    Settings the user gives or a fixed grid (target utilization 70 %, the break-even curve's
    10 %, 20 %, ...) are shown as given."""
    return f"{fraction:.1%}"


def kilowatts(value: float) -> str:
    """Electrical power in kW: 2 decimals (10 W)."""
    return f"{value:,.2f}"


def gb(n_bytes: float) -> str:
    """A size in GB (10^9 bytes, vendor labels and bandwidth only): 2 decimals."""
    return f"{n_bytes / 1e9:,.2f}"
