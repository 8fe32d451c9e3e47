"""``interval_gpus``'s fast path (issue 20: only the first and last hours computed) gives
exactly what the hour-by-hour formula gives, signed zeros included."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.sim.occupancy import BoundedPool, interval_gpus
from costsim.units import SECONDS_PER_HOUR


def plain_interval_gpus(hours: int, t0_s: float, t1_s: float, gpus: float
                        ) -> tuple[int, np.ndarray]:
    """The formula the fast path replaced: every hour's covered share, vectorized."""
    h0 = int(t0_s // SECONDS_PER_HOUR)
    h1 = min(max(h0 + 1, math.ceil(t1_s / SECONDS_PER_HOUR)), hours)
    if h1 <= h0:
        return h0, np.zeros(0)
    starts = np.arange(h0, h1, dtype=np.float64) * SECONDS_PER_HOUR
    cover = np.minimum(np.maximum(np.minimum(starts + SECONDS_PER_HOUR, t1_s)
                                  - np.maximum(starts, t0_s), 0.0),
                       SECONDS_PER_HOUR) / SECONDS_PER_HOUR
    return h0, cover * gpus


times = st.one_of(st.floats(0, 2e7, allow_nan=False),
                  st.integers(0, 5000).map(lambda h: h * SECONDS_PER_HOUR),
                  st.integers(0, 5000).map(lambda h: math.nextafter(h * SECONDS_PER_HOUR, 0)),
                  st.integers(0, 5000).map(lambda h: math.nextafter(h * SECONDS_PER_HOUR,
                                                                     math.inf)))


@settings(max_examples=400, deadline=None)
@given(t0=times, length=st.one_of(times, st.floats(0, 7200)), hours=st.integers(1, 6000),
       gpus=st.one_of(st.integers(0, 64).map(float), st.floats(0, 100, allow_nan=False)))
def test_interval_gpus_equals_the_hourly_formula(t0: float, length: float, hours: int,
                                                 gpus: float) -> None:
    t1 = t0 + length
    h0, got = interval_gpus(hours, t0, t1, gpus)
    p0, want = plain_interval_gpus(hours, t0, t1, gpus)
    assert h0 == p0
    assert got.tobytes() == want.tobytes()


def test_a_long_interval_is_whole_inside_and_pro_rata_at_its_ends() -> None:
    h0, got = interval_gpus(100, 1800.0, 10 * SECONDS_PER_HOUR + 900.0, 3.0)
    assert h0 == 0
    assert got.tolist() == [1.5] + [3.0] * 9 + [0.75]


@settings(max_examples=100, deadline=None)
@given(takes=st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 120),
                                st.lists(st.floats(0, 8), min_size=0, max_size=50)),
                      max_size=6),
       capacity=st.floats(0, 16))
def test_a_pools_monthly_use_equals_summing_every_month(
        takes: list[tuple[str, int, list[float]]], capacity: float) -> None:
    hours = 100
    pool = BoundedPool(key="commitment:0", gpu="H100", owned=False,
                       capacity=np.full(hours, capacity))
    for phase, hour0, gpus in takes:
        plain_free = np.maximum(0.0, pool.capacity - pool.occupancy)
        end = min(hours, hour0 + len(gpus))
        got = pool.take(phase, hour0, np.array(gpus))
        if end > hour0:
            want = np.minimum(np.array(gpus)[: end - hour0], plain_free[hour0:end])
            assert got[: end - hour0].tobytes() == want.tobytes()
    months = [(0, 10), (10, 40), (40, 41), (41, 90), (90, 100)]
    for phase in (None, "a", "b"):
        use = pool.occupancy if phase is None else pool.by_phase.get(phase)
        want = ([float(use[a:b].sum()) * SECONDS_PER_HOUR for a, b in months]
                if use is not None else [0.0] * len(months))
        assert pool.used_gpu_s_by_month(months, phase) == want
    assert pool.used_by_month(months) == [
        float(pool.occupancy[a:b].sum()) for a, b in months]


def plain_first_time_free(free: np.ndarray, gpus: int, start: float, work: float
                          ) -> float | None:
    """_first_time_free as first written: every candidate hour from the horizon's profile."""
    short = np.concatenate(([0], np.cumsum(free < gpus - 1e-9)))
    span = max(1, math.ceil(work / SECONDS_PER_HOUR))
    first = int(start // SECONDS_PER_HOUR)
    if len(free) <= first:
        return None
    candidates = np.arange(first, len(free))
    room = short[np.minimum(candidates + span, len(free))] - short[candidates] == 0
    if not room.any():
        return None
    return max(start, float(candidates[np.argmax(room)]) * SECONDS_PER_HOUR)


class _Pools:
    """What _first_time_free asks of a replication's context."""

    def __init__(self, pools: list[BoundedPool], hours: int) -> None:
        self.pools, self.hours = pools, hours

    def pools_for(self, gpu: str, owned: bool) -> list[BoundedPool]:
        return self.pools

    def free_profile(self, gpu: str, owned: bool) -> np.ndarray:
        return sum((p.free() for p in self.pools), start=np.zeros(self.hours))


@settings(max_examples=150, deadline=None)
@given(capacities=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60),
                                     st.integers(0, 8)), min_size=0, max_size=3),
       taken=st.lists(st.tuples(st.integers(0, 59), st.integers(1, 30), st.floats(0, 8)),
                      max_size=4),
       gpus=st.integers(0, 12), start=st.floats(0, 70 * SECONDS_PER_HOUR),
       work=st.floats(0, 40 * SECONDS_PER_HOUR))
def test_the_first_time_free_equals_searching_every_hour(
        capacities: list[tuple[int, int, int]], taken: list[tuple[int, int, float]],
        gpus: int, start: float, work: float) -> None:
    from costsim.sim.phase_runs import _first_time_free

    hours = 60
    pools = []
    for a, b, n in capacities:
        capacity = np.zeros(hours)
        capacity[min(a, b):max(a, b)] = n
        pools.append(BoundedPool(key="owned:0", gpu="H100", owned=True, capacity=capacity))
    for pool in pools:
        for hour0, length, want in taken:
            pool.take("train", hour0, np.full(length, want))
    ctx = _Pools(pools, hours)
    assert _first_time_free(ctx, "H100", True, gpus, start, work) == plain_first_time_free(  # type: ignore[arg-type]
        ctx.free_profile("H100", True), gpus, start, work)


@settings(max_examples=150, deadline=None)
@given(capacities=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60),
                                     st.integers(0, 8)), min_size=0, max_size=3),
       gpus=st.integers(0, 12), start=st.floats(0, 70 * SECONDS_PER_HOUR),
       work=st.floats(0, 40 * SECONDS_PER_HOUR))
def test_the_first_time_free_of_untouched_shared_pools_equals_searching_every_hour(
        capacities: list[tuple[int, int, int]], gpus: int, start: float, work: float) -> None:
    """Pools nothing took from, with read-only (shared) capacity: the memoized runs of short
    hours give what the hour-by-hour search gives, asked twice (cold, then from the memo)."""
    from costsim.sim.phase_runs import _first_time_free

    hours = 60
    pools = []
    for a, b, n in capacities:
        capacity = np.zeros(hours)
        capacity[min(a, b):max(a, b)] = n
        capacity.flags.writeable = False
        pools.append(BoundedPool(key="owned:0", gpu="H100", owned=True, capacity=capacity))
    ctx = _Pools(pools, hours)
    want = plain_first_time_free(ctx.free_profile("H100", True), gpus, start, work)
    for _ in range(2):
        assert _first_time_free(ctx, "H100", True, gpus, start, work) == want  # type: ignore[arg-type]


def test_short_runs_are_not_used_once_a_pool_was_taken_from() -> None:
    from costsim.sim.occupancy import short_runs

    capacity = np.full(10, 4.0)
    capacity.flags.writeable = False
    pool = BoundedPool(key="owned:0", gpu="H100", owned=True, capacity=capacity)
    assert short_runs([pool], 4, 10) == ([], [])
    pool.take("train", 2, np.full(3, 1.0))
    assert short_runs([pool], 4, 10) is None  # the memo would say there is room


def test_capacity_sums_are_memoized_for_read_only_arrays_only() -> None:
    from costsim.sim.occupancy import capacity_sums

    months = ((0, 3), (3, 7), (7, 10))
    capacity = np.arange(10, dtype=np.float64) / 3
    want = (float(capacity.sum()), tuple(float(capacity[a:b].sum()) for a, b in months))
    assert capacity_sums(capacity, months) == want
    capacity[0] = 100.0  # writeable: summed anew
    assert capacity_sums(capacity, months)[0] == float(capacity.sum())
    capacity.flags.writeable = False
    first = capacity_sums(capacity, months)
    assert capacity_sums(capacity, months) == first
    assert capacity_sums(capacity, ((0, 10),))[1] == (float(capacity.sum()),)  # other months
    other = capacity * 2  # another array: its own sums
    other.flags.writeable = False
    assert capacity_sums(other, months)[0] == float(other.sum())


def test_a_pools_month_sums_follow_every_take() -> None:
    """The use sums a pool keeps are forgotten on each take; a phase that alone took from the
    pool shares the overall sums (its use equals the occupancy bit for bit)."""
    months = [(0, 4), (4, 9), (9, 12)]
    pool = BoundedPool(key="commitment:0", gpu="H100", owned=False,
                       capacity=np.full(12, 3.0))
    pool.take("a", 2, np.full(5, 0.7))
    assert pool.used_by_month(months, "a") == pool.used_by_month(months) == [
        float(pool.occupancy[a:b].sum()) for a, b in months]
    before = pool.used_total()
    pool.take("b", 8, np.full(4, 1.1))
    assert pool.used_total() == float(pool.occupancy.sum()) != before
    for phase in (None, "a", "b"):
        use = pool.occupancy if phase is None else pool.by_phase[phase]
        assert pool.used_by_month(months, phase) == [float(use[a:b].sum()) for a, b in months]
    assert pool.used_gpu_s_by_month(months, "b") == [
        float(pool.by_phase["b"][a:b].sum()) * SECONDS_PER_HOUR for a, b in months]
