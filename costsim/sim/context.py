"""The state of one replication while it runs: clock, draws, bounded pools, ledger, records.

The phase runners (:mod:`costsim.sim.phase_runs`) call these methods to take capacity and to
book rentals; the pure rules they rest on live in :mod:`costsim.sim.pools`,
:mod:`costsim.sim.occupancy` and :mod:`costsim.sim.ledger`.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import simpy
from numpy.typing import NDArray

from costsim.domain.calendar import Calendar
from costsim.domain.uncertainty import Distribution
from costsim.sim.draws import draw_named
from costsim.sim.ledger import Category, Component, LedgerBook, LineKey
from costsim.sim.occupancy import (
    BoundedPool,
    FloatArray,
    hourly_capacity,
    interval_gpus,
    intervals_gpus,
)
from costsim.sim.pools import CommitmentPool, OwnedPool, RentalPool
from costsim.sim.prepare import PreparedPlan
from costsim.sim.results import PhaseTimeline, ServingRecord, TrainingRunRecord
from costsim.sim.streams import named_rng
from costsim.units import SECONDS_PER_HOUR

IntArray = NDArray[np.int64]


@functools.lru_cache(maxsize=64)
def _hour_grid(calendar: Calendar) -> tuple[int, tuple[tuple[int, int], ...], IntArray]:
    """The horizon's hours, each month's [first, end) hours and each hour's month: the same
    for every replication of every plan on ``calendar``, so computed once (the month array
    read-only, as it is shared)."""
    hours = math.ceil(calendar.horizon_s / SECONDS_PER_HOUR)
    month_hours = tuple((int(a // SECONDS_PER_HOUR), int(b // SECONDS_PER_HOUR))
                        for a, b in itertools.pairwise(calendar.month_starts_s()))
    month_of_hour = np.zeros(hours, dtype=np.int64)
    for m, (a, b) in enumerate(month_hours):
        month_of_hour[a:b] = m
    month_of_hour.flags.writeable = False
    return hours, month_hours, month_of_hour


class CountingEnvironment(simpy.Environment):
    """A simpy environment that counts the events it processes (for the benchmark)."""

    def __init__(self) -> None:
        super().__init__()
        self.events_processed = 0

    def step(self) -> None:
        self.events_processed += 1
        super().step()


@dataclass
class RunContext:
    """Mutable state of one replication of one plan."""

    env: CountingEnvironment
    prep: PreparedPlan
    root: np.random.SeedSequence
    book: LedgerBook
    draws: dict[str, float]
    keep_fleet: bool = False  # keep the hourly fleet (for charts): replication 0 only
    bounded: list[BoundedPool] = field(default_factory=list)
    commitments: list[CommitmentPool] = field(default_factory=list)
    owned: list[OwnedPool] = field(default_factory=list)
    timelines: dict[str, PhaseTimeline] = field(default_factory=dict)
    training: list[TrainingRunRecord] = field(default_factory=list)
    serving: list[ServingRecord] = field(default_factory=list)
    queue_waits_s: list[float] = field(default_factory=list)
    rental_gpu_hours: float = 0.0
    # per rented pool (name, gpu, option): GPU-hours paid, and used where a phase held a fixed
    # fleet that idled (absent: used = paid)
    rental_paid: dict[tuple[str, str, str], float] = field(default_factory=dict)
    rental_used: dict[tuple[str, str, str], float] = field(default_factory=dict)
    used_gpu_hours: float = 0.0
    # GPUs the phases held per GPU type and horizon hour, whatever pool served them (rentals
    # before rounding to whole instances): the demand a commitment would cover
    demand: dict[str, FloatArray] = field(default_factory=dict)
    checkpoint_bytes: list[tuple[float, float]] = field(default_factory=list)  # (from_s, bytes)
    # fixed fleets whose queue may still drain when the horizon ends: (hold(from_s, to_s),
    # the time from which the rest is still to be booked)
    open_holds: list[tuple[Callable[[float, float], None], float]] = field(
        default_factory=list)

    def __post_init__(self) -> None:
        calendar = self.prep.scenario.calendar
        self.horizon_s = calendar.horizon_s
        self.hours, month_hours, self.month_of_hour = _hour_grid(calendar)
        self.month_hours = list(month_hours)
        for pool in self.prep.commitments:
            self.add_commitment(pool)
        for owned in self.prep.owned:
            self.owned.append(owned)
            self.bounded.append(BoundedPool(
                key=f"owned:{len(self.owned) - 1}", gpu=owned.gpu, owned=True,
                capacity=hourly_capacity(self.hours, owned.available_s, self.horizon_s,
                                         owned.gpus)))

    # -- randomness -----------------------------------------------------------------------
    def rng(self, *names: str) -> np.random.Generator:
        """The replication's stream for ``names``."""
        return named_rng(self.root, *names)

    def sample(self, names: tuple[str, ...], dist: Distribution) -> float:
        """One draw of ``dist`` from the stream ``names`` (the first value of that stream,
        memoized: every plan of the replication draws the same)."""
        return draw_named(dist, self.root, *names)

    # -- bounded capacity -------------------------------------------------------------------
    def add_commitment(self, pool: CommitmentPool) -> None:
        """A reservation joins the bounded pools from its start."""
        self.commitments.append(pool)
        self.bounded.append(BoundedPool(
            key=f"commitment:{len(self.commitments) - 1}", gpu=pool.gpu, owned=False,
            capacity=hourly_capacity(self.hours, pool.start_s, pool.end_s, pool.gpus)))

    def pools_for(self, gpu: str, owned: bool) -> list[BoundedPool]:
        """Bounded pools of ``gpu``: reservations, or owned servers."""
        return [p for p in self.bounded if p.gpu == gpu and p.owned == owned]

    def free_profile(self, gpu: str, owned: bool) -> FloatArray:
        """GPUs free in each horizon hour across the pools of ``gpu``."""
        return sum((p.free() for p in self.pools_for(gpu, owned)), start=np.zeros(self.hours))

    def free_gpus(self, gpu: str, owned: bool, t0_s: float, t1_s: float) -> int:
        """Whole GPUs free in every hour of [t0, t1) across the pools."""
        h0 = int(t0_s // SECONDS_PER_HOUR)
        h1 = min(self.hours, max(h0 + 1, math.ceil(t1_s / SECONDS_PER_HOUR)))
        if h1 <= h0:
            return 0
        free = sum((p.free()[h0:h1] for p in self.pools_for(gpu, owned)),
                   start=np.zeros(h1 - h0))
        return math.floor(float(free.min()) + 1e-9)

    def take_interval(self, phase: str, gpu: str, owned: bool, t0_s: float, t1_s: float,
                      gpus: float) -> None:
        """Hold ``gpus`` bounded GPUs over [t0, t1), spread over the pools in order."""
        h0, profile = interval_gpus(self.hours, t0_s, t1_s, gpus)
        self.take_hourly(phase, gpu, owned, h0, profile)

    def take_hourly(self, phase: str, gpu: str, owned: bool, h0: int,
                    gpus: FloatArray) -> FloatArray:
        """Take up to ``gpus[i]`` bounded GPUs in hour ``h0 + i``; returns what was taken."""
        want = gpus.astype(np.float64).copy()
        got = np.zeros_like(want)
        for pool in self.pools_for(gpu, owned):
            taken = pool.take(phase, h0, want)
            got += taken
            want -= taken
        self.record_demand(gpu, h0, got)
        return got

    def record_demand(self, gpu: str, h0: int, gpus: FloatArray) -> None:
        """Add ``gpus[i]`` GPUs held in hour ``h0 + i`` to the demand for ``gpu``."""
        end = min(self.hours, h0 + len(gpus))
        if end <= h0:
            return
        hourly = self.demand.get(gpu)
        if hourly is None:
            hourly = self.demand[gpu] = np.zeros(self.hours)
        hourly[h0:end] += gpus[: end - h0]

    # -- rentals ----------------------------------------------------------------------------
    def price_factor(self, pool: RentalPool, month: int) -> float:
        """Rental price drift of ``pool`` in horizon month ``month``: compounded monthly from
        its price's ``effective_date`` (docs/simulator.md "Calendar and billing")."""
        drift = self.draws.get("price_drift_pct_per_year", 0.0)
        if not drift:
            return 1.0
        months = self.prep.scenario.calendar.months_priced_since(pool.offering.effective_date,
                                                                 month)
        return float((1 + drift / 100) ** (months / 12))

    def book_rental_hourly(self, phase: str, pool: RentalPool, h0: int, gpu_hours: FloatArray,
                           category: Category = Category.COMPUTE) -> None:
        """Book GPU-hours held hour by hour on a rental pool, priced in their month."""
        end = min(self.hours, h0 + len(gpu_hours))
        if end <= h0:
            return
        held = gpu_hours[: end - h0]
        months = self.month_of_hour[h0:end]
        per_month = np.bincount(months, weights=held, minlength=len(self.month_hours))
        key = LineKey(phase=phase, pool=pool.name, gpu=pool.gpu, option=pool.option.value,
                      category=category, component=Component.GPU_INSTANCE)
        for m in np.nonzero(per_month)[0]:
            hours = float(per_month[m])
            self.book.spend(key, int(m), hours * pool.rate_usd_per_gpu_hour
                            * self.price_factor(pool, int(m)), gpu_hours=hours)
        self._paid(pool, float(held.sum()))

    def book_rental_jobs(self, phase: str, pool: RentalPool, starts_s: FloatArray,
                         run_s: FloatArray, gpus: int,
                         category: Category = Category.COMPUTE) -> None:
        """Book many short jobs at once, each on its own instances with the billing minimum
        and increment, in the month it started (one vectorized call per phase)."""
        if starts_s.size == 0:
            return
        rule = pool.billing
        billed_s = np.ceil(np.maximum(run_s, rule.minimum_s) / rule.increment_s - 1e-9) * (
            rule.increment_s)
        paid_gpus = pool.gpus_paid_for(gpus)
        hours = np.where(starts_s < self.horizon_s, billed_s / SECONDS_PER_HOUR * paid_gpus, 0.0)
        self.record_demand(pool.gpu, 0, intervals_gpus(self.hours, starts_s, starts_s + run_s,
                                                       float(gpus)))
        start_hours = np.minimum((starts_s // SECONDS_PER_HOUR).astype(np.int64), self.hours - 1)
        per_month = np.bincount(self.month_of_hour[start_hours], weights=hours,
                                minlength=len(self.month_hours))
        key = LineKey(phase=phase, pool=pool.name, gpu=pool.gpu, option=pool.option.value,
                      category=category, component=Component.GPU_INSTANCE)
        for m in np.nonzero(per_month)[0]:
            gpu_hours = float(per_month[m])
            self.book.spend(key, int(m), gpu_hours * pool.rate_usd_per_gpu_hour
                            * self.price_factor(pool, int(m)), gpu_hours=gpu_hours)
        self._paid(pool, float(hours.sum()))

    def _paid(self, pool: RentalPool, gpu_hours: float) -> None:
        self.rental_gpu_hours += gpu_hours
        key = (pool.name, pool.gpu, pool.option.value)
        self.rental_paid[key] = self.rental_paid.get(key, 0.0) + gpu_hours

    def record_rental_use(self, pool: RentalPool, gpu_hours: float) -> None:
        """GPU-hours of work on a rented fixed fleet (its utilization is below 1)."""
        key = (pool.name, pool.gpu, pool.option.value)
        self.rental_used[key] = self.rental_used.get(key, 0.0) + gpu_hours

    def book_rental_interval(self, phase: str, pool: RentalPool, t0_s: float, t1_s: float,
                             gpus: int, category: Category = Category.COMPUTE) -> None:
        """Book whole instances for ``gpus`` GPUs held over [t0, t1), with the billing minimum."""
        if gpus <= 0 or t1_s <= t0_s:
            return
        self.record_demand(pool.gpu, *interval_gpus(self.hours, t0_s, t1_s, float(gpus)))
        paid_gpus = pool.gpus_paid_for(gpus)
        billed_s = pool.billing.billed_hours(t1_s - t0_s) * SECONDS_PER_HOUR
        h0, profile = interval_gpus(self.hours, t0_s, t0_s + billed_s, float(paid_gpus))
        self.book_rental_hourly(phase, pool, h0, profile, category)
