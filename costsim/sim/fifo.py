"""A fixed fleet's first-come first-served queue of identical jobs, in closed form.

The experiments phase on a fixed fleet (``count`` GPUs) queues its jobs for the nodes
(:mod:`costsim.sim.packing`). Simulated job by job in SimPy it cost ~4 events a job (the
arrival, the job's process starting, its run ending, the process ending) at ~5 µs each, 28,000
events a replication on seed-startup-4090 (issue 20). Where every job needs the same thing and
the nodes are identical, the fleet is ``slots`` interchangeable places (:func:`uniform_slots`)
and FIFO on them has a closed form: job i starts at max(its arrival, the earliest time one of
the slots frees), a heap of the slots' free times, one pass over the jobs and no event.

It gives the times SimPy gave, to the bit: the arrival process's clock is replayed as SimPy
advanced it (:func:`arrival_clock`), a job starts at that clock or at the finish of the job
whose slot it takes, and a finish is start + run as SimPy adds a timeout's delay. The events
the job-by-job simulation processed before the horizon are counted (:func:`queue_events`), so
the run's event count (``stats.events``) is unchanged.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from costsim.sim.packing import JobNeed, NodeShape, slots_per_gpu

FloatArray = NDArray[np.float64]


def uniform_slots(need: JobNeed, node: NodeShape, nodes: int) -> int | None:
    """How many of these identical jobs ``nodes`` identical nodes run at once, where that
    number alone says whether one more fits (:class:`costsim.sim.packing.Cluster` places a job
    exactly when fewer run); None where placement can fragment (multi-GPU jobs sharing GPUs:
    which GPUs the running jobs hold matters, so the queue is simulated job by job)."""
    per_gpu = slots_per_gpu(need, node)
    if per_gpu < 1 or need.gpus > node.gpus:
        return 0
    if need.gpus == 1:
        per_node = node.gpus * per_gpu  # a node takes a job while one GPU has a free slot
    elif need.gpus == node.gpus:
        per_node = per_gpu  # every job holds every GPU: they load alike
    elif per_gpu == 1:
        per_node = node.gpus // need.gpus  # jobs hold disjoint GPUs
    else:
        return None
    if need.host_ram_bytes > 0:  # a node takes n + 1 jobs while (n + 1) · RAM ≤ its RAM
        per_node = min(per_node, node.host_ram_bytes // need.host_ram_bytes)
    return nodes * per_node


def arrival_clock(start_s: float, arrivals_s: FloatArray) -> FloatArray:
    """The times SimPy processed the arrivals at: the arrival process at clock c waits
    ``timeout(a − c)``, which SimPy schedules at c + (a − c), not always a to the bit.

    Vectorized as a fixed point: assume each previous clock equals its arrival, recompute,
    and repeat until nothing changes (a clock off its arrival is rare, so one or two passes).
    """
    clock = np.asarray(arrivals_s, dtype=np.float64)
    while True:
        previous = np.concatenate(([start_s], clock[:-1]))
        again: FloatArray = previous + (arrivals_s - previous)
        if np.array_equal(again, clock):
            return clock
        clock = again


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueRun:
    """What the queue did before the horizon: the jobs that started (a prefix of the
    arrivals: FIFO starts never decrease), when, when they finished, and the events."""

    start_s: FloatArray  # of each job that started before the horizon
    finish_s: FloatArray
    events: int  # SimPy events the job-by-job queue processed before the horizon
    drained_s: float | None  # when the last job finished; None: not before the horizon


def fifo_queue(clock_s: FloatArray, run_s: FloatArray, slots: int, *, start_s: float,
               horizon_s: float) -> QueueRun:
    """First-come first-served on ``slots`` interchangeable places of jobs arriving at
    ``clock_s`` (:func:`arrival_clock`) that run ``run_s`` seconds each (≥ 1 s)."""
    jobs = clock_s.size
    starts = _starts(clock_s, run_s, slots, horizon_s)
    started = starts.size
    finish = starts + run_s[:started]
    events = queue_events(clock_s, finish, horizon_s)
    drained: float | None = start_s
    if jobs:
        last = float(finish.max()) if started == jobs else np.inf
        drained = last if last < horizon_s else None
    return QueueRun(start_s=starts, finish_s=finish, events=events, drained_s=drained)


def queue_events(clock_s: FloatArray, finish_s: FloatArray, horizon_s: float) -> int:
    """The events the job-by-job SimPy queue processed before the horizon (SimPy stops at the
    horizon before anything scheduled at it): the arrival process's start (at the phase's
    start), one per arrival, its end (after the last arrival, or at once without any); per
    job started, its process's start; per job finished, its run's timeout and its process's
    end."""
    ended = clock_s.size == 0 or float(clock_s[-1]) < horizon_s
    return (1 + int(np.count_nonzero(clock_s < horizon_s)) + int(ended) + finish_s.size
            + 2 * int(np.count_nonzero(finish_s < horizon_s)))


def _starts(clock_s: FloatArray, run_s: FloatArray, slots: int,
            horizon_s: float) -> FloatArray:
    """Start times of the jobs that start before the horizon."""
    jobs = clock_s.size
    if slots < 1 or jobs == 0:
        return np.zeros(0)
    # first, whether any job would find every slot busy had all started on arrival: jobs
    # j < i still running when i arrives (a job ending as another arrives frees its slot for
    # it: SimPy started the arrival at that same time, whichever it processed first)
    if jobs <= slots or _never_full(clock_s, run_s, slots):
        starts = clock_s
    else:
        starts = _heap_starts(clock_s.tolist(), run_s.tolist(), slots, horizon_s)
    started = int(np.searchsorted(starts, horizon_s, side="left"))
    return np.array(starts[:started], dtype=np.float64)


def _never_full(clock_s: FloatArray, run_s: FloatArray, slots: int) -> bool:
    """True when no job arrives to find all ``slots`` busy if every job starts on arrival."""
    finish = np.sort(clock_s + run_s)
    # a job j ≥ i ends after i arrives (runs last ≥ 1 s), so the finishes ≤ i's arrival are
    # all of earlier jobs
    running = np.arange(clock_s.size) - np.searchsorted(finish, clock_s, side="right")
    return int(running.max()) < slots


def _heap_starts(clock: list[float], run: list[float], slots: int,
                 horizon_s: float) -> FloatArray:
    """FIFO on ``slots`` places: a heap of the times they free (the ``slots`` latest finishes
    so far); stops at the first job that would start at or after the horizon."""
    starts: list[float] = []
    free: list[float] = []
    for arrival, length in zip(clock, run, strict=True):
        begin = arrival
        if len(free) == slots:
            earliest = free[0]
            if earliest > begin:
                begin = earliest
            if begin >= horizon_s:
                break
            heapq.heapreplace(free, begin + length)
        else:
            if begin >= horizon_s:
                break
            heapq.heappush(free, begin + length)
        starts.append(begin)
    return np.array(starts, dtype=np.float64)
