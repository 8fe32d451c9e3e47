"""Elastic experiment jobs, each on its own rented instance: arrivals, sizes, the booking they
make, as pure functions of values (issue 20).

An experiments phase of elastic jobs on a rental pool (every plan of the flagship but the spot
one prototypes this way) depends only on its streams, a few draws and the pool's billing rule,
not on the plan around it: every plan that prototypes on the same pool in the same future books
the same jobs. :func:`rented_jobs` is that phase as a value, memoized by its inputs (the
streams by their keys, :mod:`costsim.sim.streams`), so the plans after the first replay it
instead of drawing and binning the jobs again: the same arrays, so the same additions in the
same order, bit for bit. The cache is bounded; a miss computes the same value, so a result
never depends on what was cached (or on how replications are split over workers).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import NDArray

from costsim.domain.calendar import Calendar
from costsim.domain.pricing import BillingRule
from costsim.domain.uncertainty import Distribution
from costsim.sim.draws import draw_many
from costsim.sim.occupancy import hour_grid, intervals_gpus_part
from costsim.sim.quotas import queued_starts
from costsim.sim.spot_jobs import spot_job_attempts
from costsim.sim.streams import StreamKey, named_rng_of
from costsim.sim.waits import WaitHistogram
from costsim.units import SECONDS_PER_HOUR

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def poisson_arrivals(rng: np.random.Generator, rate_per_s: float, start_s: float,
                     end_s: float, *, block: int | None = None) -> FloatArray:
    """Arrival times in [start, end) of a Poisson process: t_k = t_(k-1) + Exp(1/rate).

    Drawn in blocks: a block of gaps holds the numbers as many scalar draws would, and its
    running sum (numpy's cumsum adds left to right) the times the scalar loop ``t += gap``
    gave, to the bit (tests/sim/test_experiments_queue.py). A block covers the expected count
    plus four standard deviations (unless ``block`` says otherwise), so one block nearly always
    suffices; the stream is the arrivals' own, so the draws past the end are never used."""
    if rate_per_s <= 0 or end_s <= start_s:
        return np.zeros(0)
    scale = 1.0 / rate_per_s
    expected = (end_s - start_s) * rate_per_s
    if block is None:
        block = int(expected + 4 * math.sqrt(expected)) + 16
    parts: list[FloatArray] = []
    t = start_s
    while True:
        times = np.cumsum(np.concatenate(([t], rng.exponential(scale, size=block))))[1:]
        first_out = int(np.searchsorted(times, end_s, side="left"))
        if first_out < block:
            parts.append(times[:first_out])
            return np.concatenate(parts)
        parts.append(times)
        t = float(times[-1])


def job_run_s(gpu_hours: Distribution, rng: np.random.Generator, jobs: int, gpus: int,
              throughput_error: float) -> FloatArray:
    """Each job's run time: its GPU-hours drawn in one block (a size distribution can draw near
    zero: never negative) over its GPUs and the replication's throughput error, at least 1 s."""
    drawn = np.maximum(0.0, draw_many(gpu_hours, rng, jobs))
    run_s: FloatArray = np.maximum(1.0, drawn / gpus * SECONDS_PER_HOUR / throughput_error)
    return run_s


@dataclass(frozen=True, slots=True, kw_only=True)
class JobsBooking:
    """What jobs each on its own instances book on a rental pool (arrays read-only)."""

    demand_h0: int  # first hour of ``demand``
    demand: FloatArray  # GPUs the jobs hold from that hour (rentals before whole instances)
    gpu_hours_by_month: FloatArray  # billed GPU-hours by horizon month the jobs started in
    paid_gpu_hours: float  # their sum, as the pool's paid hours


def jobs_booking(starts_s: FloatArray, run_s: FloatArray, gpus: int, paid_gpus: int,
                 billing: BillingRule, horizon_s: float, hours: int,
                 month_of_hour: IntArray, months: int) -> JobsBooking:
    """Jobs each on their own instances, with the billing minimum and increment, booked in the
    month each started (jobs starting past the horizon pay nothing); ``starts_s`` not empty."""
    billed_s = np.ceil(np.maximum(run_s, billing.minimum_s) / billing.increment_s - 1e-9) * (
        billing.increment_s)
    billed_h = np.where(starts_s < horizon_s, billed_s / SECONDS_PER_HOUR * paid_gpus, 0.0)
    h0, demand = intervals_gpus_part(hours, starts_s, starts_s + run_s, float(gpus))
    start_hours = np.minimum((starts_s // SECONDS_PER_HOUR).astype(np.int64), hours - 1)
    # weighted: float64 counts (numpy's stubs say int)
    per_month = cast(FloatArray, np.bincount(month_of_hour[start_hours], weights=billed_h,
                                             minlength=months))
    demand.flags.writeable = False
    per_month.flags.writeable = False
    return JobsBooking(demand_h0=h0, demand=demand, gpu_hours_by_month=per_month,
                       paid_gpu_hours=float(billed_h.sum()))


@dataclass(frozen=True, slots=True, kw_only=True)
class RentedJobs:
    """One replication's elastic jobs on a rental pool, as the phase books them."""

    used_gpu_hours: float  # GPU-hours of work (run time × GPUs)
    booking: JobsBooking | None  # None: no job arrived
    waits: WaitHistogram
    end_s: float  # the phase's end: its months, or the last job's finish if later


@dataclass(frozen=True, slots=True, kw_only=True)
class JobsSpec:
    """Every value :func:`rented_jobs` depends on besides its two streams (hashable)."""

    start_s: float
    duration_s: float
    rate_per_s: float
    gpu_hours: Distribution
    gpus: int  # GPUs a job runs on
    throughput_error: float
    startup_s: float  # instance start-up before each job runs (billed)
    max_concurrent_jobs: int | None
    paid_gpus: int  # GPUs billed per job (whole instances)
    billing: BillingRule
    calendar: Calendar
    hours: int  # horizon hours


# Each entry holds a phase's demand profile (~12 KB for two months of hours): 1,024 of them
# are ~12 MB, enough for every plan of a run of up to 1,024 replications to share them.
_JOBS_KEPT = 1024


def _drawn(spec: JobsSpec, arrivals: StreamKey, sizes: StreamKey
           ) -> tuple[FloatArray, float, FloatArray, FloatArray]:
    """The phase's jobs as the streams draw them: arrival times, the GPU-hours they use, the
    time each holds its instance (start-up included) and when each starts (queued behind
    ``max_concurrent_jobs``)."""
    start, end = spec.start_s, spec.start_s + spec.duration_s
    arrived = poisson_arrivals(named_rng_of(arrivals), spec.rate_per_s, start, end)
    run_s = job_run_s(spec.gpu_hours, named_rng_of(sizes), arrived.size, spec.gpus,
                      spec.throughput_error)
    used = float(run_s.sum()) * spec.gpus / SECONDS_PER_HOUR
    held_s = run_s + spec.startup_s
    starts = (arrived if spec.max_concurrent_jobs is None
              else queued_starts(arrived, held_s, spec.max_concurrent_jobs))
    return arrived, used, held_s, starts


@functools.lru_cache(maxsize=_JOBS_KEPT)
def rented_jobs(spec: JobsSpec, arrivals: StreamKey, sizes: StreamKey) -> RentedJobs:
    """The phase's jobs from the streams ``arrivals`` and ``sizes`` (memoized by value)."""
    arrived, used, held_s, starts = _drawn(spec, arrivals, sizes)
    booking = None
    if starts.size:
        _, month_hours, by_hour = hour_grid(spec.calendar)
        booking = jobs_booking(starts, held_s, spec.gpus, spec.paid_gpus, spec.billing,
                               spec.calendar.horizon_s, spec.hours, by_hour, len(month_hours))
    finish_s = starts + held_s
    return RentedJobs(used_gpu_hours=used, booking=booking,
                      waits=WaitHistogram.of(starts - arrived),
                      end_s=max(spec.start_s + spec.duration_s,
                                float(finish_s.max(initial=spec.start_s))))


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotJobsSpec:
    """Every value :func:`spot_jobs` depends on besides its three streams (hashable): the
    jobs on the spot pool (its billing and GPUs paid in ``jobs``), the reclaims, the
    fallback's billing (None without a fallback)."""

    jobs: JobsSpec
    hazard_per_s: float  # reclaims per second of one job's instances
    reacquire_s: float
    fallback_paid_gpus: int | None
    fallback_billing: BillingRule | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotJobs:
    """One replication's elastic jobs on a spot pool, as the phase books them: each booking
    None where it holds no job (the runner books nothing then)."""

    used_gpu_hours: float  # GPU-hours of work (run time × GPUs)
    lost: JobsBooking | None  # preempted attempts, on the spot pool (spot-lost-work)
    spot: JobsBooking | None  # the attempts that finished on spot
    fallback: JobsBooking | None  # the restarts that finished on the fallback
    waits: WaitHistogram
    end_s: float  # the phase's end: its months, or the last job's finish if later


# Three bookings an entry (the spot jobs' demand over the phase's hours, the lost attempts' and
# the fallback's, ~12 KB each for the flagship's two-month prototype): 256 entries are ~9 MB,
# enough for the plans of a run of up to 256 replications (the default is 200) to share them;
# a longer run computes them again (the same values).
_SPOT_JOBS_KEPT = 256


@functools.lru_cache(maxsize=_SPOT_JOBS_KEPT)
def spot_jobs(spec: SpotJobsSpec, arrivals: StreamKey, sizes: StreamKey,
              reclaims: StreamKey) -> SpotJobs:
    """The phase's jobs on spot from the streams ``arrivals``, ``sizes`` and ``reclaims``
    (memoized by value): what the runner draws and books job by job batch
    (``phase_runs._book_elastic_jobs``), the same arrays in the same order."""
    jobs = spec.jobs
    arrived, used, held_s, starts = _drawn(jobs, arrivals, sizes)
    _, month_hours, by_hour = hour_grid(jobs.calendar)

    def booking(starts_s: FloatArray, run: FloatArray, paid_gpus: int,
                billing: BillingRule) -> JobsBooking | None:
        if starts_s.size == 0:
            return None
        return jobs_booking(starts_s, run, jobs.gpus, paid_gpus, billing,
                            jobs.calendar.horizon_s, jobs.hours, by_hour, len(month_hours))

    lost = spot = fallback = None
    finish_s = starts + held_s
    if starts.size:
        tries = spot_job_attempts(held_s, spec.hazard_per_s,
                                  fallback=spec.fallback_paid_gpus is not None,
                                  reacquire_s=spec.reacquire_s, rng=named_rng_of(reclaims))
        lost_jobs = tries.lost_job.astype(np.int64)
        lost = booking(starts[lost_jobs] + tries.lost_start_s, tries.lost_s, jobs.paid_gpus,
                       jobs.billing)
        final = starts + tries.final_start_s
        on_spot = ~tries.final_on_fallback
        spot = booking(final[on_spot], held_s[on_spot], jobs.paid_gpus, jobs.billing)
        if spec.fallback_paid_gpus is not None and spec.fallback_billing is not None:
            fallback = booking(final[~on_spot], held_s[~on_spot], spec.fallback_paid_gpus,
                               spec.fallback_billing)
        finish_s = final + held_s
    return SpotJobs(used_gpu_hours=used, lost=lost, spot=spot, fallback=fallback,
                    waits=WaitHistogram.of(starts - arrived),
                    end_s=max(jobs.start_s + jobs.duration_s,
                              float(finish_s.max(initial=jobs.start_s))))
