"""The serving-mix integer program against brute force and its own contract."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from costsim.errors import InfeasibleError
from costsim.optimize.serving_mix import MixInstance, single_type_fleets, solve_mix
from costsim.optimize.serving_mix_plan import routed_buckets


def instance(prices: list[float], capacities: list[list[float]],
             shares: list[float]) -> MixInstance:
    return MixInstance(gpus=tuple(f"G{j}" for j in range(len(prices))),
                       gpus_per_replica=(1,) * len(prices), usd_per_gpu_hour=tuple(prices),
                       usd_per_replica_hour=tuple(prices), bucket_shares=tuple(shares),
                       capacity_requests_per_s=tuple(tuple(row) for row in capacities))


def fits(load: np.ndarray, replicas: tuple[int, ...]) -> bool:
    """Some fractional assignment puts every bucket's load within ``replicas`` (an LP)."""
    types, buckets = load.shape
    cover = np.zeros((buckets, types * buckets))
    pack = np.zeros((types, types * buckets))
    bounds = []
    for k in range(buckets):
        for j in range(types):
            cover[k, k * types + j] = 1.0
            pack[j, k * types + j] = load[j, k]
            bounds.append((0.0, 1.0 if np.isfinite(load[j, k]) else 0.0))
    pack = np.where(np.isfinite(pack), pack, 0.0)
    result = linprog(np.zeros(types * buckets), A_ub=pack, b_ub=np.array(replicas) + 1e-9,
                     A_eq=cover, b_eq=np.ones(buckets), bounds=bounds, method="highs")
    return bool(result.status == 0)


def brute_force_cost(mix: MixInstance, rate: float) -> float:
    """The cheapest replica vector found by trying every one up to each type's whole load."""
    caps = mix.capacities()
    shares = np.array(mix.bucket_shares)
    with np.errstate(divide="ignore"):
        load = np.where(caps > 0, rate * shares / caps, np.inf)
    ceilings = [math.ceil(float(np.sum(np.where(np.isfinite(row), row, 0.0))) + 1e-9)
                for row in load]
    best = math.inf
    for replicas in itertools.product(*(range(c + 1) for c in ceilings)):
        cost = float(np.dot(replicas, mix.usd_per_replica_hour))
        if cost < best and fits(load, replicas):
            best = cost
    return best


@st.composite
def tiny_instances(draw: st.DrawFn) -> tuple[MixInstance, float]:
    types = draw(st.integers(2, 3))
    buckets = draw(st.integers(1, 3))
    prices = [draw(st.floats(0.5, 8.0)) for _ in range(types)]
    capacities = [[draw(st.sampled_from([0.0, 1.0, 2.5, 4.0, 7.0])) for _ in range(buckets)]
                  for _ in range(types)]
    for k in range(buckets):  # every bucket has some server
        if all(row[k] == 0 for row in capacities):
            capacities[draw(st.integers(0, types - 1))][k] = 3.0
    weights = [draw(st.floats(0.1, 1.0)) for _ in range(buckets)]
    shares = [w / sum(weights) for w in weights]
    rate = draw(st.floats(0.05, 6.0))
    return instance(prices, capacities, shares), rate


@settings(max_examples=40, deadline=None)
@given(tiny_instances())
def test_the_program_finds_the_brute_force_optimum(case: tuple[MixInstance, float]) -> None:
    mix, rate = case
    solution = solve_mix(mix, rate)
    assert solution.cost_usd_per_hour == pytest.approx(brute_force_cost(mix, rate), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(tiny_instances())
def test_a_solution_serves_every_bucket_within_its_replicas(
        case: tuple[MixInstance, float]) -> None:
    mix, rate = case
    solution = solve_mix(mix, rate)
    assignment = np.array(solution.assignment)
    np.testing.assert_allclose(assignment.sum(axis=1), 1.0, atol=1e-9)
    caps = mix.capacities()
    assert np.all(assignment[caps.T == 0] == 0)  # nothing sent where it cannot be served
    with np.errstate(divide="ignore", invalid="ignore"):
        load = np.where(caps.T > 0, rate * np.array(mix.bucket_shares)[:, None] / caps.T, 0.0)
    assert np.all((load * assignment).sum(axis=0) <= np.array(solution.replicas) + 1e-6)
    # never dearer than the best single type, which is one of its feasible answers
    if solution.best_single is not None:
        assert solution.cost_usd_per_hour <= solution.best_single.cost_usd_per_hour + 1e-9


def test_the_single_type_baseline_is_sized_like_one_simulator_entry() -> None:
    # 50/50 of sizes served at 10 and 2.5 requests/s: harmonic capacity 4 requests/s
    mix = instance([1.0, 3.0], [[10.0, 2.5], [20.0, 0.0]], [0.5, 0.5])
    (only,) = single_type_fleets(mix, 9.0)  # G1 cannot serve the second size
    assert (only.gpu, only.replicas, only.cost_usd_per_hour) == ("G0", 3, 3.0)


def test_a_split_bucket_fills_a_replica_s_spare_capacity() -> None:
    # one bucket; a G0 replica ($1) serves 2 requests/s, a G1 ($1.8) serves 4
    mix = instance([1.0, 1.8], [[2.0], [4.0]], [1.0])
    # 3 requests/s: one G1 ($1.8) beats two G0 ($2)
    assert solve_mix(mix, 3.0).replicas == (0, 1)
    # 9 requests/s: two G1 take 8, the last 1 request/s fits half a G0: $4.6 < three G1 $5.4
    split = solve_mix(mix, 9.0)
    assert split.replicas == (1, 2)
    assert split.cost_usd_per_hour == pytest.approx(4.6)
    assert split.assignment[0][0] >= 1 / 9 - 1e-9  # a split bucket: part of it on G0
    assert split.best_single is not None
    # five G0 (load 4.5) are the best single type here: $5
    assert split.best_single.cost_usd_per_hour == pytest.approx(5.0)
    assert split.savings_vs_single == pytest.approx(0.08)


def test_no_load_needs_no_replicas() -> None:
    solution = solve_mix(instance([1.0, 2.0], [[1.0], [3.0]], [1.0]), 0.0)
    assert solution.replicas == (0, 0)
    assert solution.cost_usd_per_hour == 0.0


def test_a_bucket_no_gpu_serves_is_refused_by_name() -> None:
    mix = instance([1.0, 2.0], [[1.0, 0.0], [3.0, 0.0]], [0.5, 0.5])
    with pytest.raises(InfeasibleError, match=r"request buckets \[1\] are served by none"):
        solve_mix(mix, 1.0)


@pytest.mark.parametrize("rate", [-1.0, math.nan, math.inf])
def test_a_bad_rate_is_refused(rate: float) -> None:
    with pytest.raises(ValueError, match="rate must be finite"):
        solve_mix(instance([1.0], [[1.0]], [1.0]), rate)


def test_inconsistent_data_is_refused() -> None:
    with pytest.raises(ValueError, match="one entry per GPU type"):
        MixInstance(gpus=("A",), gpus_per_replica=(1,), usd_per_gpu_hour=(1.0,),
                    usd_per_replica_hour=(1.0,), bucket_shares=(0.5, 0.5),
                    capacity_requests_per_s=((1.0,),))


def test_the_simulator_s_routing_sends_each_size_to_its_cheapest_type_per_request() -> None:
    # G0: $0.10 and $1.00 per request/s of the two sizes; G1: $0.15 and $0.50
    mix = instance([1.0, 3.0], [[10.0, 1.0], [20.0, 6.0]], [0.5, 0.5])
    assert routed_buckets(mix, ["G0", "G1"]) == {"G0": (0,), "G1": (1,)}
    assert routed_buckets(mix, ["G1"]) == {"G1": (0, 1)}
    # the routing prices GPUs, not the whole instances a replica is billed (serving_prep's rule)
    billed = replace(mix, usd_per_replica_hour=(8.0, 3.0))
    assert routed_buckets(billed, ["G0", "G1"]) == {"G0": (0,), "G1": (1,)}
