"""The scenario calendar: month arithmetic, seconds and labels line up with real invoices."""

from __future__ import annotations

from datetime import date

import pytest

from costsim.domain.calendar import Calendar, add_months
from costsim.errors import ScenarioError
from costsim.units import SECONDS_PER_DAY


def test_add_months_clips_to_the_last_day_of_short_months() -> None:
    assert add_months(date(2027, 1, 31), 1) == date(2027, 2, 28)
    assert add_months(date(2028, 1, 31), 1) == date(2028, 2, 29)
    assert add_months(date(2027, 11, 15), 3) == date(2028, 2, 15)


def test_an_18_month_horizon_spans_the_real_days_and_months() -> None:
    cal = Calendar(start=date(2027, 1, 1), horizon_months=18)
    assert cal.end == date(2028, 7, 1)
    assert cal.horizon_s == (date(2028, 7, 1) - date(2027, 1, 1)).days * SECONDS_PER_DAY
    labels = cal.month_labels()
    assert (labels[0], labels[-1], len(labels)) == ("2027-01", "2028-06", 18)
    starts = cal.month_starts_s()
    assert starts[1] == 31 * SECONDS_PER_DAY  # January has 31 days
    assert starts[2] == 59 * SECONDS_PER_DAY  # + February 2027 (28 days)


def test_month_index_places_times_in_their_calendar_month() -> None:
    cal = Calendar(start=date(2027, 1, 1), horizon_months=3)
    assert cal.month_index(0.0) == 0
    assert cal.month_index(31 * SECONDS_PER_DAY - 1) == 0
    assert cal.month_index(31 * SECONDS_PER_DAY) == 1
    assert cal.month_index(cal.horizon_s + 5) == 2  # clamped to the last month
    assert cal.date_at(31 * SECONDS_PER_DAY + 10) == date(2027, 2, 1)


@pytest.mark.parametrize("months", [0, -1, 241])
def test_horizon_out_of_range_is_an_error_naming_the_key(months: int) -> None:
    with pytest.raises(ScenarioError, match="horizon_months"):
        Calendar(start=date(2027, 1, 1), horizon_months=months)
