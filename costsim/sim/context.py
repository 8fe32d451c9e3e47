"""The state of one replication while it runs: clock, draws, bounded pools, ledger, records.

The phase runners (:mod:`costsim.sim.phase_runs`) call these methods to take capacity and to
book rentals; the pure rules they rest on live in :mod:`costsim.sim.pools`,
:mod:`costsim.sim.occupancy` and :mod:`costsim.sim.ledger`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import simpy
from numpy.typing import NDArray

from costsim.domain.calendar import Calendar
from costsim.domain.pricing import PurchaseOption
from costsim.domain.uncertainty import Distribution
from costsim.sim.commit_pools import CapacityBlockPool
from costsim.sim.draws import draw_named
from costsim.sim.elastic import JobsBooking, jobs_booking
from costsim.sim.ledger import Category, Component, LedgerBook, LineKey, line_key
from costsim.sim.occupancy import (
    BoundedPool,
    FloatArray,
    hour_grid,
    hourly_capacity,
    interval_gpus,
    intervals_gpus,
)
from costsim.sim.pools import CommitmentPool, OwnedPool, RentalPool
from costsim.sim.prepare import PreparedPlan
from costsim.sim.results import PhaseTimeline, ServingRecord, TrainingRunRecord
from costsim.sim.streams import named_rng
from costsim.sim.waits import WaitHistogram
from costsim.units import SECONDS_PER_HOUR

IntArray = NDArray[np.int64]


class CountingEnvironment(simpy.Environment):
    """A simpy environment that counts the events it processes (the run's ``events``).

    ``run(until)`` steps through the events before ``until`` itself, counting them, so no
    per-event hook is needed; a queue computed in closed form adds the events its job-by-job
    simulation processed (:meth:`add_events`, :mod:`costsim.sim.fifo`)."""

    def __init__(self) -> None:
        super().__init__()
        self.events_processed = 0

    def add_events(self, count: int) -> None:
        """Count ``count`` events a closed-form computation stands for."""
        self.events_processed += count

    def run(self, until: simpy.core.SimTime | simpy.Event | None = None) -> Any:
        """SimPy's ``run(until=time)``, counting each event it processes, the stop included.

        The stop is a timeout at ``until`` scheduled before anything the run schedules at that
        time, so it comes first among them, as SimPy's own stop does: nothing at ``until`` is
        processed but the stop."""
        if until is None or isinstance(until, simpy.Event):
            raise TypeError("CountingEnvironment.run needs the time to stop at")
        stop = self.timeout_at(float(until))
        step, processed = self.step, 0
        while not stop.processed:
            step()
            processed += 1
        self.events_processed += processed
        return None

    def timeout_at(self, at_s: float) -> simpy.Timeout:
        """A timeout that fires at ``at_s`` to the bit: SimPy schedules now + delay, and
        now + (at − now) can miss ``at`` by a unit in the last place; the delay is nudged
        until it does not (for at ≥ now some delay lands on it)."""
        now = self.now
        delay = at_s - now
        while now + delay < at_s:
            delay = math.nextafter(delay, math.inf)
        while now + delay > at_s:
            delay = math.nextafter(delay, -math.inf)
        return self.timeout(delay)


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
    # queue waits: each phase's histogram, and the waits of job-by-job queues as their jobs
    # start (a queue cut by the horizon keeps the waits of the jobs it started)
    queue_waits: list[WaitHistogram] = field(default_factory=list)
    open_queue_waits: list[list[float]] = field(default_factory=list)
    rental_gpu_hours: float = 0.0
    # per rented pool (name, gpu, option): GPU-hours paid, and used where a phase held a fixed
    # fleet that idled (absent: used = paid)
    rental_paid: dict[tuple[str, str, str], float] = field(default_factory=dict)
    rental_used: dict[tuple[str, str, str], float] = field(default_factory=dict)
    used_gpu_hours: float = 0.0
    # GPUs the phases held per GPU type and horizon hour, whatever pool served them (rentals
    # before rounding to whole instances): the demand a commitment would cover
    demand: dict[str, FloatArray] = field(default_factory=dict)
    # per GPU type, the hours [lo, hi) any demand was added to (outside them it is +0.0)
    demand_span: dict[str, tuple[int, int]] = field(default_factory=dict)
    # per GPU type, its demand's one part (first hour, array as recorded) while a single
    # record made it, None once more did
    demand_sole: dict[str, tuple[int, FloatArray] | None] = field(default_factory=dict)
    checkpoint_bytes: list[tuple[float, float]] = field(default_factory=list)  # (from_s, bytes)
    # fixed fleets whose queue may still drain when the horizon ends: (hold(from_s, to_s),
    # the time from which the rest is still to be booked)
    open_holds: list[tuple[Callable[[float, float], None], float]] = field(
        default_factory=list)
    # capacity blocks (not among ``bounded``: only training phases of their GPU take them)
    blocks: list[tuple[CapacityBlockPool, BoundedPool]] = field(default_factory=list)
    # on-demand charges and GPU-hours per ledger line and horizon hour, kept only when the plan
    # has savings plans (they discount them at the end: costsim.sim.commit_pools)
    on_demand_hourly: dict[LineKey, tuple[FloatArray, FloatArray]] = field(
        default_factory=dict)
    # rental price drift per horizon month, by the price's effective date (price_factors)
    _price_factors: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        calendar = self.prep.scenario.calendar
        self.horizon_s = calendar.horizon_s
        self.hours, self.month_spans, self.month_of_hour = hour_grid(calendar)
        self.month_hours = list(self.month_spans)
        for pool in self.prep.commitments:
            self.add_commitment(pool)
        for i, block in enumerate(self.prep.capacity_blocks):
            self.blocks.append((block, BoundedPool(
                key=f"block:{i}", gpu=block.gpu, owned=False,
                capacity=hourly_capacity(self.hours, block.start_s, block.end_s, block.gpus))))
        for owned in self.prep.owned:
            self.owned.append(owned)
            self.bounded.append(BoundedPool(
                key=f"owned:{len(self.owned) - 1}", gpu=owned.gpu, owned=True,
                capacity=hourly_capacity(self.hours, owned.available_s, self.horizon_s,
                                         owned.gpus)))

    # -- queue waits ------------------------------------------------------------------------
    def open_waits(self) -> list[float]:
        """A list a job-by-job queue appends its waits to as its jobs start."""
        waits: list[float] = []
        self.open_queue_waits.append(waits)
        return waits

    def waits_histogram(self) -> WaitHistogram:
        """Every queue wait of the replication."""
        return WaitHistogram.pooled([*self.queue_waits,
                                     *(WaitHistogram.of(w) for w in self.open_queue_waits)])

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

    def capacity_block(self, gpu: str, cloud: str | None, start_s: float
                       ) -> tuple[CapacityBlockPool, BoundedPool] | None:
        """The block a training run of ``gpu`` starting at ``start_s`` uses: the first (by
        window) of that GPU, on ``cloud`` when the run names one, whose window has not ended
        and that has GPUs free; None when there is none."""
        for block, tracked in sorted(self.blocks, key=lambda b: (b[0].start_s, b[0].name)):
            if (block.gpu != gpu or (cloud is not None and block.rate.cloud != cloud)
                    or block.end_s <= start_s):
                continue
            if self.block_free_gpus(tracked, max(start_s, block.start_s), block.end_s) > 0:
                return block, tracked
        return None

    def block_free_gpus(self, tracked: BoundedPool, t0_s: float, t1_s: float) -> int:
        """Whole GPUs of a block free in every hour of [t0, t1)."""
        h0 = int(t0_s // SECONDS_PER_HOUR)
        h1 = min(self.hours, max(h0 + 1, math.ceil(t1_s / SECONDS_PER_HOUR)))
        if h1 <= h0:
            return 0
        return math.floor(float(tracked.free()[h0:h1].min()) + 1e-9)

    def take_block(self, tracked: BoundedPool, phase: str, t0_s: float, t1_s: float,
                   gpus: float) -> None:
        """Hold ``gpus`` GPUs of a block over [t0, t1) (demand recorded as for any pool)."""
        h0, profile = interval_gpus(self.hours, t0_s, t1_s, gpus)
        self.record_demand(tracked.gpu, h0, tracked.take(phase, h0, profile))

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
        free = sum((p.free_in(h0, h1) for p in self.pools_for(gpu, owned)),
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
        self.demand_sole[gpu] = (
            (h0, gpus) if gpu not in self.demand_sole and h0 >= 0 and end - h0 == len(gpus)
            else None)
        lo, hi = (h0, end) if h0 >= 0 else (0, self.hours)  # a slice from the end: all
        span = self.demand_span.get(gpu)
        self.demand_span[gpu] = (lo, hi) if span is None else (min(span[0], lo),
                                                               max(span[1], hi))

    # -- rentals ----------------------------------------------------------------------------
    def price_factor(self, pool: RentalPool, month: int) -> float:
        """Rental price drift of ``pool`` in horizon month ``month``: compounded monthly from
        its price's ``effective_date`` (docs/simulator.md "Calendar and billing")."""
        return self.price_factors(pool)[month]

    def price_factors(self, pool: RentalPool) -> tuple[float, ...]:
        """:meth:`price_factor` of ``pool`` in every horizon month (kept per price date: the
        replication's drift is one value)."""
        date = pool.offering.effective_date
        factors = self._price_factors.get(date)
        if factors is None:
            factors = self._price_factors[date] = drift_factors(
                self.prep.scenario.calendar, date, self.draws.get("price_drift_pct_per_year", 0.0),
                len(self.month_hours))
        return factors

    def _book_by_month(self, key: LineKey, pool: RentalPool, per_month: np.ndarray) -> None:
        """Book a pool's GPU-hours per horizon month (only the months with some), each month
        priced with its drift."""
        # the months np.flatnonzero picks (a NaN is nonzero, −0.0 is zero), on the few
        # months' floats in Python
        some = [(m, h) for m, h in enumerate(per_month.tolist()) if h]
        months, hours = [m for m, _ in some], [h for _, h in some]
        rate, factors = pool.rate_usd_per_gpu_hour, self.price_factors(pool)
        self.book.spend_months(key, months, [h * rate * factors[m]
                                             for m, h in zip(months, hours, strict=True)],
                               hours)

    def book_rental_hourly(self, phase: str, pool: RentalPool, h0: int, gpu_hours: FloatArray,
                           category: Category = Category.COMPUTE,
                           total: float | None = None) -> None:
        """Book GPU-hours held hour by hour on a rental pool, priced in their month
        (``total``: ``float(gpu_hours.sum())`` where the caller has it)."""
        end = min(self.hours, h0 + len(gpu_hours))
        if end <= h0:
            return
        held = gpu_hours[: end - h0]
        months = self.month_of_hour[h0:end]
        per_month = np.bincount(months, weights=held, minlength=len(self.month_hours))
        key = line_key(phase, pool.name, pool.gpu, pool.option.value, category,
                       Component.GPU_INSTANCE)
        self._book_by_month(key, pool, per_month)
        # the caller's sum is of the same array where nothing was cut off
        self._paid(pool, total if total is not None and held.size == gpu_hours.size
                   else float(held.sum()))
        self._on_demand_hourly(key, pool, h0, held)

    def book_rental_jobs(self, phase: str, pool: RentalPool, starts_s: FloatArray,
                         run_s: FloatArray, gpus: int,
                         category: Category = Category.COMPUTE) -> None:
        """Book many short jobs at once, each on its own instances with the billing minimum
        and increment, in the month it started (one vectorized call per phase:
        :func:`costsim.sim.elastic.jobs_booking`)."""
        if starts_s.size == 0:
            return
        paid_gpus = pool.gpus_paid_for(gpus)
        self.book_jobs(phase, pool, jobs_booking(
            starts_s, run_s, gpus, paid_gpus, pool.billing, self.horizon_s, self.hours,
            self.month_of_hour, len(self.month_hours)), category)
        if self.prep.savings_plans and pool.option is PurchaseOption.ON_DEMAND:
            # the jobs' billed GPU-hours hour by hour, for the savings plans
            rule = pool.billing
            billed_s = np.ceil(np.maximum(run_s, rule.minimum_s) / rule.increment_s - 1e-9) * (
                rule.increment_s)
            billed = np.where(starts_s < self.horizon_s, billed_s, 0.0)
            self._on_demand_hourly(line_key(phase, pool.name, pool.gpu, pool.option.value,
                                            category, Component.GPU_INSTANCE),
                                   pool, 0, intervals_gpus(self.hours, starts_s,
                                                           starts_s + billed, float(paid_gpus)))

    def book_jobs(self, phase: str, pool: RentalPool, booking: JobsBooking,
                  category: Category = Category.COMPUTE) -> None:
        """Book what :func:`costsim.sim.elastic.jobs_booking` computed for jobs on ``pool``:
        their demand, their GPU-hours by month (priced with the month's drift), paid hours
        (not the savings plans' hourly record: :meth:`book_rental_jobs` adds that)."""
        if pool.gpu not in self.demand:  # a GPU type the jobs hold in no horizon hour counts
            self.demand[pool.gpu] = np.zeros(self.hours)
        self.record_demand(pool.gpu, booking.demand_h0, booking.demand)
        key = line_key(phase, pool.name, pool.gpu, pool.option.value, category,
                       Component.GPU_INSTANCE)
        self._book_by_month(key, pool, booking.gpu_hours_by_month)
        self._paid(pool, booking.paid_gpu_hours)

    def _on_demand_hourly(self, key: LineKey, pool: RentalPool, h0: int,
                          gpu_hours: FloatArray) -> None:
        """Keep on-demand GPU-hours and charges hour by hour (only when the plan has savings
        plans: they are applied hour by hour when the replication ends)."""
        if not self.prep.savings_plans or pool.option is not PurchaseOption.ON_DEMAND:
            return
        end = min(self.hours, h0 + len(gpu_hours))
        if end <= h0:
            return
        usd, hours = self.on_demand_hourly.setdefault(
            key, (np.zeros(self.hours), np.zeros(self.hours)))
        held = gpu_hours[: end - h0]
        factors = np.array(self.price_factors(pool))
        hours[h0:end] += held
        usd[h0:end] += held * pool.rate_usd_per_gpu_hour * factors[self.month_of_hour[h0:end]]

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
        paid_gpus = pool.gpus_paid_for(gpus)
        billed_s = pool.billing.billed_hours(t1_s - t0_s) * SECONDS_PER_HOUR
        calendar = self.prep.scenario.calendar
        booked = (interval_booking(calendar, t0_s, t1_s, gpus, paid_gpus, billed_s)
                  if billed_s <= _INTERVALS_MEMO_S
                  else interval_booking.__wrapped__(calendar, t0_s, t1_s, gpus, paid_gpus,
                                                    billed_s))
        self.record_demand(pool.gpu, booked.demand_h0, booked.demand)
        if not booked.paid.size:
            return
        key = line_key(phase, pool.name, pool.gpu, pool.option.value, category,
                       Component.GPU_INSTANCE)
        self._book_by_month(key, pool, booked.gpu_hours_by_month)
        self._paid(pool, booked.paid_gpu_hours)
        self._on_demand_hourly(key, pool, booked.paid_h0, booked.paid)


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalBooking:
    """What GPUs rented over one interval book (arrays read-only)."""

    demand_h0: int
    demand: FloatArray  # GPUs held, hour by hour from demand_h0
    paid_h0: int
    paid: FloatArray  # GPU-hours billed (whole instances, the billing minimum), from paid_h0
    gpu_hours_by_month: FloatArray  # ``paid`` by horizon month
    paid_gpu_hours: float


# Intervals up to a month are memoized (a training run's, ~700 floats at most), by value: the
# plans that train alike in the same future book the same interval.
_INTERVALS_MEMO_S = 31 * 24 * SECONDS_PER_HOUR
# Price drift factors by (calendar, price date, drift drawn, months): a replication's drift is
# one draw shared by every plan, so the plans after the first look its factors up (18 floats
# for the flagship; a few per replication).
_DRIFTS_KEPT = 2**12


@functools.lru_cache(maxsize=_DRIFTS_KEPT)
def drift_factors(calendar: Calendar, date: str, drift_pct_per_year: float,
                  months: int) -> tuple[float, ...]:
    """Each horizon month's price factor (1 + drift)^(months priced since ``date`` / 12), 1.0
    throughout without drift."""
    return tuple(
        float((1 + drift_pct_per_year / 100) ** (calendar.months_priced_since(date, m) / 12))
        if drift_pct_per_year else 1.0 for m in range(months))


_INTERVALS_KEPT = 2**10


@functools.lru_cache(maxsize=_INTERVALS_KEPT)
def interval_booking(calendar: Calendar, t0_s: float, t1_s: float, gpus: int, paid_gpus: int,
                     billed_s: float) -> IntervalBooking:
    """``gpus`` GPUs held over [t0, t1) on instances of ``paid_gpus`` GPUs billed
    ``billed_s`` from t0: the demand, and the billed GPU-hours by hour and month
    (:meth:`RunContext.book_rental_interval`, :meth:`RunContext.book_rental_hourly`: the
    same arrays)."""
    hours, month_hours, month_of_hour = hour_grid(calendar)
    h0, demand = interval_gpus(hours, t0_s, t1_s, float(gpus))
    p0, profile = interval_gpus(hours, t0_s, t0_s + billed_s, float(paid_gpus))
    end = min(hours, p0 + len(profile))
    held = profile[: max(0, end - p0)]
    per_month = cast(FloatArray, np.bincount(month_of_hour[p0:end], weights=held,
                                             minlength=len(month_hours))
                     if held.size else np.zeros(len(month_hours)))
    for array in (demand, held, per_month):
        array.flags.writeable = False
    return IntervalBooking(demand_h0=h0, demand=demand, paid_h0=p0, paid=held,
                           gpu_hours_by_month=per_month, paid_gpu_hours=float(held.sum()))
