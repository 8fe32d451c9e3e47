"""Simulated GPU demand: the sparse histogram is exact, and the simulator records what every
pool held, hour by hour."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from costsim.domain.plans import Commitment, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.sim.demand import DemandHistogram
from costsim.sim.engine import simulate_replication
from costsim.sim.montecarlo import run_scenario
from costsim.sim.occupancy import interval_gpus, intervals_gpus, intervals_gpus_part
from costsim.sim.prepare import prepare_plan
from costsim.units import SECONDS_PER_HOUR
from tests.domain.scenario_builders import lifecycle
from tests.sim.test_engine import ROOT, _train_only

demand_arrays = arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 40)),
                       elements=st.floats(0, 20, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(demand_arrays, st.integers(0, 22))
def test_the_histogram_gives_the_exact_gpu_hours_above_a_level(demand: np.ndarray,
                                                               level: int) -> None:
    hist = DemandHistogram.from_hourly("L4", demand)
    brute = float(np.maximum(0.0, demand - level).sum()) / demand.shape[0]
    assert hist.excess_gpu_hours([level])[0] == pytest.approx(brute, abs=1e-6)
    assert hist.share_at_or_below([level])[0] == pytest.approx(
        float(np.mean(demand <= level + 1e-9)))
    assert hist.always_used_gpus() == int(np.floor(demand.min() + 1e-9))
    assert hist.hours_per_replication == demand.shape[1]


@settings(max_examples=30, deadline=None)
@given(demand_arrays, demand_arrays)
def test_pooling_two_runs_equals_the_histogram_of_both(a: np.ndarray, b: np.ndarray) -> None:
    b = np.resize(b, (b.shape[0], a.shape[1]))  # the same hours, more replications
    pooled = DemandHistogram.from_hourly("L4", a).merged(DemandHistogram.from_hourly("L4", b))
    both = DemandHistogram.from_hourly("L4", np.vstack([a, b]))
    assert pooled.levels == both.levels
    assert pooled.hours == both.hours
    assert pooled.gpu_hours == pytest.approx(both.gpu_hours)
    assert pooled.replications == both.replications


def test_histograms_of_different_gpus_do_not_pool() -> None:
    with pytest.raises(ValueError, match="H100 with L4"):
        DemandHistogram.from_hourly("L4", np.ones(3)).merged(
            DemandHistogram.from_hourly("H100", np.ones(3)))


def test_negative_demand_is_refused() -> None:
    with pytest.raises(ValueError, match=">= 0 GPUs"):
        DemandHistogram.from_hourly("L4", np.array([1.0, -2.0]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 30 * SECONDS_PER_HOUR), st.floats(0, 10 * SECONDS_PER_HOUR)),
                min_size=1, max_size=8), st.integers(1, 8))
def test_many_intervals_at_once_equal_one_by_one(jobs: list[tuple[float, float]],
                                                 gpus: int) -> None:
    hours = 24
    expected = np.zeros(hours)
    for start, length in jobs:
        h0, profile = interval_gpus(hours, start, start + length, float(gpus))
        expected[h0:h0 + profile.size] += profile
    starts = np.array([s for s, _ in jobs])
    ends = starts + np.array([n for _, n in jobs])
    assert intervals_gpus(hours, starts, ends, float(gpus)) == pytest.approx(expected, abs=1e-9)


def _horizon_long_profile(hours: int, starts: np.ndarray, ends: np.ndarray,
                          gpus: float) -> np.ndarray:
    """The difference array summed over every horizon hour (what intervals_gpus computed
    before it summed only the hours its end points touch)."""
    bins, adds = [], []
    for points, sign in ((starts, 1.0), (ends, -1.0)):
        at_h = np.clip(points / SECONDS_PER_HOUR, 0, hours)
        whole = np.floor(at_h).astype(np.int64)
        bins += [whole, whole + 1]
        adds += [sign * gpus * (1 - (at_h - whole)), sign * gpus * (at_h - whole)]
    diff = np.bincount(np.concatenate(bins), weights=np.concatenate(adds), minlength=hours + 2)
    return np.cumsum(diff)[:hours]


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 300),
       st.lists(st.tuples(st.floats(-2 * SECONDS_PER_HOUR, 320 * SECONDS_PER_HOUR),
                          st.floats(0, 90 * SECONDS_PER_HOUR)), max_size=12),
       st.sampled_from([1.0, 8.0, 0.37]))
def test_intervals_profile_is_bit_for_bit_the_horizon_long_running_sum(
        hours: int, jobs: list[tuple[float, float]], gpus: float) -> None:
    starts = np.array([s for s, _ in jobs], dtype=np.float64)
    ends = starts + np.array([n for _, n in jobs], dtype=np.float64)
    got = intervals_gpus(hours, starts, ends, gpus)
    want = _horizon_long_profile(hours, starts, ends, gpus)
    assert np.array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # no -0.0 where 0.0 was
    h0, part = intervals_gpus_part(hours, starts, ends, gpus)  # what demand adds: the same
    added = np.zeros(hours)
    added[h0:h0 + part.size] += part
    assert np.array_equal(added, want)
    assert np.array_equal(np.signbit(added), np.signbit(want))


def test_demand_is_what_the_pools_held_whoever_served_it() -> None:
    """32 H100s for a run: from a reservation of 8 plus on-demand, or a reservation of 32: the
    demand is 32 GPUs either way, and its GPU-hours are what the pools were used for."""
    for count in (8, 32):
        commitment = Commitment(gpu="H100", count=count, term_years=1,
                                payment=Payment.NO_UPFRONT, start=lifecycle().calendar.start,
                                cloud="aws")
        entry = UseEntry(gpu="H100", count=32, option=PurchaseOption.RESERVED_1Y_NO_UPFRONT,
                         spill=PurchaseOption.ON_DEMAND, cloud="aws")
        scenario = _train_only(entry, commitments=(commitment,))
        rep = simulate_replication(prepare_plan(scenario, scenario.plans[0]), ROOT, 0)
        (hist,) = rep.gpu_demand
        assert hist.gpu == "H100"
        assert hist.max_gpus == 32
        used = sum(p.used_gpu_hours for p in rep.pools if p.gpu == "H100")
        assert hist.mean_gpu_hours == pytest.approx(used, rel=1e-3)
        (gpu, hourly) = rep.gpu_demand_by_hour[0]
        assert gpu == "H100"
        assert sum(hourly) == pytest.approx(hist.mean_gpu_hours)


def test_a_plan_result_pools_the_demand_of_every_replication() -> None:
    scenario = lifecycle()
    (result,) = run_scenario(scenario, seed=0, replications=3)
    horizon_h = scenario.calendar.horizon_s / SECONDS_PER_HOUR
    assert [h.gpu for h in result.gpu_demand] == ["A10G", "H100", "L4"]
    for hist in result.gpu_demand:
        assert hist.replications == 3
        assert hist.hours_per_replication == pytest.approx(horizon_h)
        paid = sum(p.paid_gpu_hours for p in result.pools if p.gpu == hist.gpu)
        # rentals are paid from launch to the billing increment: never less than the demand
        assert 0.99 * paid <= hist.mean_gpu_hours <= paid + 1e-6
    # the serving fleet autoscales between 2 and 64 one-GPU replicas; only the phase's first
    # and last hour, held in part (billed pro rata), may hold fewer GPU-hours
    serve = next(h for h in result.gpu_demand if h.gpu == "L4")
    assert serve.max_gpus <= 64
    partial = sum(n for level, n in zip(serve.levels, serve.hours, strict=True)
                  if 0 < level < 2)
    assert partial <= 2 * serve.replications
    assert dict(result.gpu_demand_by_hour).keys() == {"A10G", "H100", "L4"}
    assert pickle.loads(pickle.dumps(result)) == result  # worker processes send it back


@settings(max_examples=40, deadline=None)
@given(parts=st.lists(st.lists(st.floats(0, 300), min_size=1, max_size=60), min_size=1,
                      max_size=8))
def test_pooling_by_level_equals_pooling_by_sorted_levels(parts: list[list[float]]) -> None:
    from costsim.sim import demand as demand_module

    hists = [DemandHistogram.from_hourly("L4", np.array(p)) for p in parts]
    direct = DemandHistogram.pooled(hists)
    kept = demand_module._DIRECT_LEVELS
    demand_module._DIRECT_LEVELS = 0  # every level through the sort
    try:
        sorted_ = DemandHistogram.pooled(hists)
    finally:
        demand_module._DIRECT_LEVELS = kept
    assert direct == sorted_
    assert [math.copysign(1, v) for v in direct.gpu_hours] == [
        math.copysign(1, v) for v in sorted_.gpu_hours]
