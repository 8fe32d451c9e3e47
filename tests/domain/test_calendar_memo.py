"""The calendar's memoized answers equal the plain month arithmetic they replace.

The reference functions below are the calendar's computation before it was memoized (issue 20):
every answer is checked against them on random calendars, cold and after the caches are warm.
"""

from __future__ import annotations

import itertools
import math
from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain import calendar as calendar_module
from costsim.domain.calendar import BillingSegment, Calendar, add_months, months_between
from costsim.units import SECONDS_PER_DAY


def plain_month_starts_s(cal: Calendar) -> tuple[float, ...]:
    return tuple((add_months(cal.start, m) - cal.start).days * SECONDS_PER_DAY
                 for m in range(cal.horizon_months + 1))


def plain_month_index(cal: Calendar, t_s: float,
                      starts: tuple[float, ...] | None = None) -> int:
    starts = plain_month_starts_s(cal) if starts is None else starts
    for index in range(cal.horizon_months):
        if t_s < starts[index + 1]:
            return index
    return cal.horizon_months - 1


def plain_billing_segments(cal: Calendar) -> tuple[BillingSegment, ...]:
    end = add_months(cal.start, cal.horizon_months)
    starts = plain_month_starts_s(cal)
    cuts = set(starts)
    first = date(cal.start.year, cal.start.month, 1)
    for k in range(1, cal.horizon_months + 2):
        day = add_months(first, k)
        if day >= end:
            break
        cuts.add((day - cal.start).days * SECONDS_PER_DAY)
    out = []
    for t0, t1 in itertools.pairwise(sorted(cuts)):
        day = cal.start + timedelta(days=int(t0 // SECONDS_PER_DAY))
        month_first = date(day.year, day.month, 1)
        month_s = (add_months(month_first, 1) - month_first).days * SECONDS_PER_DAY
        out.append(BillingSegment(month_index=plain_month_index(cal, t0, starts), start_s=t0,
                                  end_s=t1, calendar_month=f"{day.year:04d}-{day.month:02d}",
                                  calendar_month_s=month_s))
    return tuple(out)


def clear_calendar_caches() -> None:
    for value in vars(calendar_module).values():
        clear = getattr(value, "cache_clear", None)
        if callable(clear):
            clear()


calendars = st.builds(Calendar, start=st.dates(min_value=date(1990, 1, 1),
                                                max_value=date(2090, 12, 31)),
                      horizon_months=st.integers(min_value=1, max_value=240))


@settings(max_examples=60, deadline=None)
@given(cal=calendars, fractions=st.lists(st.floats(min_value=-0.1, max_value=1.1), max_size=8),
       cold=st.booleans())
def test_memoized_months_equal_the_plain_computation(cal: Calendar, fractions: list[float],
                                                     cold: bool) -> None:
    if cold:
        clear_calendar_caches()
    for _ in range(2):  # the first answer may be computed, the second comes from the cache
        starts = plain_month_starts_s(cal)
        assert cal.month_starts_s() == starts
        assert cal.horizon_s == (cal.end - cal.start).days * SECONDS_PER_DAY == starts[-1]
        assert cal.month_labels() == tuple(
            f"{d.year:04d}-{d.month:02d}"
            for d in (add_months(cal.start, m) for m in range(cal.horizon_months)))
        assert cal.billing_segments() == plain_billing_segments(cal)
        times = [f * cal.horizon_s for f in fractions] + list(starts) + [math.nan, -1.0]
        for t_s in times:
            assert cal.month_index(t_s) == plain_month_index(cal, t_s, starts)


@settings(max_examples=60, deadline=None)
@given(cal=calendars, effective=st.one_of(st.dates(min_value=date(1980, 1, 1),
                                                   max_value=date(2100, 1, 1)).map(
    date.isoformat), st.sampled_from(["", "unknown", "2027-13-01"])),
       index=st.integers(min_value=0, max_value=239))
def test_memoized_months_priced_equal_the_plain_computation(cal: Calendar, effective: str,
                                                            index: int) -> None:
    try:
        dated = date.fromisoformat(effective)
    except ValueError:
        dated = cal.start
    plain = max(0, months_between(dated, add_months(cal.start, index)))
    assert cal.months_priced_since(effective, index) == plain
    assert cal.months_priced_since(effective, index) == plain


def test_a_calendars_months_are_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    plain = calendar_module.add_months

    def counting(day: date, months: int) -> date:
        calls.append(months)
        return plain(day, months)

    monkeypatch.setattr(calendar_module, "add_months", counting)
    cal = Calendar(start=date(2031, 5, 17), horizon_months=30)
    cal.billing_segments()
    cal.month_labels()
    first = len(calls)
    for k in range(200):  # what a run asks of it in every replication of every plan
        cal.billing_segments()
        cal.month_starts_s()
        cal.month_labels()
        cal.month_index(k * 3600.0 * 24)
        _ = cal.horizon_s
    assert len(calls) == first
