"""The scenario's calendar: a start date and a horizon of whole months.

Simulated time is seconds from the start date (00:00 of that day). Months are calendar months, so
a ledger's ``month`` rows line up with the invoices finance sees; a day is 86,400 s (no leap
seconds, no time zones: cloud bills are per UTC hour).
"""

from __future__ import annotations

import calendar as _stdlib_calendar
from dataclasses import dataclass
from datetime import date, timedelta

from costsim.errors import ScenarioError
from costsim.units import SECONDS_PER_DAY

# Twenty years covers the longest owned-hardware life in the server catalog with room to spare;
# beyond it a cloud price book means nothing.
MAX_HORIZON_MONTHS = 240


def add_months(day: date, months: int) -> date:
    """Return ``day`` moved by ``months`` calendar months, clipped to the month's last day."""
    index = day.year * 12 + (day.month - 1) + months
    year, month0 = divmod(index, 12)
    last = _stdlib_calendar.monthrange(year, month0 + 1)[1]
    return date(year, month0 + 1, min(day.day, last))


@dataclass(frozen=True, slots=True, kw_only=True)
class Calendar:
    """Start date and horizon; converts between dates, simulated seconds and month labels."""

    start: date
    horizon_months: int

    def __post_init__(self) -> None:
        if not 1 <= self.horizon_months <= MAX_HORIZON_MONTHS:
            raise ScenarioError("", "horizon_months",
                                f"must be 1..{MAX_HORIZON_MONTHS} months, "
                                f"got {self.horizon_months}")

    @property
    def end(self) -> date:
        """The first day after the horizon."""
        return add_months(self.start, self.horizon_months)

    @property
    def horizon_s(self) -> float:
        """Length of the horizon in seconds."""
        return self.seconds_at(self.end)

    def seconds_at(self, day: date) -> float:
        """Simulated time of 00:00 on ``day`` (negative before the start)."""
        return (day - self.start).days * SECONDS_PER_DAY

    def date_at(self, t_s: float) -> date:
        """The calendar day that contains simulated time ``t_s``."""
        return self.start + timedelta(days=int(t_s // SECONDS_PER_DAY))

    def month_starts_s(self) -> tuple[float, ...]:
        """Boundaries of the horizon's months in seconds: ``horizon_months + 1`` values."""
        return tuple(self.seconds_at(add_months(self.start, m))
                     for m in range(self.horizon_months + 1))

    def month_labels(self) -> tuple[str, ...]:
        """``YYYY-MM`` label of each month of the horizon (a start mid-month keeps its month)."""
        return tuple(f"{d.year:04d}-{d.month:02d}"
                     for d in (add_months(self.start, m) for m in range(self.horizon_months)))

    def month_index(self, t_s: float) -> int:
        """Index of the horizon month holding ``t_s`` (clamped to the first and last month)."""
        starts = self.month_starts_s()
        for index in range(self.horizon_months):
            if t_s < starts[index + 1]:
                return index
        return self.horizon_months - 1

    def months_s(self, months: float) -> float:
        """A duration of ``months`` average months (365.25/12 days each) in seconds, for
        durations that do not start on a known date (a phase placed by its dependencies)."""
        return months * 365.25 / 12 * SECONDS_PER_DAY
