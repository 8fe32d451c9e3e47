"""The serving fleet kept for every replication (the report's P10–P90 fleet chart): a day's
peak and each clock hour's mean, and their bands over the replications, by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.sim.results import FleetBands, FleetProfile


def test_a_profile_keeps_each_days_peak_and_each_clock_hours_mean() -> None:
    # from 22:00 on day 1 for 28 hours: 2 hours of day 1, 24 of day 2, 2 of day 3
    replicas = np.array([5, 7, *range(24), 9, 1])
    profile = FleetProfile.of(24 + 22, replicas)
    assert profile.first_day == 1
    assert profile.daily_peak == (7, 23, 9)
    assert len(profile.by_clock_hour) == 24
    assert profile.by_clock_hour[0] == pytest.approx((0 + 9) / 2)  # day 2 at 0:00, day 3
    assert profile.by_clock_hour[1] == pytest.approx((1 + 1) / 2)
    assert profile.by_clock_hour[5] == 5
    assert profile.by_clock_hour[22] == pytest.approx((5 + 22) / 2)
    assert profile.by_clock_hour[23] == pytest.approx((7 + 23) / 2)


def test_a_phase_that_ran_no_hour_has_an_empty_profile() -> None:
    profile = FleetProfile.of(48, np.array([], dtype=np.int64))
    assert (profile.daily_peak, profile.by_clock_hour) == ((), ())


def _flat(first_day: int, days: int, replicas: int) -> FleetProfile:
    return FleetProfile.of(24 * first_day, np.full(24 * days, replicas))


def test_bands_span_every_replications_days_and_count_a_future_not_serving_as_zero() -> None:
    # ten futures: serving starts on day 0 in nine (with 1..9 replicas), day 2 in one (10)
    profiles = [_flat(0, 3, n) for n in range(1, 10)] + [_flat(2, 2, 10)]
    bands = FleetBands.of("serve", [*profiles, None])  # an 11th future never served
    assert bands is not None
    assert bands.first_day == 0
    assert len(bands.daily_peak) == 4
    day_0 = [*range(1, 10), 0, 0]
    day_3 = [0] * 10 + [10]
    expected = [tuple(np.percentile(day_0, [10, 50, 90]))] * 2 + [
        tuple(np.percentile([*range(1, 10), 10, 0], [10, 50, 90])),
        tuple(np.percentile(day_3, [10, 50, 90]))]
    np.testing.assert_allclose(bands.daily_peak, expected)
    # the clock-hour bands are over the futures that served
    assert bands.by_clock_hour[0] == pytest.approx(tuple(np.percentile(range(1, 11),
                                                                       [10, 50, 90])))


def test_no_bands_when_no_future_served() -> None:
    assert FleetBands.of("serve", [None, FleetProfile.of(0, np.array([], dtype=np.int64))]) \
        is None


@settings(max_examples=60, deadline=None)
@given(first_hour=st.integers(0, 24 * 30), replicas=st.lists(st.integers(0, 500), max_size=400))
def test_a_profile_is_each_days_peak_and_each_clock_hours_mean_hour_by_hour(
        first_hour: int, replicas: list[int]) -> None:
    profile = FleetProfile.of(first_hour, np.array(replicas, dtype=np.int64))
    peaks: dict[int, int] = {}
    by_clock: dict[int, list[int]] = {}
    for i, r in enumerate(replicas):
        hour = first_hour + i
        peaks[hour // 24] = max(peaks.get(hour // 24, 0), r)
        by_clock.setdefault(hour % 24, []).append(r)
    assert profile.first_day == first_hour // 24
    assert profile.daily_peak == tuple(peaks[d] for d in sorted(peaks))
    assert profile.by_clock_hour == (tuple(sum(by_clock[c]) / len(by_clock[c])
                                           if c in by_clock else 0.0 for c in range(24))
                                     if replicas else ())


def test_daily_peak_array_is_the_profiles_peaks_kept_or_converted() -> None:
    import pickle

    from costsim.sim.results import daily_peak_array

    made = FleetProfile.of(30, np.array([3, 5, 2] * 20, dtype=np.float64))
    copied = pickle.loads(pickle.dumps(made))  # as a worker's replication arrives: not kept
    assert copied == made
    assert copied.daily_peak is not made.daily_peak
    for profile in (made, copied):
        peaks, highest = daily_peak_array(profile)
        assert peaks.dtype == np.int64
        assert peaks.tolist() == list(made.daily_peak)
        assert highest == max(made.daily_peak)
    other = FleetProfile(first_day=0, daily_peak=(7, 1), by_clock_hour=(0.0,) * 24)
    assert daily_peak_array(other)[0].tolist() == [7, 1]  # never made by of: converted
