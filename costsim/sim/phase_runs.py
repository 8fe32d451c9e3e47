"""The phases as simpy processes, thin over the pure rules.

Each runner is a generator the engine starts when the phase's dependencies have ended; it takes
capacity, books what it holds, and advances the clock by the phase's duration. The arithmetic is
in :mod:`costsim.sim.training_run`, :mod:`costsim.sim.fleet`, :mod:`costsim.sim.load` and
:mod:`costsim.sim.packing`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Generator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import simpy

from costsim.domain.measurements import Basis
from costsim.domain.pricing import PurchaseOption
from costsim.sim.context import RunContext
from costsim.sim.elastic import (
    JobsSpec,
    RentedJobs,
    SpotJobs,
    SpotJobsSpec,
    job_run_s,
    poisson_arrivals,
    rented_jobs,
    spot_jobs,
)
from costsim.sim.fifo import arrival_clock, fifo_queue, uniform_slots
from costsim.sim.fleet import fleet_hours, served_hours
from costsim.sim.ledger import Category
from costsim.sim.load import hourly_rates, resolve_shape
from costsim.sim.occupancy import first_room, interval_gpus, short_runs
from costsim.sim.packing import Cluster, Placement
from costsim.sim.pools import RentalPool
from costsim.sim.prepare import NO_MODEL_ERROR, ExperimentsPrep, ServingPrep, TrainingPrep
from costsim.sim.quotas import queued_starts
from costsim.sim.results import FleetProfile, ServingRecord, TrainingRunRecord
from costsim.sim.serving_prep import ServingEntryPrep
from costsim.sim.spot_jobs import FloatArray, spot_job_attempts
from costsim.sim.spot_replicas import requests_lost, spot_reclaims
from costsim.sim.streams import stream_key
from costsim.sim.training_run import RunSpec, simulate_run, simulate_run_on
from costsim.sim.waits import WaitHistogram
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

Process = Generator[Any, Any, float]


def run_training(ctx: RunContext, prep: TrainingPrep) -> Process:
    """Train on reserved/owned GPUs where free, the rest on the rental or spill pool; returns
    the end time."""
    env, phase, src = ctx.env, prep.phase, prep.source
    start = env.now
    # a measured steady rate carries no model error (DESIGN §12); both draws are still taken.
    # A predicted run's error is the shared draw times the training model's own extra error
    # (its larger error on published runs, costsim/data/allin_loss.csv)
    model_error = ctx.sample(("phase", phase.name, "model-error"), prep.model_error)
    error = (1.0 if prep.basis is Basis.MEASURED
             else ctx.draws["throughput_error"] * model_error)
    work = prep.steady_s * ctx.draws["training_tokens_scale"] / error
    bounded_gpus = 0
    owned = src.entry.option is PurchaseOption.OWNED
    # a capacity block of the phase's GPU: the run waits for its window and runs on it
    block = (None if src.bounded else
             ctx.capacity_block(src.gpu, src.entry.cloud or ctx.prep.plan.cloud, start))
    block_gpus = 0
    if block is not None:
        if start < block[0].start_s:
            yield env.timeout(block[0].start_s - start)
            start = env.now
        block_gpus = min(prep.gpus, ctx.block_free_gpus(block[1], start, block[0].end_s))
    if src.bounded:
        if src.implied_commitment is not None:
            ctx.add_commitment(replace(src.implied_commitment, start_s=start))
        bounded_gpus = min(prep.gpus, ctx.free_gpus(src.gpu, owned, start, start + work))
        if bounded_gpus < prep.gpus and src.spill is None:
            # wait for capacity (servers still in delivery, another phase on the reservation)
            wait_until = _first_time_free(ctx, src.gpu, owned, prep.gpus, start, work)
            if wait_until is None:
                return math.inf
            yield env.timeout(wait_until - start)
            start = env.now
            bounded_gpus = prep.gpus
    rented = prep.gpus - bounded_gpus - block_gpus
    pool = src.rental if not src.bounded else src.spill
    on_spot = pool is not None and pool.option is PurchaseOption.SPOT and rented > 0
    spot_hazard = 0.0
    if on_spot and pool is not None:
        spot_hazard = pool.spot_hazard_per_s(rented, ctx.draws["spot_hazard_scale"])
    faults_per_s = (prep.faults_per_gpu_hour * prep.gpus * ctx.draws["failure_rate_scale"]
                    / SECONDS_PER_HOUR)
    extra_loss = ctx.sample(("phase", phase.name, "allin-loss"), prep.extra_loss)
    spec = RunSpec(work_s=work, checkpoint_s=prep.checkpoint_s, interval_s=prep.interval_s,
                   restart_s=prep.restart_s,
                   mtbf_s=1 / faults_per_s if faults_per_s > 0 else math.inf,
                   evaluation_fraction=prep.evaluation_fraction,
                   extra_loss=max(0.0, extra_loss * ctx.draws["allin_loss_scale"]),
                   spot_hazard_per_s=spot_hazard,
                   spot_notice_s=pool.billing.spot_notice_s if pool is not None else 0.0,
                   reacquire_s=ctx.prep.sim_defaults.spot_reacquire_s,
                   fallback=src.fallback is not None)
    stream = stream_key(ctx.root, ("phase", phase.name, "run"))
    out = (simulate_run(spec, ctx.rng("phase", phase.name, "run")) if stream is None
           else simulate_run_on(spec, stream))
    # rented instances boot and load the checkpoint before the run starts (billed from launch)
    startup = ctx.prep.sim_defaults.instance_startup_s if rented and pool is not None else 0.0
    end = start + startup + out.wall_s
    if bounded_gpus:
        ctx.take_interval(phase.name, src.gpu, owned, start, end, bounded_gpus)
    relaunch_s = overrun_s = 0.0
    if block is not None and block_gpus:
        block_pool, tracked = block
        ctx.take_block(tracked, phase.name, start, min(end, block_pool.end_s), block_gpus)
        if end > block_pool.end_s and pool is not None:
            # the block's instances are reclaimed at the window's end: the run goes on from its
            # last checkpoint on the phase's own pool (on average half a checkpoint interval
            # lost, plus a restart and instance start-up), billed there (docs/simulator.md)
            overrun_s = end - block_pool.end_s
            relaunch_s = (prep.interval_s / 2 + prep.restart_s
                          + ctx.prep.sim_defaults.instance_startup_s)
            ctx.book_rental_interval(phase.name, pool, block_pool.end_s, end + relaunch_s,
                                     block_gpus)
    if rented and pool is not None:
        held_end = start + startup + out.billed_s
        if relaunch_s:  # the rented part of the job waits through the relaunch, held
            ctx.book_rental_interval(phase.name, pool, held_end, held_end + relaunch_s, rented)
        if on_spot and out.preemption_loss_s > 0:
            lost_start = held_end - out.preemption_loss_s
            ctx.book_rental_interval(phase.name, pool, start, lost_start, rented)
            ctx.book_rental_interval(phase.name, pool, lost_start, held_end, rented,
                                     Category.SPOT_LOST_WORK)
        else:
            ctx.book_rental_interval(phase.name, pool, start, held_end, rented)
        if out.fallback_s > 0 and src.fallback is not None:
            ctx.book_rental_interval(phase.name, src.fallback, held_end, held_end + out.fallback_s,
                                     rented)
    ctx.used_gpu_hours += prep.gpus * (out.billed_s + out.fallback_s + relaunch_s
                                       ) / SECONDS_PER_HOUR
    ctx.checkpoint_bytes.append((end + relaunch_s, prep.checkpoint_bytes))
    ctx.training.append(TrainingRunRecord(
        phase=phase.name, gpus=prep.gpus, wall_s=startup + out.wall_s + relaunch_s,
        gpu_hours=prep.gpus * (out.billed_s + out.fallback_s + relaunch_s) / SECONDS_PER_HOUR,
        faults=out.faults, preemptions=out.preemptions, lost_work_s=out.lost_work_s,
        cost_usd=0.0, block_overrun_s=overrun_s))
    yield env.timeout(startup + out.wall_s + relaunch_s)
    return env.now


def _first_time_free(ctx: RunContext, gpu: str, owned: bool, gpus: int, start: float,
                     work: float) -> float | None:
    """The first time from ``start`` (on an hour boundary) when ``gpus`` bounded GPUs stay free
    for ``work`` seconds, or until the horizon ends: a run that cannot finish inside the
    horizon starts as soon as its GPUs are free and is cut at the horizon's end, as a rented
    run is (the ``horizon_cuts`` warning), rather than never starting and costing nothing.
    None when the GPUs are never free within the horizon."""
    span = max(1, math.ceil(work / SECONDS_PER_HOUR))
    first = int(start // SECONDS_PER_HOUR)
    hours = ctx.hours
    if hours <= first:
        return None
    pools = ctx.pools_for(gpu, owned)
    runs = short_runs(pools, gpus, hours) if first >= 0 else None
    if runs is not None:  # nothing taken yet: the hours without room, memoized as runs
        at = first_room(runs, first, span, hours)
        return None if at is None else max(start, float(at) * SECONDS_PER_HOUR)
    # most often there is room at once: the first candidate's hours alone decide that (the
    # same free GPUs, summed over the pools in the same order, as the horizon's profile)
    until = min(first + span, hours)
    if first >= 0 and not (sum((p.free_in(first, until) for p in pools),
                               start=np.zeros(until - first)) < gpus - 1e-9).any():
        return max(start, float(first) * SECONDS_PER_HOUR)
    free = ctx.free_profile(gpu, owned)
    short = np.concatenate(([0], np.cumsum(free < gpus - 1e-9)))  # hours without room, so far
    candidates = np.arange(first, hours)
    ends = np.minimum(candidates + span, hours)
    room = short[ends] - short[candidates] == 0
    if not room.any():
        return None
    return max(start, float(candidates[np.argmax(room)]) * SECONDS_PER_HOUR)


def run_experiments(ctx: RunContext, prep: ExperimentsPrep) -> Process:
    """Poisson job arrivals; elastic jobs each on their own instance, or a FIFO queue on a
    fixed set of nodes; returns the end time."""
    env, phase = ctx.env, prep.phase
    start = env.now
    duration = ctx.prep.scenario.calendar.months_s(phase.duration_months)
    rate_per_s = phase.arrivals_per_day * ctx.draws["job_arrivals_scale"] / SECONDS_PER_DAY
    tput = ctx.draws["throughput_error"]
    rented = _rented_jobs(ctx, prep, start, duration, rate_per_s, tput)
    if rented is not None:  # elastic jobs on a rental pool: the phase as a value (memoized)
        jobs_pool, jobs = rented
        ctx.used_gpu_hours += jobs.used_gpu_hours
        if jobs.booking is not None:
            ctx.book_jobs(phase.name, jobs_pool, jobs.booking)
        ctx.queue_waits.append(jobs.waits)
        yield env.timeout(jobs.end_s - start)
        return env.now
    on_spot = _spot_jobs(ctx, prep, start, duration, rate_per_s, tput)
    if on_spot is not None:  # elastic jobs on spot: the phase as a value (memoized)
        spot_pool, fallback, spotted = on_spot
        ctx.used_gpu_hours += spotted.used_gpu_hours
        # booked as _book_elastic_jobs books them: lost attempts, spot, then the fallback
        if spotted.lost is not None:
            ctx.book_jobs(phase.name, spot_pool, spotted.lost, Category.SPOT_LOST_WORK)
        if spotted.spot is not None:
            ctx.book_jobs(phase.name, spot_pool, spotted.spot)
        if spotted.fallback is not None and fallback is not None:
            ctx.book_jobs(phase.name, fallback, spotted.fallback)
        ctx.queue_waits.append(spotted.waits)
        yield env.timeout(spotted.end_s - start)
        return env.now
    arrivals = poisson_arrivals(ctx.rng("phase", phase.name, "arrivals"), rate_per_s, start,
                                start + duration)
    run_s = job_run_s(prep.gpu_hours, ctx.rng("phase", phase.name, "sizes"), arrivals.size,
                      prep.need.gpus, tput)
    ctx.used_gpu_hours += float(run_s.sum()) * prep.need.gpus / SECONDS_PER_HOUR
    if prep.nodes is None:
        pool = prep.source.rental or prep.source.spill
        held_s = run_s + (ctx.prep.sim_defaults.instance_startup_s if pool is not None else 0.0)
        # under a quota at most max_concurrent_jobs run at once; the rest wait their turn
        starts = (arrivals if prep.max_concurrent_jobs is None
                  else queued_starts(arrivals, held_s, prep.max_concurrent_jobs))
        finish_s = starts + run_s
        if pool is not None:  # each job boots its own instance first (billed)
            finish_s = _book_elastic_jobs(ctx, prep, pool, starts, held_s)
        ctx.queue_waits.append(WaitHistogram.of(starts - arrivals))
        end = max(start + duration, float(finish_s.max(initial=start)))
        yield env.timeout(end - start)
        return env.now
    gpus = prep.nodes * prep.node.gpus
    src = prep.source
    owned = src.entry.option is PurchaseOption.OWNED
    if src.bounded and src.implied_commitment is not None:
        ctx.add_commitment(replace(src.implied_commitment, start_s=start))

    def hold(t0: float, t1: float) -> None:
        """The fixed fleet is held (reserved, owned or rented) whether jobs run or not."""
        if src.bounded:
            ctx.take_interval(phase.name, src.gpu, owned, t0, t1, gpus)
        elif src.rental is not None:
            ctx.book_rental_interval(phase.name, src.rental, t0, t1, gpus)

    # booked up front for the phase's months (a later phase asking for the same reservation
    # sees the fleet as taken); while the queue drains after them the fleet stays held, up to
    # the horizon's end if it never drains (closed by the engine then)
    hold(start, start + duration)
    open_hold = (hold, start + duration)
    ctx.open_holds.append(open_hold)
    if src.rental is not None and not src.bounded:
        ctx.record_rental_use(src.rental, float(run_s.sum()) * prep.need.gpus / SECONDS_PER_HOUR)
    slots = uniform_slots(prep.need, prep.node, prep.nodes)
    finished: simpy.Event
    if slots is None:
        finished = _queue_job_by_job(ctx, prep, arrivals, run_s)
    else:  # interchangeable slots: the queue in closed form (costsim.sim.fifo)
        queue = fifo_queue(arrival_clock(start, arrivals), run_s, slots, start_s=start,
                           horizon_s=ctx.horizon_s)
        ctx.queue_waits.append(WaitHistogram.of(queue.start_s - arrivals[:queue.start_s.size]))
        env.add_events(queue.events)
        finished = (env.event() if queue.drained_s is None
                    else env.timeout_at(queue.drained_s))
    yield env.timeout(duration)
    drain_start = env.now
    yield finished
    end = env.now
    ctx.open_holds.remove(open_hold)
    if end > drain_start:  # the queue drained after the phase's months: held until then
        hold(drain_start, end)
    return end


def _queue_job_by_job(ctx: RunContext, prep: ExperimentsPrep, arrivals: FloatArray,
                      run_s: FloatArray) -> simpy.Event:
    """FIFO on the fixed nodes simulated job by job in SimPy, for jobs whose placement can
    fragment the nodes (:func:`costsim.sim.fifo.uniform_slots` is None); returns the event
    that fires when the last job has finished. The waits of the jobs started by the horizon
    are kept as they start (:meth:`RunContext.open_waits`)."""
    env = ctx.env
    cluster = Cluster(prep.node, prep.nodes or 0)
    queue: deque[tuple[float, float]] = deque()
    waits = ctx.open_waits()
    finished = env.event()
    pending = [arrivals.size]

    def job(run: float, placement: Placement) -> Generator[Any, Any, None]:
        yield env.timeout(run)
        cluster.release(prep.need, placement)
        pending[0] -= 1
        dispatch()

    def dispatch() -> None:
        while queue:
            placement = cluster.place(prep.need)
            if placement is None:
                return
            arrived, run = queue.popleft()
            waits.append(env.now - arrived)
            env.process(job(run, placement))
        if pending[0] == 0 and not finished.triggered:
            finished.succeed()

    def arrive() -> Generator[Any, Any, None]:
        for arrival, run in zip(arrivals.tolist(), run_s.tolist(), strict=True):
            yield env.timeout(arrival - env.now)
            queue.append((arrival, run))
            dispatch()

    env.process(arrive())
    if not arrivals.size:
        finished.succeed()
    return finished


def _book_elastic_jobs(ctx: RunContext, prep: ExperimentsPrep, pool: RentalPool,
                       arrivals_s: FloatArray, held_s: FloatArray) -> FloatArray:
    """Book jobs each on its own instance (``held_s`` = start-up + run); on spot, the
    preempted attempts as lost work and the restarts on spot or the fallback
    (:mod:`costsim.sim.spot_jobs`). Returns when each job finishes."""
    phase, gpus = prep.phase.name, prep.need.gpus
    if pool.option is not PurchaseOption.SPOT or arrivals_s.size == 0:
        ctx.book_rental_jobs(phase, pool, arrivals_s, held_s, gpus)
        return arrivals_s + held_s
    fallback = prep.source.fallback
    hazard = pool.spot_hazard_per_s(gpus, ctx.draws["spot_hazard_scale"])
    tries = spot_job_attempts(held_s, hazard, fallback=fallback is not None,
                              reacquire_s=ctx.prep.sim_defaults.spot_reacquire_s,
                              rng=ctx.rng("phase", phase, "spot"))
    lost_jobs = tries.lost_job.astype(np.int64)
    ctx.book_rental_jobs(phase, pool, arrivals_s[lost_jobs] + tries.lost_start_s, tries.lost_s,
                         gpus, Category.SPOT_LOST_WORK)
    starts = arrivals_s + tries.final_start_s
    spot = ~tries.final_on_fallback
    ctx.book_rental_jobs(phase, pool, starts[spot], held_s[spot], gpus)
    if fallback is not None:
        ctx.book_rental_jobs(phase, fallback, starts[~spot], held_s[~spot], gpus)
    return starts + held_s


def _rented_jobs(ctx: RunContext, prep: ExperimentsPrep, start: float, duration: float,
                 rate_per_s: float, throughput_error: float
                 ) -> tuple[RentalPool, RentedJobs] | None:
    """The phase's elastic jobs as a value (:func:`costsim.sim.elastic.rented_jobs`) where it
    is one: each job on its own on-demand (or other unreclaimed) rental, no savings plan
    recording them hour by hour, named streams. None otherwise (the runner draws and books
    them itself)."""
    if prep.nodes is not None:
        return None
    pool = prep.source.rental or prep.source.spill
    if pool is None or pool.option is PurchaseOption.SPOT or (
            ctx.prep.savings_plans and pool.option is PurchaseOption.ON_DEMAND):
        return None
    name = prep.phase.name
    arrivals = stream_key(ctx.root, ("phase", name, "arrivals"))
    sizes = stream_key(ctx.root, ("phase", name, "sizes"))
    if arrivals is None or sizes is None:
        return None
    spec = JobsSpec(start_s=start, duration_s=duration, rate_per_s=rate_per_s,
                    gpu_hours=prep.gpu_hours, gpus=prep.need.gpus,
                    throughput_error=throughput_error,
                    startup_s=ctx.prep.sim_defaults.instance_startup_s,
                    max_concurrent_jobs=prep.max_concurrent_jobs,
                    paid_gpus=pool.gpus_paid_for(prep.need.gpus), billing=pool.billing,
                    calendar=ctx.prep.scenario.calendar, hours=ctx.hours)
    return pool, rented_jobs(spec, arrivals, sizes)


def _spot_jobs(ctx: RunContext, prep: ExperimentsPrep, start: float, duration: float,
               rate_per_s: float, throughput_error: float
               ) -> tuple[RentalPool, RentalPool | None, SpotJobs] | None:
    """The phase's elastic jobs on a spot pool as a value (:func:`costsim.sim.elastic.
    spot_jobs`) where they are one: each job on its own spot instance, restarted on the
    fallback or on spot, no savings plan recording on-demand hours hour by hour, named
    streams. None otherwise (the runner draws and books them itself)."""
    if prep.nodes is not None or ctx.prep.savings_plans:
        return None
    pool = prep.source.rental or prep.source.spill
    if pool is None or pool.option is not PurchaseOption.SPOT:
        return None
    name = prep.phase.name
    arrivals = stream_key(ctx.root, ("phase", name, "arrivals"))
    sizes = stream_key(ctx.root, ("phase", name, "sizes"))
    reclaims = stream_key(ctx.root, ("phase", name, "spot"))
    if arrivals is None or sizes is None or reclaims is None:
        return None
    gpus = prep.need.gpus
    fallback = prep.source.fallback
    jobs = JobsSpec(start_s=start, duration_s=duration, rate_per_s=rate_per_s,
                    gpu_hours=prep.gpu_hours, gpus=gpus, throughput_error=throughput_error,
                    startup_s=ctx.prep.sim_defaults.instance_startup_s,
                    max_concurrent_jobs=prep.max_concurrent_jobs,
                    paid_gpus=pool.gpus_paid_for(gpus), billing=pool.billing,
                    calendar=ctx.prep.scenario.calendar, hours=ctx.hours)
    spec = SpotJobsSpec(
        jobs=jobs, hazard_per_s=pool.spot_hazard_per_s(gpus, ctx.draws["spot_hazard_scale"]),
        reacquire_s=ctx.prep.sim_defaults.spot_reacquire_s,
        fallback_paid_gpus=None if fallback is None else fallback.gpus_paid_for(gpus),
        fallback_billing=None if fallback is None else fallback.billing)
    return pool, fallback, spot_jobs(spec, arrivals, sizes, reclaims)


def run_serving(ctx: RunContext, prep: ServingPrep) -> Process:
    """Serve hour by hour: autoscaled replicas per fleet entry, bounded GPUs first, the rest
    on the rental or spill pool (on spot: reclaimed and replaced, :mod:`costsim.sim.spot_replicas`);
    returns the end time."""
    env, phase, sim = ctx.env, prep.phase, ctx.prep.sim_defaults
    start = env.now
    duration = ctx.prep.scenario.calendar.months_s(phase.duration_months)
    natural_end = start + duration
    end = min(natural_end, ctx.horizon_s)
    # hourly buckets over the phase's exact span: a bucket the phase holds only in part (its
    # last hour, or its first when it starts mid-hour) counts pro rata, so the phase is billed
    # its exact duration and never delays the next one (docs/simulator.md "Calendar and
    # billing")
    h0, cover = interval_gpus(ctx.hours, start, end, 1.0)
    hours = cover.size
    growth = ctx.draws.get("demand_growth_pct_per_month")
    shape = resolve_shape(phase.load, sim, growth)
    rates = hourly_rates(shape, ctx.prep.scenario.calendar.start, start, hours)
    requests = served = tokens = output_tokens = replica_hours = 0.0
    preemptions = 0
    fleet_total: FloatArray | None = None
    # a predicted capacity's error: the shared throughput draw times the serving model's own
    # (its error on the blind held-out sets, costsim/data/allin_loss.csv), one draw per
    # replication for the phase; none where the scenario sets throughput_error
    error = ctx.draws["throughput_error"]
    if prep.model_error is not NO_MODEL_ERROR:
        error *= ctx.sample(("phase", phase.name, "serving-model-error"), prep.model_error)
    for entry in prep.entries:
        src = entry.source
        # what a replica serves within the SLO this replication: the predicted share scaled by
        # the drawn error, the measured share as measured (DESIGN §12)
        service_s = entry.service_capacity_at(error)
        # the autoscaler scales on observed load (queue, running requests, utilization), so
        # it sizes on the capacity the replicas turn out to have, not on the prediction: a
        # slower engine than predicted gets more replicas where the plan lets the fleet grow
        # (rented, spilled), and fills its bounded GPUs first (docs/simulator.md "Serving")
        sizing_s = entry.sizing_capacity_at(error)
        # x · 1.0 and x · 1 are x exactly: those products are skipped
        entry_rates = rates if entry.request_share == 1.0 else rates * entry.request_share
        fleet = fleet_hours(entry_rates, sizing_s, service_s,
                            entry.min_replicas, entry.max_replicas, entry.scale_up_delay_s)
        counts = fleet.replica_counts
        gpus = (counts if entry.gpus_per_replica == 1
                else counts * entry.gpus_per_replica) * cover
        served_hourly = fleet.served_within_slo * cover
        rented, pool = gpus, src.rental
        if src.bounded:
            owned = src.entry.option is PurchaseOption.OWNED
            if src.implied_commitment is not None:
                ctx.add_commitment(replace(src.implied_commitment, start_s=start))
            got = ctx.take_hourly(phase.name, src.gpu, owned, h0, gpus)
            rented, pool = gpus - got, src.spill
            if src.spill is None:
                # fixed capacity cannot grow: the replicas its GPUs hold serve what they can
                # within the SLO, the rest of the load is unmet
                share = np.divide(got, gpus, out=np.ones_like(gpus), where=gpus > 0)
                if (share < 1.0).any():
                    served_hourly = served_hours(entry_rates, counts * share, service_s,
                                                 entry.scale_up_delay_s) * cover
        missing_gpu_hours = 0.0
        gpus_sum = float(gpus.sum())
        if pool is not None:
            spot = _serve_on_spot(ctx, phase.name, pool, src.fallback, h0, entry, entry_rates,
                                  counts, rented, service_s)
            if spot is None:  # no reclaims: nothing missing, nothing lost
                _book_replicas(ctx, phase.name, pool, h0, rented, entry.gpus_per_replica,
                               gpus_sum if rented is gpus else None)
            else:
                _book_replicas(ctx, phase.name, pool, h0, rented - spot.missing_gpus,
                               entry.gpus_per_replica)
                served_hourly = np.maximum(0.0, served_hourly - spot.requests_lost)
                preemptions += spot.reclaims
                missing_gpu_hours = float(spot.unreplaced_gpus.sum())
        requests += float(fleet.requests @ cover)
        served_sum = float(served_hourly.sum())
        served += served_sum
        tokens += served_sum * (entry.prompt_tokens + entry.output_tokens)
        output_tokens += served_sum * entry.output_tokens
        replica_hours += float(counts @ cover) - missing_gpu_hours / entry.gpus_per_replica
        # whole replica counts (in float64: exact below 2^53) in any order (the first
        # entry's array is not written to)
        fleet_total = counts if fleet_total is None else fleet_total + counts
        ctx.used_gpu_hours += gpus_sum - missing_gpu_hours
    if fleet_total is None:
        fleet_total = np.zeros(hours)
    ctx.serving.append(ServingRecord(
        phase=phase.name, requests=requests, served_within_slo=served, tokens_served=tokens,
        output_tokens_served=output_tokens, replica_hours=replica_hours, cost_usd=0.0,
        replicas_by_hour=(tuple(fleet_total.astype(np.int64).tolist()) if ctx.keep_fleet
                          else ()),
        preemptions=preemptions, fleet=FleetProfile.of(h0, fleet_total)))
    yield env.timeout(end - start)
    return natural_end  # past the horizon: the phase was cut (the engine records no end)


@dataclass(frozen=True, slots=True, kw_only=True)
class _SpotServing:
    """What spot reclaims did to one fleet entry's rented replicas, hour by hour."""

    reclaims: int
    missing_gpus: FloatArray  # GPUs of reclaimed replicas, off the spot bill (average)
    unreplaced_gpus: FloatArray  # of those, not stood in for by a fallback
    requests_lost: FloatArray  # requests the missing replicas could not serve


def _serve_on_spot(ctx: RunContext, phase: str, pool: RentalPool, fallback: RentalPool | None,
                   h0: int, entry: ServingEntryPrep, rates: FloatArray, replicas: FloatArray,
                   rented_gpus: FloatArray, service_capacity_s: float) -> _SpotServing | None:
    """Reclaims of the rented replicas when ``pool`` is spot: drawn from the phase's and
    pool's own stream (so no other phase or plan draws differently); the fallback stands in
    for the gap (booked here), else the capacity is missing: the requests a reclaimed replica
    of ``service_capacity_s`` (this replication's, measured share as measured) would have
    served. None when nothing can be reclaimed (not spot, or no hazard)."""
    if pool.option is not PurchaseOption.SPOT:
        return None
    tp = entry.gpus_per_replica
    hazard = pool.spot_hazard_per_s(tp, ctx.draws["spot_hazard_scale"])
    if hazard <= 0:
        return None
    none = np.zeros(rented_gpus.size)
    drawn = spot_reclaims(rented_gpus / tp, hazard, ctx.prep.sim_defaults.spot_reacquire_s,
                          ctx.rng("phase", phase, "spot", pool.name))
    missing_gpus = drawn.missing_replicas * tp
    if fallback is not None:
        _book_replicas(ctx, phase, fallback, h0, missing_gpus, tp)
        return _SpotServing(reclaims=int(drawn.reclaims.sum()), missing_gpus=missing_gpus,
                            unreplaced_gpus=none, requests_lost=none)
    lost = requests_lost(rates, replicas, drawn.missing_replicas, service_capacity_s)
    return _SpotServing(reclaims=int(drawn.reclaims.sum()), missing_gpus=missing_gpus,
                        unreplaced_gpus=missing_gpus, requests_lost=lost)


def _book_replicas(ctx: RunContext, phase: str, pool: RentalPool, h0: int, gpus: np.ndarray,
                   gpus_per_replica: int, gpus_sum: float | None = None) -> None:
    """Rented replicas sit on whole instances: each replica's GPUs round up to instances
    (``gpus_sum``: ``float(gpus.sum())`` where the caller has it)."""
    ctx.record_demand(pool.gpu, h0, gpus)
    per_replica = pool.gpus_paid_for(gpus_per_replica)
    if gpus_per_replica == per_replica == 1:
        ctx.book_rental_hourly(phase, pool, h0, gpus, total=gpus_sum)
    else:
        ctx.book_rental_hourly(phase, pool, h0, gpus / gpus_per_replica * per_replica)
