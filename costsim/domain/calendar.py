"""The scenario's calendar: a start date and a horizon of whole months.

Simulated time is seconds from the start date (00:00 of that day). Months are calendar months, so
a ledger's ``month`` rows line up with the invoices finance sees; a day is 86,400 s (no leap
seconds, no time zones: cloud bills are per UTC hour).
"""

from __future__ import annotations

import bisect
import calendar as _stdlib_calendar
import functools
import itertools
from dataclasses import dataclass
from datetime import date, timedelta

from costsim.errors import ScenarioError
from costsim.units import SECONDS_PER_DAY

# Twenty years covers the longest owned-hardware life in the server catalog with room to spare;
# beyond it a cloud price book means nothing.
MAX_HORIZON_MONTHS = 240

# The simulator asks a calendar for its months in every replication of every plan (ledger rows,
# billing segments, commitment obligations): hundreds of ``add_months`` calls per replication
# for answers that depend only on (start, horizon_months). They are computed once per calendar
# and kept (bounded: a sweep's variants may have many calendars). Pure functions of their
# arguments, so a cached answer is the computed one.
_CALENDARS_KEPT = 256


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
        return _month_starts_s(self.start, self.horizon_months)[-1]

    def seconds_at(self, day: date) -> float:
        """Simulated time of 00:00 on ``day`` (negative before the start)."""
        return (day - self.start).days * SECONDS_PER_DAY

    def date_at(self, t_s: float) -> date:
        """The calendar day that contains simulated time ``t_s``."""
        return self.start + timedelta(days=int(t_s // SECONDS_PER_DAY))

    def month_starts_s(self) -> tuple[float, ...]:
        """Boundaries of the horizon's months in seconds: ``horizon_months + 1`` values."""
        return _month_starts_s(self.start, self.horizon_months)

    def month_labels(self) -> tuple[str, ...]:
        """``YYYY-MM`` label of each month of the horizon (a start mid-month keeps its month)."""
        return _month_labels(self.start, self.horizon_months)

    def month_index(self, t_s: float) -> int:
        """Index of the horizon month holding ``t_s`` (clamped to the first and last month)."""
        # the first month m with t_s < starts[m + 1], else the last (a NaN, like a time past
        # the horizon, compares false everywhere and lands there too)
        starts = _month_starts_s(self.start, self.horizon_months)
        return bisect.bisect_right(starts, t_s, 1, self.horizon_months) - 1

    def month_start(self, index: int) -> date:
        """The first day of horizon month ``index`` (the start date moved ``index`` months)."""
        return add_months(self.start, index)

    def months_priced_since(self, effective_date: str, index: int) -> int:
        """Calendar months from a price's ``effective_date`` (ISO) to horizon month ``index``:
        the months its drift compounds over (0 for a month before the price's date; a price
        without a readable date counts from the scenario's start)."""
        return _months_priced_since(self.start, effective_date, index)

    def billing_segments(self) -> tuple[BillingSegment, ...]:
        """The horizon cut at every horizon-month and calendar-month boundary, in order.

        Clouds invoice storage and egress per calendar month; the ledger's rows are horizon
        months (the same months when the start is the 1st). Each segment lies in one of each, so
        a calendar month's charge split over its segments lands in the right ledger row.
        """
        return _billing_segments(self)

    def months_s(self, months: float) -> float:
        """A duration of ``months`` average months (365.25/12 days each) in seconds, for
        durations that do not start on a known date (a phase placed by its dependencies)."""
        return months * 365.25 / 12 * SECONDS_PER_DAY


@functools.lru_cache(maxsize=_CALENDARS_KEPT)
def _month_starts_s(start: date, horizon_months: int) -> tuple[float, ...]:
    return tuple((add_months(start, m) - start).days * SECONDS_PER_DAY
                 for m in range(horizon_months + 1))


@functools.lru_cache(maxsize=_CALENDARS_KEPT)
def _month_labels(start: date, horizon_months: int) -> tuple[str, ...]:
    return tuple(f"{d.year:04d}-{d.month:02d}"
                 for d in (add_months(start, m) for m in range(horizon_months)))


@functools.lru_cache(maxsize=4 * _CALENDARS_KEPT)
def _months_priced_since(start: date, effective_date: str, index: int) -> int:
    try:
        dated = date.fromisoformat(effective_date)
    except ValueError:
        dated = start
    return max(0, months_between(dated, add_months(start, index)))


@functools.lru_cache(maxsize=_CALENDARS_KEPT)
def _billing_segments(calendar: Calendar) -> tuple[BillingSegment, ...]:
    cuts = set(calendar.month_starts_s())
    first = date(calendar.start.year, calendar.start.month, 1)
    end = calendar.end
    for k in range(1, calendar.horizon_months + 2):
        day = add_months(first, k)
        if day >= end:
            break
        cuts.add(calendar.seconds_at(day))
    points = sorted(cuts)
    out = []
    for t0, t1 in itertools.pairwise(points):
        day = calendar.date_at(t0)
        month_first = date(day.year, day.month, 1)
        month_s = (calendar.seconds_at(add_months(month_first, 1))
                   - calendar.seconds_at(month_first))
        out.append(BillingSegment(month_index=calendar.month_index(t0), start_s=t0, end_s=t1,
                                  calendar_month=f"{day.year:04d}-{day.month:02d}",
                                  calendar_month_s=month_s))
    return tuple(out)
