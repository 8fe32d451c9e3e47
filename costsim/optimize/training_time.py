"""Expected wall time, billed time and P(deadline missed) of one training run, analytically.

The simulator runs a training phase through :func:`costsim.sim.training_run.simulate_run`:
``work`` seconds of compute (steady time × tokens scale ÷ throughput error ÷ (1 − evaluation
share)) in cycles of τ work plus a C-second checkpoint, Poisson hardware faults at φ·λ_f,
spot preemptions at η·λ_p, each interruption costing the restart R, a lossy one also the work
since the last checkpoint, a preemption without an on-demand fallback also the reacquire wait
A; then the extra loss x beyond faults stretches the non-waiting wall time by (1 + x). This
module computes the same quantities in expectation (docs/optimizer.md "Training: time–cost
front"), by renewal–reward over *attempts*: from a save point the run works until its
checkpoint completes (s = τ + C, keeping τ), a free save strikes at t (a preemption
checkpointed within its notice, or the return from the on-demand fallback: keeping min(t, τ)),
or a lossy event strikes (a fault, or a preemption whose notice is shorter than C: keeping
nothing, costing R). Without free saves this is Daly's (1/λ + R)(e^{λs} − 1) per segment.
With an on-demand fallback each preemption is followed by A seconds on on-demand, where no
preemption strikes: the spot share of running time is 1/(1 + λ_p A).

The scenario's uncertainty factors (tokens scale, throughput error, failure and hazard scales,
the extra loss and its scale, the price drift) enter through quadrature over their
distributions (:class:`Quadrature`), never by sampling. P(wall > D) takes the hardware wall
H as lognormal (its log mean and variance over the factor grid, plus the Poisson noise of the
interruption counts), and integrates the heavy-tailed extra loss exactly over its nodes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtr, ndtri

from costsim.domain.uncertainty import (
    Distribution,
    Fixed,
    LogNormal,
    Normal,
    Triangular,
    Uniform,
)

FloatArray = NDArray[np.float64]

# Quadrature nodes per random factor: Gauss–Hermite for (log)normal factors integrates their
# moments exactly to far below the model's own error; 12 per factor keeps a four-factor grid
# at ~20,000 points per option.
NODES = 12
# Quantile nodes of the extra loss for P(deadline missed): its tail decides the probability
# when the hardware wall hardly varies, and 400 nodes resolve it to 0.0025.
TAIL_NODES = 400


@dataclass(frozen=True, slots=True)
class Quadrature:
    """Nodes and weights (summing to 1) standing for a distribution in expectations."""

    values: FloatArray
    weights: FloatArray

    def mean(self) -> float:
        """The distribution's mean (exact for the families used here)."""
        return float(self.weights @ self.values)

    def map(self, values: FloatArray) -> Quadrature:
        """The same weights on transformed values."""
        return Quadrature(np.asarray(values, dtype=np.float64), self.weights)


def quadrature(dist: Distribution, nodes: int = NODES) -> Quadrature:
    """A quadrature rule for ``dist``: Gauss–Hermite for normal and lognormal, Gauss–Legendre
    for uniform, quantile midpoints for triangular, one node for a fixed value. A normal's
    clip to [low, high] is applied to the nodes, as the simulator clips its draws."""
    if isinstance(dist, Fixed):
        return Quadrature(np.array([dist.value]), np.array([1.0]))
    if isinstance(dist, LogNormal | Normal):
        t, w = _gauss_hermite(nodes)
        z = math.sqrt(2.0) * t
        weights = w / math.sqrt(math.pi)
        if isinstance(dist, LogNormal):
            return Quadrature(dist.median * np.exp(dist.sigma * z), weights)
        low = -np.inf if dist.low is None else dist.low
        high = np.inf if dist.high is None else dist.high
        return Quadrature(np.clip(dist.mean + dist.sd * z, low, high), weights)
    if isinstance(dist, Uniform):
        t, w = _gauss_legendre(nodes)
        return Quadrature(dist.low + (t + 1) / 2 * (dist.high - dist.low), w / 2)
    if isinstance(dist, Triangular):
        q = (np.arange(nodes) + 0.5) / nodes
        low, mode, high = dist.low, dist.mode, dist.high
        split = (mode - low) / (high - low) if high > low else 0.5
        values = np.where(q < split, low + np.sqrt(q * (high - low) * (mode - low)),
                          high - np.sqrt((1 - q) * (high - low) * (high - mode)))
        return Quadrature(values, np.full(nodes, 1.0 / nodes))
    raise TypeError(f"unknown distribution {dist!r}")


# The Gauss nodes depend on their count only: computed once per count (an eigenvalue problem
# each; the training front asks for them ~1,000 times a search), kept read-only since shared
@functools.cache
def _gauss_hermite(nodes: int) -> tuple[FloatArray, FloatArray]:
    t, w = np.polynomial.hermite.hermgauss(nodes)
    return _frozen(t), _frozen(w)


@functools.cache
def _gauss_legendre(nodes: int) -> tuple[FloatArray, FloatArray]:
    t, w = np.polynomial.legendre.leggauss(nodes)
    return _frozen(t), _frozen(w)


def _frozen(array: FloatArray) -> FloatArray:
    array.flags.writeable = False
    return array


def quantile_rule(dist: Distribution, nodes: int) -> Quadrature:
    """``nodes`` equally weighted quantile midpoints of ``dist``: a rule for probabilities
    of near-step functions, where Gauss nodes are too sparse in the tails."""
    if isinstance(dist, Fixed):
        return Quadrature(np.array([dist.value]), np.array([1.0]))
    q = (np.arange(nodes) + 0.5) / nodes
    if isinstance(dist, LogNormal):
        values = dist.median * np.exp(dist.sigma * ndtri(q))
    elif isinstance(dist, Normal):
        low = -np.inf if dist.low is None else dist.low
        high = np.inf if dist.high is None else dist.high
        values = np.clip(dist.mean + dist.sd * ndtri(q), low, high)
    elif isinstance(dist, Uniform):
        values = dist.low + q * (dist.high - dist.low)
    else:
        return quadrature(dist, nodes)  # triangular: quantile midpoints already
    return Quadrature(np.asarray(values, dtype=np.float64), np.full(nodes, 1.0 / nodes))


def product(*rules: Quadrature) -> tuple[tuple[FloatArray, ...], FloatArray]:
    """The tensor-product grid of independent factors: one flat value array per factor and
    the joint weights."""
    grids = np.meshgrid(*(r.values for r in rules), indexing="ij")
    weight_grids = np.meshgrid(*(r.weights for r in rules), indexing="ij")
    weights = np.prod(np.stack([g.ravel() for g in weight_grids]), axis=0)
    return tuple(g.ravel() for g in grids), weights


@dataclass(frozen=True, slots=True)
class RunFactors:
    """The scenario's random factors on one training run, as quadrature rules."""

    work: Quadrature  # tokens scale ÷ throughput error
    failure: Quadrature  # × the fault rate
    hazard: Quadrature  # × the spot hazard
    extra: Quadrature  # x' = max(0, x × allin scale)
    extra_tail: Quadrature  # the same on quantile nodes, for probabilities


def run_factors(*, tokens_scale: Distribution, throughput_error: Distribution,
                failure_scale: Distribution, hazard_scale: Distribution,
                extra_loss: Distribution, allin_scale: Distribution) -> RunFactors:
    """Quadrature rules of the factors the simulator draws for a training run."""
    (tokens, error), w_work = product(quadrature(tokens_scale), quadrature(throughput_error))
    (x, scale), w_extra = product(quadrature(extra_loss), quadrature(allin_scale))
    (x_q, scale_q), w_tail = product(quantile_rule(extra_loss, TAIL_NODES),
                                     quadrature(allin_scale))
    return RunFactors(work=Quadrature(tokens / error, w_work),
                      failure=quadrature(failure_scale), hazard=quadrature(hazard_scale),
                      extra=Quadrature(np.maximum(0.0, x * scale), w_extra),
                      extra_tail=Quadrature(np.maximum(0.0, x_q * scale_q), w_tail))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInputs:
    """One run's deterministic inputs, as the simulator's prepared training phase holds them."""

    steady_s: float
    checkpoint_s: float
    interval_s: float
    restart_s: float
    evaluation_fraction: float
    fault_rate_per_s: float  # whole job, at failure scale 1
    preemption_rate_per_s: float = 0.0  # whole job, at hazard scale 1; 0 off spot
    spot_notice_s: float = 0.0
    reacquire_s: float = 0.0
    fallback: bool = False
    startup_s: float = 0.0  # rented instances boot first (billed, in the wall time)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunExpectation:
    """Expected times of one run (seconds) and the lognormal parameters of its hardware wall."""

    wall_s: float  # start-up + hardware wall + extra loss
    own_billed_s: float  # held on the run's own pool (start-up, work, extra loss)
    fallback_s: float  # on the on-demand fallback
    waiting_s: float  # unbilled reacquire waits
    lost_s: float  # redone work, restarts and waits: what interruptions cost in wall time
    faults: float
    preemptions: float
    log_mean: float  # of the hardware wall H
    log_sd: float
    waiting_share: float  # E[waits] / E[H]
    startup_s: float
    extra: Quadrature

    def p_longer_than(self, deadline_s: float) -> float:
        """P(wall > ``deadline_s``): H lognormal, the extra loss integrated over its nodes;
        wall = start-up + H · (1 + x'(1 − waiting share))."""
        room = deadline_s - self.startup_s
        if room <= 0 or not math.isfinite(self.log_mean):
            return 1.0
        stretch = np.log1p(self.extra.values * (1.0 - self.waiting_share))
        gap = math.log(room) - stretch - self.log_mean
        above = (gap < 0).astype(np.float64) if self.log_sd <= 1e-12 else ndtr(-gap / self.log_sd)
        return float(np.clip(self.extra.weights @ above, 0.0, 1.0))


def _attempt_terms(mu: FloatArray, tau: float, s: float) -> tuple[FloatArray, FloatArray,
                                                                  FloatArray]:
    """For one attempt from a save point under events at rate ``mu``: P(no event before the
    checkpoint completes at s = τ + C), E[time ∧ s] and ∫₀ˢ e^{−μt} min(t, τ) dt (the
    progress a free save at t keeps, weighted by its density ÷ its rate)."""
    a_s, a_t = mu * s, mu * tau
    survive = np.exp(-a_s)
    small = a_s < 1e-4
    safe = np.where(small, 1.0, mu)
    time = np.where(small, s - mu * s * s / 2, -np.expm1(-a_s) / safe)
    # ∫₀^τ t e^{−μt} dt = (1 − e^{−a}(1 + a)) / μ², a = μτ (series where it cancels)
    head = np.where(small, tau * tau / 2 - mu * tau**3 / 3,
                    (-np.expm1(-a_t) - a_t * np.exp(-a_t)) / safe**2)
    tail = np.where(small, tau * (s - tau) * (1 - mu * (s + tau) / 2),
                    tau * (np.exp(-a_t) - survive) / safe)
    return survive, time, head + tail


def expect_run(run: RunInputs, factors: RunFactors) -> RunExpectation:
    """Expected times of ``run`` under ``factors`` (module docstring); a run whose
    interruptions outpace its progress comes back with an infinite wall time."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        expected = _expect_run(run, factors)
    if math.isfinite(expected.wall_s) and math.isfinite(expected.log_sd):
        return expected
    inf = math.inf
    return RunExpectation(wall_s=inf, own_billed_s=inf, fallback_s=inf, waiting_s=inf,
                          lost_s=inf, faults=inf, preemptions=inf, log_mean=inf, log_sd=0.0,
                          waiting_share=0.0, startup_s=run.startup_s, extra=factors.extra_tail)


# A run off spot sees no preemptions: its hazard factor is one node at 1
_NO_HAZARD = Quadrature(np.array([1.0]), np.array([1.0]))
# Distinct factor grids kept: one per (work, failure, hazard) rule of a search: a handful
_GRIDS_KEPT = 64

_RuleKey = tuple[str, bytes, str, bytes]


def _rule_key(rule: Quadrature) -> _RuleKey | None:
    """A rule by value (dtype and bytes of its nodes and weights); None for a rule that is not
    two 1-d arrays (then its grid is not memoized)."""
    values, weights = rule.values, rule.weights
    if not (isinstance(values, np.ndarray) and isinstance(weights, np.ndarray)
            and values.ndim == 1 and weights.ndim == 1):
        return None
    return values.dtype.str, values.tobytes(), weights.dtype.str, weights.tobytes()


def _factor_grid(*rules: Quadrature) -> tuple[tuple[FloatArray, ...], FloatArray]:
    """:func:`product` of ``rules``, memoized by their values: every option of a training
    front carries the same work, failure and hazard rules (only the extra loss differs per
    run), so the tensor grid is built once, not once per rated option. A hit returns
    read-only arrays equal, element for element, to a cold product."""
    keys = tuple(_rule_key(rule) for rule in rules)
    if any(key is None for key in keys):
        return product(*rules)
    return _grid_of(keys)


@functools.lru_cache(maxsize=_GRIDS_KEPT)
def _grid_of(keys: tuple[_RuleKey, ...]) -> tuple[tuple[FloatArray, ...], FloatArray]:
    rules = [Quadrature(np.frombuffer(values, dtype=np.dtype(vtype)),
                        np.frombuffer(weights, dtype=np.dtype(wtype)))
             for vtype, values, wtype, weights in keys]
    grids, weight = product(*rules)
    return tuple(_frozen(g) for g in grids), _frozen(weight)


def _expect_run(run: RunInputs, factors: RunFactors) -> RunExpectation:
    hazard = factors.hazard if run.preemption_rate_per_s > 0 else _NO_HAZARD
    (m, phi, eta), weight = _factor_grid(factors.work, factors.failure, hazard)
    work = run.steady_s * m / (1.0 - run.evaluation_fraction)
    tau, ckpt = run.interval_s, run.checkpoint_s
    s = tau + ckpt
    preempt = eta * run.preemption_rate_per_s
    spot_share = 1.0 / (1.0 + preempt * run.reacquire_s) if run.fallback else np.ones_like(m)
    on_spot = preempt * spot_share  # preemptions per second of running, averaged
    noticed = run.spot_notice_s >= ckpt
    lossy_rate = phi * run.fault_rate_per_s + (0.0 if noticed else on_spot)
    # free saves: preemptions checkpointed within the notice, and returns from the fallback
    save_rate = on_spot * (float(noticed) + float(run.fallback))
    mu = lossy_rate + save_rate
    survive, attempt_time, save_progress = _attempt_terms(mu, tau, s)
    progress = tau * survive + save_rate * save_progress  # expected work kept per attempt
    attempts = work / progress
    events = attempts * (1.0 - survive)
    safe_mu = np.where(mu > 0, mu, 1.0)
    lossy = events * lossy_rate / safe_mu
    preemptions = events * on_spot / safe_mu
    keep = preemptions if noticed else np.zeros_like(m)
    checkpoints = np.maximum(attempts * survive - 1.0, 0.0)
    exposed = np.maximum(attempts * attempt_time - np.where(attempts * survive > 1, ckpt, 0.0),
                         work)
    useful = work + checkpoints * ckpt
    waits = np.zeros_like(m) if run.fallback else preemptions * run.reacquire_s
    hardware = exposed + (lossy + keep) * run.restart_s + waits
    fallback = (exposed * (1.0 - spot_share) + preemptions * run.restart_s if run.fallback
                else np.zeros_like(m))
    # Poisson noise of the interruption counts given the factors: each adds its own cost
    lost_per_lossy = np.where(mu > 0, attempt_time - s * survive, 0.0) / np.maximum(
        1.0 - survive, 1e-300)
    keep_cost = run.restart_s + (0.0 if run.fallback else run.reacquire_s)
    count_var = lossy * (run.restart_s + lost_per_lossy) ** 2 + keep * keep_cost**2
    log_h = np.log(np.maximum(hardware, 1e-9))
    log_mean = float(weight @ log_h)
    log_var = float(weight @ (log_h - log_mean) ** 2
                    + weight @ (count_var / np.maximum(hardware, 1e-9) ** 2))
    mean_h = float(weight @ hardware)
    mean_waits = float(weight @ waits)
    mean_fallback = float(weight @ fallback)
    extra = (mean_h - mean_waits) * factors.extra.mean()
    return RunExpectation(
        wall_s=run.startup_s + mean_h + extra,
        own_billed_s=run.startup_s + mean_h - mean_waits - mean_fallback + extra,
        fallback_s=mean_fallback, waiting_s=mean_waits,
        lost_s=float(weight @ (hardware - useful)),
        faults=float(weight @ (lossy + keep - preemptions)),
        preemptions=float(weight @ preemptions),
        log_mean=log_mean, log_sd=math.sqrt(max(log_var, 0.0)),
        waiting_share=mean_waits / mean_h if mean_h > 0 else 0.0,
        startup_s=run.startup_s, extra=factors.extra_tail)
