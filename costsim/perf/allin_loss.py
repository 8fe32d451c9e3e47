"""What a real training run loses beyond hardware faults: sampling, Monte Carlo and the fit.

The goodput model (:mod:`costsim.perf.goodput`) prices hardware interruptions, which scale with
GPU-hours, at one hyperscaler's rate (Llama 3 on 16,384 H100s). Published runs lose more:
restarts after software faults and loss spikes, roll-backs, configuration and data changes,
allocation held while idle. Those come per run and per day of wall time, not per GPU, so their
share of a run depends on its duration: a run meets one about every D0 days (1.5, from OPT-175B's
logbook and Llama 3's interruption record), a run of hours meets none, a run of weeks many.
That extra loss is an extra wall-time fraction x ≥ 0, lognormal with a median that grows with
the run's steady wall time D (days) and a log-sd fitted on the fit half of the published runs
(docs/performance.md "What real runs lose"). One replication of a run's all-in wall time is

    work  = steady · ε · (1 + C/τ) / (1 − e)          ε: steady-state model error, median 1
    K     ~ Poisson(work / (MTBF − R − τ/2))           hardware interruptions (Young/Daly τ)
    wall  = (work + K · (R + τ/2)) · (1 + x)           each interruption loses R + half an interval
    x     = m · (1 − e^(−D/D0)) · e^(σZ)

whose mean hardware part equals the goodput formula's steady / goodput. Every function takes
its random generator as an argument and is vectorized over replications, so the simulator
(costsim/sim) can reuse the pieces with its own streams.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costsim.domain.performance import AllinLossAssumptions, GoodputAssumptions
from costsim.perf.flops import FloatArray
from costsim.perf.goodput import MIN_GOODPUT, goodput_arrays
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

# Gauss–Hermite nodes for E[f(Z)], Z ~ N(0, 1), in the fit's moments: 80 nodes integrate the
# lognormal loss far below the data's own precision (figures of 1-4 significant digits).
_HERMITE_NODES = 80


def extra_loss_median(loss: AllinLossAssumptions, steady_wall_time_s: float) -> float:
    """Median of the extra loss x of a run whose steady wall time is ``steady_wall_time_s``:
    m · (1 − exp(−D / D0)), D in days; m itself when D0 is 0 (no dependence on duration)."""
    if steady_wall_time_s < 0:
        raise ValueError(f"steady_wall_time_s must be >= 0 (got {steady_wall_time_s})")
    if loss.extra_loss_onset_days <= 0:
        return loss.extra_loss_median
    days = steady_wall_time_s / SECONDS_PER_DAY
    return float(loss.extra_loss_median * -np.expm1(-days / loss.extra_loss_onset_days))


def sample_extra_loss(loss: AllinLossAssumptions, rng: np.random.Generator, size: int, *,
                      steady_wall_time_s: float) -> FloatArray:
    """``size`` draws of the extra wall-time fraction x = m(D) · exp(σ · Z) ≥ 0 of a run whose
    steady wall time is ``steady_wall_time_s``."""
    z = rng.standard_normal(size)
    median = extra_loss_median(loss, steady_wall_time_s)
    return np.asarray(median * np.exp(loss.extra_loss_sigma * z))


def sample_throughput_error(loss: AllinLossAssumptions, rng: np.random.Generator,
                            size: int) -> FloatArray:
    """``size`` draws of the training model's error factor ε = exp(σε · Z) (median 1), with
    σε its error on published runs (``training_sigma``)."""
    return np.asarray(np.exp(loss.training_sigma * rng.standard_normal(size)))


def sample_hardware_wall_s(work_s: ArrayLike, mtbf_s: float, checkpoint_interval_s: float,
                           restart_s: float, rng: np.random.Generator) -> FloatArray:
    """Wall time of ``work_s`` seconds of work (checkpoint writes and evaluation included) under
    Poisson hardware interruptions, each losing the restart time plus half a checkpoint interval.

    While a run is down or redoing work, interruptions keep arriving, so the count over the run
    is Poisson with mean work / (MTBF − R − τ/2); its expectation reproduces the goodput
    formula's factor 1 / (1 − (R + τ/2)/MTBF), that factor's denominator floored at MIN_GOODPUT
    (a run whose failures outpace its progress, as the goodput model floors goodput).
    """
    work = np.asarray(work_s, dtype=np.float64)
    if not np.isfinite(mtbf_s):
        return work.copy()
    per_interruption_s = restart_s + checkpoint_interval_s / 2.0
    productive_s = max(mtbf_s - per_interruption_s, mtbf_s * MIN_GOODPUT)
    counts = rng.poisson(work / productive_s)
    return np.asarray(work + counts * per_interruption_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class AllinSample:
    """Replications of one run's all-in time: wall seconds, GPU-hours and their parts."""

    wall_s: FloatArray
    gpu_hours: FloatArray
    hardware_wall_s: FloatArray
    extra_loss: FloatArray
    throughput_error: FloatArray

    def gpu_hours_band(self) -> tuple[float, float, float]:
        """P10, P50 and P90 of the GPU-hours."""
        p10, p50, p90 = np.quantile(self.gpu_hours, (0.1, 0.5, 0.9))
        return float(p10), float(p50), float(p90)


def simulate_allin(steady_wall_time_s: float, gpus: int, params_total: int, *,
                   gpus_per_node: int, goodput: GoodputAssumptions,
                   loss: AllinLossAssumptions, rng: np.random.Generator,
                   replications: int) -> AllinSample:
    """``replications`` draws of a run's all-in wall time and GPU-hours (module docstring).

    Draw order is fixed (extra loss, throughput error, then interruptions), so the same
    generator state gives the same numbers, and changing only the loss assumptions moves
    each replication monotonically. A caller that varies throughput itself (the scenario's
    uncertainty block) passes ``throughput_error_sigma=0`` so the error is not counted twice.
    """
    if replications < 1:
        raise ValueError(f"replications must be >= 1 (got {replications})")
    if steady_wall_time_s < 0:
        raise ValueError(f"steady_wall_time_s must be >= 0 (got {steady_wall_time_s})")
    terms = goodput_arrays(gpus, params_total, gpus_per_node, goodput)
    extra = sample_extra_loss(loss, rng, replications, steady_wall_time_s=steady_wall_time_s)
    error = sample_throughput_error(loss, rng, replications)
    work_s = steady_wall_time_s * error * (1.0 + float(terms.checkpoint_fraction)) / (
        1.0 - goodput.evaluation_fraction)
    hardware_s = sample_hardware_wall_s(work_s, float(terms.mtbf_s),
                                        float(terms.checkpoint_interval_s), goodput.restart_s,
                                        rng)
    wall_s = hardware_s * (1.0 + extra)
    return AllinSample(wall_s=wall_s, gpu_hours=wall_s * gpus / SECONDS_PER_HOUR,
                       hardware_wall_s=hardware_s, extra_loss=extra, throughput_error=error)


@cache
def _standard_normal_nodes() -> tuple[FloatArray, FloatArray]:
    """Gauss–Hermite nodes and weights for E[f(Z)], Z ~ N(0, 1) (computed once)."""
    nodes, weights = np.polynomial.hermite.hermgauss(_HERMITE_NODES)
    return np.sqrt(2.0) * nodes, weights / np.sqrt(np.pi)


@dataclass(frozen=True, slots=True, kw_only=True)
class AllinLossFit:
    """The fitted long-run median and log-sd of the extra loss, the steady-state model's error,
    and the fit's log-likelihood."""

    extra_loss_median: float
    extra_loss_sigma: float
    throughput_error_sigma: float
    log_likelihood: float
    runs: int


def log_ratio_density(log_ratios: ArrayLike, medians: ArrayLike, sigma: float,
                      throughput_error_sigma: float) -> FloatArray:
    """Density of ln y for runs whose extra loss has the given ``medians``: y = (1 + x) · ε,
    x = median · exp(σZ), ln ε ~ N(0, σε²); the x integral by Gauss–Hermite quadrature."""
    z, probabilities = _standard_normal_nodes()
    logs = np.asarray(log_ratios, dtype=np.float64)[:, None]
    shift = np.log1p(np.asarray(medians, dtype=np.float64)[:, None] * np.exp(sigma * z))
    normal = np.exp(-0.5 * ((logs - shift) / throughput_error_sigma) ** 2) / (
        throughput_error_sigma * np.sqrt(2.0 * np.pi))
    return np.asarray(normal @ probabilities)


def fit_allin_loss(ratios: Sequence[float], steady_wall_times_s: Sequence[float], *,
                   onset_days: float, min_throughput_error_sigma: float,
                   loss_free: Sequence[bool] | None = None) -> AllinLossFit:
    """Maximum-likelihood long-run median m and log-sd σ of the extra loss and the steady-state
    model's error σε, from published / hardware-all-in ``ratios`` of runs with the given steady
    wall times (the onset D0 is given, not fitted).

    y = (1 + x) · ε with x = m · (1 − e^(−D/D0)) · e^(σZ): runs of hours (x ≈ 0) measure the
    steady-state model's error, runs of weeks the loss on top of it, so both are identified.
    A run flagged in ``loss_free`` published a figure that holds no loss beyond steady speed
    (a timer, a throughput-derived or scheduled time): its x is 0 whatever its duration, so it
    informs σε only.
    σε is kept at or above ``min_throughput_error_sigma`` (the model's error on its own
    validation rows: it is not better on runs it was not calibrated on). Deterministic
    (Gauss–Hermite likelihood, bounded L-BFGS-B from fixed starts), so a test can recompute
    the shipped defaults. m is searched in [1e-4, 10], σ in [0.01, 5], σε up to 2.
    """
    if len(ratios) < 3:
        raise ValueError(f"need at least 3 runs to fit three parameters (got {len(ratios)})")
    if len(ratios) != len(steady_wall_times_s):
        raise ValueError("ratios and steady_wall_times_s differ in length")
    values = np.asarray(ratios, dtype=np.float64)
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError("ratios must be finite and > 0")
    loss_shape = AllinLossAssumptions(extra_loss_median=1.0, extra_loss_sigma=0.0,
                                      throughput_error_sigma=0.0,
                                      extra_loss_onset_days=onset_days)
    if loss_free is not None and len(loss_free) != len(ratios):
        raise ValueError("loss_free and ratios differ in length")
    onset = np.array([extra_loss_median(loss_shape, s) for s in steady_wall_times_s])
    if loss_free is not None:
        onset = np.where(np.asarray(loss_free, dtype=bool), 0.0, onset)
    logs = np.log(values)
    floor = max(min_throughput_error_sigma, 1e-3)
    bounds = [(np.log(1e-4), np.log(10.0)), (np.log(0.01), np.log(5.0)),
              (np.log(floor), np.log(2.0))]

    def negative_log_likelihood(theta: NDArray[np.float64]) -> float:
        median, sigma, error_sigma = np.exp(theta)
        density = log_ratio_density(logs, median * onset, float(sigma), float(error_sigma))
        return float(-np.sum(np.log(np.maximum(density, 1e-300))))

    starts = [np.log([0.3, 0.5, max(floor, 0.2)]), np.log([0.1, 1.5, floor]),
              np.log([1.0, 0.1, max(floor, 0.4)])]
    # scipy.optimize costs ~1 s to import: only the fit needs it, not every command and worker
    from scipy.optimize import minimize

    best = min((minimize(negative_log_likelihood, start, method="L-BFGS-B", bounds=bounds,
                         options={"ftol": 1e-10, "gtol": 1e-7, "maxiter": 300})
                for start in starts), key=lambda result: float(result.fun))
    median, sigma, error_sigma = np.exp(best.x)
    return AllinLossFit(extra_loss_median=float(median), extra_loss_sigma=float(sigma),
                        throughput_error_sigma=float(error_sigma),
                        log_likelihood=-float(best.fun), runs=len(ratios))
