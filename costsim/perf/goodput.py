"""Goodput of a long training run: failures, checkpoints, restarts and evaluation.

With λ interruptions per GPU-hour on G GPUs, MTBF = 1/(λ·G). A checkpoint takes C seconds
(its bytes written in parallel by every node, plus a fixed barrier cost); the interval follows
Young's rule τ = √(2·C·MTBF) (Young 1974; Daly 2006 to first order). Each interruption loses
on average half an interval of work plus the restart time R. Per unit of wall time:

    goodput = (1 − e) · (1 − (R + τ/2)/MTBF) / (1 + C/τ)

where e is the share of time spent on evaluation. All-in wall time = steady time / goodput.
Formulas take numpy arrays, so the optimizer can score many fleets in one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from costsim.domain.performance import GoodputAssumptions
from costsim.perf.flops import FloatArray
from costsim.units import BYTES_PER_GB, SECONDS_PER_HOUR

# Below this goodput a run makes no meaningful progress: failures arrive faster than the work
# between checkpoints (reported as a warning, never divided by zero).
MIN_GOODPUT = 0.01


@dataclass(frozen=True, slots=True, kw_only=True)
class GoodputArrays:
    """Goodput terms per option."""

    goodput: FloatArray
    mtbf_s: FloatArray
    checkpoint_s: FloatArray
    checkpoint_interval_s: FloatArray
    failure_loss_fraction: FloatArray  # (R + τ/2) / MTBF
    checkpoint_fraction: FloatArray  # C / τ


@dataclass(frozen=True, slots=True, kw_only=True)
class Goodput:
    """Goodput of one run and the all-in time it implies."""

    goodput: float
    steady_wall_time_s: float
    wall_time_s: float
    mtbf_s: float
    checkpoint_s: float
    checkpoint_interval_s: float
    expected_interruptions: float
    failure_loss_fraction: float
    checkpoint_fraction: float
    evaluation_fraction: float
    restart_s: float

    @property
    def would_not_finish(self) -> bool:
        """True at the goodput floor: failures arrive faster than the work between checkpoints,
        so the run makes no progress and its time and cost mean nothing."""
        return self.goodput <= MIN_GOODPUT * 1.0001


def goodput_arrays(gpus: ArrayLike, params_total: ArrayLike, gpus_per_node: ArrayLike,
                   assumptions: GoodputAssumptions) -> GoodputArrays:
    """Goodput of fleets of ``gpus`` GPUs training models of ``params_total`` parameters."""
    g = np.asarray(gpus, dtype=np.float64)
    nodes = np.maximum(1.0, np.ceil(g / np.asarray(gpus_per_node, dtype=np.float64)))
    rate_per_s = assumptions.interruptions_per_gpu_hour * g / SECONDS_PER_HOUR
    mtbf_s = np.where(rate_per_s > 0, 1.0 / np.maximum(rate_per_s, 1e-300), np.inf)
    checkpoint_bytes = np.asarray(params_total, dtype=np.float64) * (
        assumptions.checkpoint_bytes_per_param)
    checkpoint_s = assumptions.checkpoint_fixed_s + checkpoint_bytes / (
        nodes * assumptions.checkpoint_write_gb_per_s_per_node * BYTES_PER_GB)
    interval_s = np.sqrt(2.0 * checkpoint_s * mtbf_s)
    finite = np.isfinite(mtbf_s)
    # Without failures there is no interval to keep: no checkpoint or failure loss.
    safe_interval = np.where(finite, interval_s, 1.0)
    safe_mtbf = np.where(finite, mtbf_s, 1.0)
    checkpoint_fraction = np.where(finite, checkpoint_s / safe_interval, 0.0)
    failure_loss = np.where(finite, (assumptions.restart_s + safe_interval / 2.0) / safe_mtbf,
                            0.0)
    raw = (1.0 - assumptions.evaluation_fraction) * (1.0 - failure_loss) / (
        1.0 + checkpoint_fraction)
    return GoodputArrays(
        goodput=np.maximum(raw, MIN_GOODPUT),
        mtbf_s=mtbf_s,
        checkpoint_s=checkpoint_s,
        checkpoint_interval_s=interval_s,
        failure_loss_fraction=failure_loss,
        checkpoint_fraction=checkpoint_fraction,
    )


def estimate_goodput(steady_wall_time_s: float, gpus: int, params_total: int, *,
                     gpus_per_node: int, assumptions: GoodputAssumptions) -> Goodput:
    """Goodput and all-in wall time of one run of ``steady_wall_time_s`` on ``gpus`` GPUs."""
    arrays = goodput_arrays(gpus, params_total, gpus_per_node, assumptions)
    goodput = float(arrays.goodput)
    wall_s = steady_wall_time_s / goodput
    mtbf_s = float(arrays.mtbf_s)
    return Goodput(
        goodput=goodput,
        steady_wall_time_s=steady_wall_time_s,
        wall_time_s=wall_s,
        mtbf_s=mtbf_s,
        checkpoint_s=float(arrays.checkpoint_s),
        checkpoint_interval_s=float(arrays.checkpoint_interval_s),
        expected_interruptions=wall_s / mtbf_s if np.isfinite(mtbf_s) else 0.0,
        failure_loss_fraction=float(arrays.failure_loss_fraction),
        checkpoint_fraction=float(arrays.checkpoint_fraction),
        evaluation_fraction=assumptions.evaluation_fraction,
        restart_s=assumptions.restart_s,
    )
