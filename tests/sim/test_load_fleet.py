"""Serving load and autoscaling, against hand-computed days."""

from __future__ import annotations

import math
from datetime import date

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.catalog.sim_defaults import sim_assumptions
from costsim.domain.phases import LoadProfile
from costsim.sim.fleet import fleet_hours, mix_capacity, replicas_for
from costsim.sim.load import hourly_rates, resolve_shape

MONDAY = date(2027, 1, 4)


def test_a_flat_day_needs_rate_over_capacity_times_target_replicas_every_hour() -> None:
    shape = resolve_shape(LoadProfile(peak_requests_per_s=10, diurnal=False), sim_assumptions())
    rates = hourly_rates(shape, MONDAY, 0.0, 24)
    fleet = fleet_hours(rates, sizing_capacity_per_s=2.0, service_capacity_per_s=2.5,
                        min_replicas=1, max_replicas=None, scale_up_delay_s=0)
    assert fleet.replica_hours == 24 * 5  # ceil(10 / 2) = 5
    assert fleet.slo_attainment == 1.0


def test_a_diurnal_day_matches_the_replica_hours_computed_by_hand() -> None:
    load = LoadProfile(peak_requests_per_s=20, diurnal=True, trough_fraction=0.5)
    shape = resolve_shape(load, sim_assumptions())
    fleet = fleet_hours(hourly_rates(shape, MONDAY, 0.0, 24), sizing_capacity_per_s=5,
                        service_capacity_per_s=5, min_replicas=1, max_replicas=None,
                        scale_up_delay_s=0)
    by_hand = 0
    for hour in range(24):
        d = 0.5 + 0.5 * (1 + math.cos(2 * math.pi * (hour + 0.5 - shape.peak_hour) / 24)) / 2
        by_hand += math.ceil(20 * d / 5 - 1e-9)
    assert fleet.replica_hours == by_hand
    assert 24 * 2 < by_hand < 24 * 4  # between the trough's 2 and the peak's 4 replicas


def test_weekends_and_growth_shape_the_rate() -> None:
    load = LoadProfile(peak_requests_per_s=10, diurnal=False, weekly=True, weekend_fraction=0.5,
                       growth_pct_per_month=10)
    rates = hourly_rates(resolve_shape(load, sim_assumptions()), MONDAY, 0.0, 24 * 7)
    assert rates[5 * 24 + 1] / rates[4 * 24 + 1] == pytest.approx(0.5, rel=0.01)  # Sat vs Fri
    month_h = 730
    later = hourly_rates(resolve_shape(load, sim_assumptions()), MONDAY, 0.0, month_h + 1)
    assert later[month_h] / later[0] == pytest.approx(1.10, rel=0.01)


def test_max_replicas_caps_the_fleet_and_costs_slo_attainment() -> None:
    rates = np.full(24, 100.0)
    fleet = fleet_hours(rates, sizing_capacity_per_s=10, service_capacity_per_s=10,
                        min_replicas=0, max_replicas=5, scale_up_delay_s=0)
    assert fleet.replica_hours == 24 * 5
    assert fleet.slo_attainment == pytest.approx(0.5)


def test_scale_up_delay_loses_the_first_minutes_of_added_capacity() -> None:
    rates = np.array([10.0, 20.0])
    fleet = fleet_hours(rates, sizing_capacity_per_s=10, service_capacity_per_s=10,
                        min_replicas=1, max_replicas=None, scale_up_delay_s=360)  # 0.1 hour
    # hour 2: 20/s arrive, 10/s can be served for the first 6 minutes
    assert fleet.served_within_slo[1] == pytest.approx(20 * 3600 - 10 * 360)


def test_a_request_mix_takes_the_harmonic_mean_capacity() -> None:
    assert mix_capacity(np.array([10.0, 2.0]), np.array([0.5, 0.5])) == pytest.approx(
        1 / (0.5 / 10 + 0.5 / 2))


@given(st.lists(st.floats(min_value=0, max_value=1e4), min_size=1, max_size=48),
       st.floats(min_value=0.1, max_value=100))
def test_more_demand_never_needs_fewer_replicas(rates: list[float], capacity: float) -> None:
    base = np.array(rates)
    low = replicas_for(base, capacity, 1, None)
    high = replicas_for(base * 1.5, capacity, 1, None)
    assert np.all(high >= low)
    assert np.all(low * capacity >= base * (1 - 1e-9))


def plain_fleet(rates: np.ndarray, sizing: float, service: float, low: int, high: int | None,
                delay_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fleet as computed before issue 20's one-array pass: replicas_for_rate, then the
    floor and the cap, then the served requests."""
    from costsim.perf.sizing import replicas_for_rate

    need = np.maximum(replicas_for_rate(rates, sizing), low).astype(np.int64)
    if high is not None:
        need = np.minimum(need, high)
    running = need.astype(np.float64) * service
    within = np.minimum(rates, running)
    before = np.concatenate((running[:1], running[:-1]))
    short = np.maximum(0.0, within - before) * (min(1.0, delay_s / 3600) * 3600)
    return need, rates * 3600, np.maximum(0.0, within * 3600 - short)


@given(st.lists(st.one_of(st.floats(min_value=0, max_value=1e4), st.just(0.0),
                          st.sampled_from([5e-324, 1e-300, 10.0, 20.0])), min_size=0,
                max_size=60),
       st.floats(min_value=0.01, max_value=100), st.floats(min_value=0.01, max_value=100),
       st.integers(0, 4), st.one_of(st.none(), st.integers(0, 50)), st.floats(0, 7200))
def test_the_fleet_in_one_array_equals_the_two_step_computation(
        rates: list[float], sizing: float, service: float, low: int, high: int | None,
        delay_s: float) -> None:
    array = np.array(rates, dtype=np.float64)
    fleet = fleet_hours(array, sizing, service, low, high, delay_s)
    need, requests, served = plain_fleet(array, sizing, service, low, high, delay_s)
    assert fleet.replicas.dtype == np.int64
    assert fleet.replicas.tobytes() == need.tobytes()
    assert fleet.requests.tobytes() == requests.tobytes()
    assert fleet.served_within_slo.tobytes() == served.tobytes()
    assert replicas_for(array, sizing, low, high).tobytes() == need.tobytes()


def test_the_fleet_keeps_the_sizing_rules_errors() -> None:
    with pytest.raises(ValueError, match="capacity must be"):
        replicas_for(np.ones(3), 0.0, 1, None)
    with pytest.raises(ValueError, match="finite and >= 0"):
        replicas_for(np.array([1.0, -1.0]), 1.0, 1, None)
    with pytest.raises(ValueError, match="more than"):
        replicas_for(np.array([1e12]), 1.0, 1, None)
