"""The scenario's calendar: a start date and a horizon of whole months.

Simulated time is seconds from the start date (00:00 of that day). Months are calendar months, so
a ledger's ``month`` rows line up with the invoices finance sees; a day is 86,400 s (no leap
seconds, no time zones: cloud bills are per UTC hour).
"""

from __future__ import annotations

import calendar as _stdlib_calendar
import itertools
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


def months_between(earlier: date, later: date) -> int:
    """Whole calendar months from ``earlier``'s month to ``later``'s (0 in the same month,
    negative when ``later`` is earlier)."""
    return (later.year * 12 + later.month) - (earlier.year * 12 + earlier.month)


def check_in_calendar(where: str, day: date, months: int = 0, days: float = 0.0) -> None:
    """Refuse a date whose move by ``months`` months and ``days`` days leaves the calendar
    (year 9999 is the last a date can hold): bad input, not a traceback.

    Raises:
        ScenarioError: the moved date is past 9999-12-31.
    """
    try:
        add_months(day, months) + timedelta(days=days)
    except (OverflowError, ValueError):
        raise ScenarioError("", where, f"{day.isoformat()} + {months} months"
                            + (f" + {days:g} days" if days else "")
                            + " runs past 9999-12-31, the last date the calendar holds; "
                              "use an earlier date") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class BillingSegment:
    """A stretch of the horizon inside one horizon month and one calendar month."""

    month_index: int  # the horizon month (ledger row) it is booked in
    start_s: float
    end_s: float
    calendar_month: str  # YYYY-MM of the calendar month it lies in
    calendar_month_s: float  # length of that whole calendar month in seconds


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
        check_in_calendar("start", self.start, self.horizon_months)

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

    def month_start(self, index: int) -> date:
        """The first day of horizon month ``index`` (the start date moved ``index`` months)."""
        return add_months(self.start, index)

    def months_priced_since(self, effective_date: str, index: int) -> int:
        """Calendar months from a price's ``effective_date`` (ISO) to horizon month ``index``:
        the months its drift compounds over (0 for a month before the price's date; a price
        without a readable date counts from the scenario's start)."""
        try:
            dated = date.fromisoformat(effective_date)
        except ValueError:
            dated = self.start
        return max(0, months_between(dated, self.month_start(index)))

    def billing_segments(self) -> tuple[BillingSegment, ...]:
        """The horizon cut at every horizon-month and calendar-month boundary, in order.

        Clouds invoice storage and egress per calendar month; the ledger's rows are horizon
        months (the same months when the start is the 1st). Each segment lies in one of each, so
        a calendar month's charge split over its segments lands in the right ledger row.
        """
        cuts = set(self.month_starts_s())
        first = date(self.start.year, self.start.month, 1)
        for k in range(1, self.horizon_months + 2):
            day = add_months(first, k)
            if day >= self.end:
                break
            cuts.add(self.seconds_at(day))
        points = sorted(cuts)
        out = []
        for t0, t1 in itertools.pairwise(points):
            day = self.date_at(t0)
            month_first = date(day.year, day.month, 1)
            month_s = self.seconds_at(add_months(month_first, 1)) - self.seconds_at(month_first)
            out.append(BillingSegment(month_index=self.month_index(t0), start_s=t0, end_s=t1,
                                      calendar_month=f"{day.year:04d}-{day.month:02d}",
                                      calendar_month_s=month_s))
        return tuple(out)

    def months_s(self, months: float) -> float:
        """A duration of ``months`` average months (365.25/12 days each) in seconds, for
        durations that do not start on a known date (a phase placed by its dependencies)."""
        return months * 365.25 / 12 * SECONDS_PER_DAY
