"""One training run through failures, checkpoints and spot preemptions.

The run needs ``work_s`` seconds of steady-state compute (the performance model's
``steady_wall_time_s``, divided by the replication's throughput factor). It works in cycles of
τ seconds of compute followed by a checkpoint of C seconds (Young/Daly interval, from the
performance model). Interruptions arrive as Poisson processes:

* hardware/software faults at 1/MTBF for the whole job (the performance model's rate per
  GPU-hour × GPUs, scaled by the replication's failure factor);
* spot preemptions at the pool's hazard × instances, when the job runs on spot.

An interruption loses the work since the last completed checkpoint and costs the restart time R.
A preemption with notice ≥ C checkpoints first and loses nothing but the checkpoint and restart.
After a preemption, spot capacity returns after a reacquire delay (not billed); with an
on-demand fallback, that window runs on on-demand instead (billed there, no waiting).

Only interruptions are events: progress between two of them is closed form, so a run costs
O(interruptions) whatever its length. Evaluation (a share of productive time) and the extra loss
x beyond faults (idle allocation, rollbacks: wall · (1 + x), the calibrated model of
:mod:`costsim.perf.allin_loss`) are added on top, so nothing is counted twice with the
performance model's goodput (which the simulator does not use).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from costsim.sim.streams import StreamKey, named_rng_of


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSpec:
    """What one run needs and what interrupts it."""

    work_s: float
    checkpoint_s: float
    interval_s: float
    restart_s: float
    mtbf_s: float  # math.inf: no faults
    evaluation_fraction: float = 0.0
    extra_loss: float = 0.0  # x: extra wall time as a share of the run's own wall time
    spot_hazard_per_s: float = 0.0  # whole job; 0 when not on spot
    spot_notice_s: float = 0.0
    reacquire_s: float = 0.0
    fallback: bool = False

    def __post_init__(self) -> None:
        if not (self.work_s >= 0 and self.checkpoint_s >= 0 and self.interval_s > 0
                and self.restart_s >= 0 and self.mtbf_s > 0):
            raise ValueError(f"invalid run spec {self}")
        if not (0 <= self.evaluation_fraction < 1 and self.extra_loss >= 0):
            raise ValueError("evaluation share must be in [0, 1) and extra loss >= 0")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOutcome:
    """Where a run's wall time went (seconds)."""

    wall_s: float  # from start to finish, including waits
    billed_s: float  # time the job's instances were held on its own pool
    fallback_s: float  # time on the on-demand fallback pool
    waiting_s: float  # spot reacquire waits without a fallback (not billed)
    lost_work_s: float  # compute redone after interruptions
    preemption_loss_s: float  # of the billed time: work lost to preemptions and their restarts
    restart_total_s: float
    checkpoint_total_s: float
    extra_loss_s: float
    faults: int
    preemptions: int


def _completion_time(remaining_s: float, interval_s: float, checkpoint_s: float) -> float:
    """Uninterrupted time to finish ``remaining_s`` of work: cycles of τ + C, no checkpoint after
    the last piece."""
    full = max(0, math.ceil(remaining_s / interval_s - 1e-12) - 1)
    return remaining_s + full * checkpoint_s


def _progress(elapsed_s: float, spec: RunSpec) -> tuple[float, float, float]:
    """(work kept at completed checkpoints, work in the unfinished cycle, checkpoint time) after
    ``elapsed_s`` of uninterrupted running."""
    cycles, into = divmod(elapsed_s, spec.interval_s + spec.checkpoint_s)
    return cycles * spec.interval_s, min(into, spec.interval_s), cycles * spec.checkpoint_s


def simulate_run(spec: RunSpec, rng: np.random.Generator) -> RunOutcome:
    """Run ``spec`` once; draws interruption times from ``rng``."""
    remaining = spec.work_s / (1 - spec.evaluation_fraction) if spec.work_s > 0 else 0.0
    wall = billed = fallback = waiting = lost = restarts = checkpoints = preempt_loss = 0.0
    faults = preemptions = 0
    fault_rate = 0.0 if math.isinf(spec.mtbf_s) else 1.0 / spec.mtbf_s
    fallback_left = 0.0  # seconds of on-demand fallback before the job returns to spot
    while remaining > 1e-9:
        finish = _completion_time(remaining, spec.interval_s, spec.checkpoint_s)
        on_fallback = fallback_left > 0
        t_fault = rng.exponential(1.0 / fault_rate) if fault_rate > 0 else math.inf
        spot_rate = 0.0 if on_fallback else spec.spot_hazard_per_s
        t_preempt = rng.exponential(1.0 / spot_rate) if spot_rate > 0 else math.inf
        t_back = fallback_left if on_fallback else math.inf
        event = min(t_fault, t_preempt, t_back)
        if event >= finish:  # the run completes before anything interrupts it
            _, _, ckpt = _progress(finish, spec)
            checkpoints += ckpt
            wall += finish
            if on_fallback:
                fallback += finish
            else:
                billed += finish
            break
        kept, in_progress, ckpt = _progress(event, spec)
        checkpoints += ckpt
        wall += event
        if on_fallback:
            fallback += event
            fallback_left -= event
        else:
            billed += event
        if event == t_back:  # back to spot at a checkpoint: nothing is lost
            remaining -= kept + in_progress
            fallback_left = 0.0
            continue
        preempted = t_preempt < t_fault
        if preempted and spec.spot_notice_s >= spec.checkpoint_s:
            kept += in_progress  # checkpointed within the notice
        else:
            lost += in_progress
            if preempted and not on_fallback:
                preempt_loss += in_progress
        remaining -= kept
        restarts += spec.restart_s
        wall += spec.restart_s
        if preempted:
            preemptions += 1
            if spec.fallback:  # restart at once on on-demand, for the reacquire window
                fallback += spec.restart_s  # billed there: not spot time lost
                fallback_left = spec.reacquire_s
            else:  # wait, unbilled, for spot capacity to come back
                billed += spec.restart_s
                preempt_loss += spec.restart_s
                wall += spec.reacquire_s
                waiting += spec.reacquire_s
        else:
            faults += 1
            if on_fallback:
                fallback += spec.restart_s
                fallback_left = max(0.0, fallback_left - spec.restart_s)
            else:
                billed += spec.restart_s
    extra = (wall - waiting) * spec.extra_loss
    return RunOutcome(wall_s=wall + extra, billed_s=billed + extra, fallback_s=fallback,
                      waiting_s=waiting, lost_work_s=lost, preemption_loss_s=preempt_loss,
                      restart_total_s=restarts,
                      checkpoint_total_s=checkpoints, extra_loss_s=extra, faults=faults,
                      preemptions=preemptions)


# Every plan that trains alike in the same future (the same spec: work, faults, spot) runs the
# same run from the same stream; kept by value for a few thousand replications (a RunOutcome
# is ~100 bytes), a miss simulates it again, the same outcome.
_RUNS_KEPT = 2**12


@functools.lru_cache(maxsize=_RUNS_KEPT)
def simulate_run_on(spec: RunSpec, stream: StreamKey) -> RunOutcome:
    """:func:`simulate_run` on the named stream ``stream`` (memoized by value)."""
    return simulate_run(spec, named_rng_of(stream))
