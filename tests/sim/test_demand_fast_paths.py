"""The demand histogram's and fleet profile's fast paths (issue 20) give exactly what the plain
computations give: the references below are the computations they replaced."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.sim.demand import DemandHistogram
from costsim.sim.results import HOURS_A_DAY, FleetProfile


def plain_histogram(gpu: str, hourly: np.ndarray) -> DemandHistogram:
    array = np.atleast_2d(np.asarray(hourly, dtype=np.float64))
    values = np.maximum(array.ravel(), 0.0)
    by_hour = np.maximum(np.ceil(values - 1e-9).astype(np.int64), 0)
    hours = np.bincount(by_hour)
    gpu_hours = np.bincount(by_hour, weights=values)
    levels = np.flatnonzero(hours)
    return DemandHistogram(gpu=gpu, replications=array.shape[0],
                           levels=tuple(int(j) for j in levels),
                           hours=tuple(int(n) for n in hours[levels]),
                           gpu_hours=tuple(float(u) for u in gpu_hours[levels]))


def plain_profile(first_hour: int, replicas: np.ndarray) -> FleetProfile:
    hours = first_hour + np.arange(len(replicas))
    days = hours // HOURS_A_DAY
    peak = np.zeros(int(days[-1] - days[0]) + 1, dtype=np.int64)
    np.maximum.at(peak, days - days[0], replicas)
    clock = hours % HOURS_A_DAY
    sums = np.bincount(clock, weights=replicas, minlength=HOURS_A_DAY)
    counts = np.bincount(clock, minlength=HOURS_A_DAY)
    mean = np.divide(sums, counts, out=np.zeros(HOURS_A_DAY), where=counts > 0)
    return FleetProfile(first_day=int(days[0]), daily_peak=tuple(int(p) for p in peak),
                        by_clock_hour=tuple(float(m) for m in mean))


# demand as the simulator leaves it: runs of zeros, whole GPUs, partial hours, float noise
hour_values = st.one_of(st.just(0.0), st.integers(0, 40).map(float),
                        st.floats(0, 40, allow_nan=False), st.floats(-1e-10, 1e-10),
                        st.sampled_from([1e-16, 2.0 - 1e-12, 3.0 + 1e-12]))


@settings(max_examples=150, deadline=None)
@given(hourly=st.lists(hour_values, min_size=1, max_size=300),
       lead=st.integers(0, 200), trail=st.integers(0, 200),
       window=st.tuples(st.integers(0, 700), st.integers(1, 700)))
def test_histograms_equal_binning_every_hour(hourly: list[float], lead: int, trail: int,
                                             window: tuple[int, int]) -> None:
    array = np.concatenate([np.zeros(lead), hourly, np.zeros(trail)])
    h0 = min(window[0], array.size - 1)
    h1 = max(h0 + 1, window[1])
    whole, part = DemandHistogram.from_hourly_and_window("L4", array, (h0, h1))
    assert whole == plain_histogram("L4", array) == DemandHistogram.from_hourly("L4", array)
    assert part == plain_histogram("L4", array[h0:h1])
    # told which hours hold +0.0 (a span around the demand, however wide): the same figures
    some = np.flatnonzero(array)
    lo = max(0, (int(some[0]) if some.size else 0) - lead // 2)
    hi = (int(some[-1]) + 1 if some.size else 0) + trail // 2
    assert DemandHistogram.from_hourly_and_window("L4", array, (h0, h1), (lo, hi)) == (
        whole, part)
    assert DemandHistogram.from_hourly_and_window("L4", array, (h0, h1),
                                                  (0, array.size)) == (whole, part)
    two_d = np.stack([array, array[::-1]])
    assert DemandHistogram.from_hourly("L4", two_d) == plain_histogram("L4", two_d)


@settings(max_examples=150, deadline=None)
@given(first_hour=st.integers(0, 24 * 400),
       replicas=st.lists(st.integers(0, 500), min_size=1, max_size=24 * 20))
def test_fleet_profile_equals_the_hour_by_hour_reduction(first_hour: int,
                                                         replicas: list[int]) -> None:
    counts = np.array(replicas, dtype=np.int64)
    assert FleetProfile.of(first_hour, counts) == plain_profile(first_hour, counts)
    # the simulator's counts: whole numbers in float64, the same profile (ints in its peaks)
    as_floats = FleetProfile.of(first_hour, counts.astype(np.float64))
    assert as_floats == plain_profile(first_hour, counts)
    assert all(type(p) is int for p in as_floats.daily_peak)


@pytest.mark.parametrize("window", [(2, 9), (0, 12), (3, 7), (4, 7), (3, 6)])
def test_a_window_holding_the_whole_span_reuses_its_bins_with_its_own_idle_hours(
        window: tuple[int, int]) -> None:
    array = np.array([0, 0, 0, 2.0, 1e-12, 2.5, 0, 0, 0, 0, 0, 0])  # demand in hours 3..5
    whole, part = DemandHistogram.from_hourly_and_window("L4", array, window)
    assert whole == plain_histogram("L4", array)
    assert part == plain_histogram("L4", array[window[0]:window[1]])


def test_a_histogram_built_through_its_slots_is_the_constructors() -> None:
    from costsim.sim.demand import _histogram

    built = _histogram("L4", 2, ([1, 3], [5, 2], [4.5, 5.25], 0.0), 7)
    made = DemandHistogram(gpu="L4", replications=2, levels=(0, 1, 3), hours=(7, 5, 2),
                           gpu_hours=(0.0, 4.5, 5.25))
    assert built == made
    assert hash(built) == hash(made)
    assert repr(built) == repr(made)
    assert [getattr(built, f.name) for f in dataclasses.fields(DemandHistogram)] == [
        getattr(made, f.name) for f in dataclasses.fields(DemandHistogram)]
