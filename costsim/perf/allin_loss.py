"""What a real training run loses beyond hardware faults: sampling, Monte Carlo and the fit.

The goodput model (:mod:`costsim.perf.goodput`) prices hardware interruptions at one
hyperscaler's rate (Llama 3 on 16,384 H100s). Published runs of labs and start-ups lose more:
software faults, loss-spike rollbacks, node replacement, allocation held while idle. That extra
loss is an extra wall-time fraction x ≥ 0, lognormal with a median and a log-sd fitted on half
of the published runs in ``tests/data/published_runs_allin.csv`` (docs/performance.md "What real
runs lose"). One replication of a run's all-in wall time is

    work  = steady · ε · (1 + C/τ) / (1 − e)          ε: steady-state model error, median 1
    K     ~ Poisson(work / (MTBF − R − τ/2))           hardware interruptions (Young/Daly τ)
    wall  = (work + K · (R + τ/2)) · (1 + x)           each interruption loses R + half an interval

whose mean hardware part equals the goodput formula's steady / goodput. Every function takes
its random generator as an argument and is vectorized over replications, so the simulator
(costsim/sim) can reuse the pieces with its own streams.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costsim.domain.performance import AllinLossAssumptions, GoodputAssumptions
from costsim.perf.flops import FloatArray
from costsim.perf.goodput import MIN_GOODPUT, goodput_arrays
from costsim.units import SECONDS_PER_HOUR

# Gauss–Hermite nodes for E[f(Z)], Z ~ N(0, 1), in the fit's moments: 80 nodes integrate the
# lognormal loss far below the data's own precision (figures of 1-4 significant digits).
_HERMITE_NODES = 80


def sample_extra_loss(loss: AllinLossAssumptions, rng: np.random.Generator,
                      size: int) -> FloatArray:
    """``size`` draws of the extra wall-time fraction x = median · exp(σ · Z) ≥ 0."""
    z = rng.standard_normal(size)
    return np.asarray(loss.extra_loss_median * np.exp(loss.extra_loss_sigma * z))


def sample_throughput_error(loss: AllinLossAssumptions, rng: np.random.Generator,
                            size: int) -> FloatArray:
    """``size`` draws of the steady-state model's error factor ε = exp(σε · Z) (median 1)."""
    return np.asarray(np.exp(loss.throughput_error_sigma * rng.standard_normal(size)))


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
    extra = sample_extra_loss(loss, rng, replications)
    error = sample_throughput_error(loss, rng, replications)
    work_s = steady_wall_time_s * error * (1.0 + float(terms.checkpoint_fraction)) / (
        1.0 - goodput.evaluation_fraction)
    hardware_s = sample_hardware_wall_s(work_s, float(terms.mtbf_s),
                                        float(terms.checkpoint_interval_s), goodput.restart_s,
                                        rng)
    wall_s = hardware_s * (1.0 + extra)
    return AllinSample(wall_s=wall_s, gpu_hours=wall_s * gpus / SECONDS_PER_HOUR,
                       hardware_wall_s=hardware_s, extra_loss=extra, throughput_error=error)


def _log_factor_moments(median: float, sigma: float) -> tuple[float, float]:
    """Mean and variance of ln(1 + x), x = median · exp(σZ), by Gauss–Hermite quadrature."""
    nodes, weights = np.polynomial.hermite.hermgauss(_HERMITE_NODES)
    probabilities = weights / np.sqrt(np.pi)
    values = np.log1p(median * np.exp(sigma * np.sqrt(2.0) * nodes))
    mean = float(probabilities @ values)
    return mean, float(probabilities @ (values - mean) ** 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtraLossFit:
    """The fitted median and log-sd of the extra loss, and the log-ratio moments they match."""

    extra_loss_median: float
    extra_loss_sigma: float
    log_ratio_mean: float
    log_ratio_variance: float
    runs: int


def fit_extra_loss(ratios: Sequence[float], throughput_error_sigma: float) -> ExtraLossFit:
    """Lognormal extra loss whose ln(1 + x) has the mean and variance of ln(``ratios``) less
    the steady-state error's variance σε² (method of moments in log space).

    ``ratios`` are published / hardware-all-in GPU-hours, y = (1 + x) · ε with ln ε ~ N(0, σε²),
    so E[ln y] = E[ln(1 + x)] and Var[ln y] = Var[ln(1 + x)] + σε². Moments rather than maximum
    likelihood: on a handful of runs the lognormal likelihood runs off to σ → ∞ (a spike of
    zero loss plus an unbounded tail). Deterministic, so a test can recompute the shipped
    default. The median is searched in [1e-4, 10] and σ in [0.01, 5].
    """
    if len(ratios) < 2:
        raise ValueError(f"need at least 2 ratios to fit a median and a spread (got {len(ratios)})")
    values = np.asarray(ratios, dtype=np.float64)
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError("ratios must be finite and > 0")
    logs = np.log(values)
    target_mean = float(np.mean(logs))
    target_variance = max(float(np.var(logs, ddof=1)) - throughput_error_sigma**2, 0.0)
    lower, upper = np.log([1e-4, 0.01]), np.log([10.0, 5.0])

    def residuals(theta: NDArray[np.float64]) -> NDArray[np.float64]:
        mean, variance = _log_factor_moments(float(np.exp(theta[0])), float(np.exp(theta[1])))
        return np.array([mean - target_mean, np.sqrt(variance) - np.sqrt(target_variance)])

    # scipy.optimize costs ~1 s to import: only the fit needs it, not every command and worker
    from scipy.optimize import least_squares

    result = least_squares(residuals, x0=np.log([0.2, 0.5]), bounds=(lower, upper),
                           xtol=1e-12, ftol=1e-12, gtol=1e-12)
    median, sigma = np.exp(result.x)
    return ExtraLossFit(extra_loss_median=float(median), extra_loss_sigma=float(sigma),
                        log_ratio_mean=target_mean,
                        log_ratio_variance=float(np.var(logs, ddof=1)), runs=len(ratios))
