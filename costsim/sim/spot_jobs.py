"""Short experiment jobs on spot instances: preempted attempts, retries and the fallback.

An elastic experiment job boots its own instance and runs for D = start-up + run seconds. On spot,
the instance is reclaimed at the pool's hazard h per second (the spot hazard per instance-hour ×
the job's instances, costsim/data/spot_hazard.csv), so an attempt ends early at T ~ Exp(h) when
T < D. Experiment jobs are treated as not checkpointing: a preempted attempt's time is lost
(billed, booked as ``spot-lost-work``) and the job starts again from the beginning — an upper
bound on the loss for jobs that do save checkpoints. With an on-demand fallback the restart
runs there (billed at the on-demand rate, never preempted); without one, the job waits the
reacquire delay and tries spot again.

Expected billed time per job (used by the optimizer's screen; the simulation draws it):

    p = e^(−hD)                      the chance an attempt finishes
    E[min(T, D)] = (1 − p) / h       spot time of one attempt
    with fallback:    spot (1 − p)/h,  fallback (1 − p)·D
    without fallback: attempts 1/p, spot (1/p)(1 − p)/h = (e^(hD) − 1)/h
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# Attempts per job without a fallback before the simulation gives up retrying: at the catalog's
# highest hazard (25 % of instances a month, ~3.4e-4 per instance-hour) a job would have to run
# for months for this to bind; it only bounds the loop on absurd inputs.
MAX_SPOT_ATTEMPTS = 1_000


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotJobAttempts:
    """Every instance a batch of spot jobs held, relative to each job's arrival."""

    lost_job: FloatArray  # index of the job of each preempted attempt
    lost_start_s: FloatArray  # offset of the preempted attempt from the job's arrival
    lost_s: FloatArray  # how long it held its instance before the reclaim
    final_start_s: FloatArray  # per job: offset of the attempt that finishes
    final_on_fallback: NDArray[np.bool_]  # per job: the finishing attempt ran on the fallback


def spot_job_attempts(duration_s: FloatArray, hazard_per_s: float, *, fallback: bool,
                      reacquire_s: float, rng: np.random.Generator) -> SpotJobAttempts:
    """Draw the spot attempts of jobs each needing ``duration_s`` uninterrupted seconds."""
    jobs = duration_s.size
    offset = np.zeros(jobs)
    on_fallback = np.zeros(jobs, dtype=bool)
    lost: list[tuple[FloatArray, FloatArray, FloatArray]] = []
    active = np.arange(jobs)
    attempts = 0
    while active.size and hazard_per_s > 0 and attempts < MAX_SPOT_ATTEMPTS:
        attempts += 1
        reclaim = rng.exponential(1.0 / hazard_per_s, size=active.size)
        cut = reclaim < duration_s[active]
        hit = active[cut]
        lost.append((hit.astype(np.float64), offset[hit].copy(), reclaim[cut]))
        if fallback:
            offset[hit] += reclaim[cut]
            on_fallback[hit] = True
            break
        offset[hit] += reclaim[cut] + reacquire_s
        active = hit
    empty = np.zeros(0)
    return SpotJobAttempts(
        lost_job=np.concatenate([part[0] for part in lost]) if lost else empty,
        lost_start_s=np.concatenate([part[1] for part in lost]) if lost else empty,
        lost_s=np.concatenate([part[2] for part in lost]) if lost else empty,
        final_start_s=offset, final_on_fallback=on_fallback)


def expected_spot_job_s(duration_s: float, hazard_per_s: float, *, fallback: bool
                        ) -> tuple[float, float]:
    """Expected (spot, fallback) seconds one job holds an instance (module docstring)."""
    if hazard_per_s <= 0:
        return duration_s, 0.0
    finish = math.exp(-hazard_per_s * duration_s)
    attempt_s = -math.expm1(-hazard_per_s * duration_s) / hazard_per_s
    if fallback:
        return attempt_s, (1 - finish) * duration_s
    return math.expm1(hazard_per_s * duration_s) / hazard_per_s, 0.0
