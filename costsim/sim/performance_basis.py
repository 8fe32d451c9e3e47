"""What each phase's performance figure rests on in a plan, and the error drawn on it.

A reader of a cost must know whether the throughput or capacity behind it is costsim's prior
(drawn with its out-of-sample error: σε for training, σ_serve for serving, the shared validation
error for experiment jobs), the team's measurement (DESIGN §12: no model error drawn), a serving
fleet part measured and part predicted, or the scenario's own ``uncertainty.throughput_error``
(which replaces the defaults). Read from the prepared plan, once per plan, exactly as
:mod:`costsim.sim.phase_runs` draws it: a training rate with basis ``measured`` carries no error,
a serving entry scales only its predicted share of the work
(:meth:`ServingEntryPrep.service_capacity_at`), and a prior's factor is the shared throughput
draw times the phase's model error.
"""

from __future__ import annotations

import math

from costsim.catalog.perf_defaults import allin_loss_defaults
from costsim.domain.measurements import Basis
from costsim.domain.phases import GenericJob, PhaseKind
from costsim.domain.uncertainty import Distribution, Fixed, LogNormal, Normal, Triangular, Uniform
from costsim.sim.prepare import (
    ExperimentsPrep,
    PhasePrep,
    PreparedPlan,
    ServingPrep,
    TrainingPrep,
)
from costsim.sim.results import FigureBasis, PerformanceBasis
from costsim.sim.serving_prep import ServingEntryPrep

# Φ⁻¹(0.9): a lognormal factor's P10 and P90 are median · exp(∓Z90 · σ)
Z90 = 1.2815515655446004

PRIOR, MEASURED, MIXED, STATED, NONE = (FigureBasis.PRIOR, FigureBasis.MEASURED,
                                        FigureBasis.MIXED, FigureBasis.STATED, FigureBasis.NONE)
STATED_SOURCE = "the scenario's uncertainty.throughput_error (it replaces costsim's defaults)"
# where each kind's prior error comes from (the derivations: docs/performance.md)
PRIOR_SOURCES = {
    PhaseKind.TRAINING: "costsim/data/allin_loss.csv training_error_sigma: the training model's "
                        "error on published runs it was not calibrated on (docs/performance.md, "
                        "Out-of-sample error bands)",
    PhaseKind.SERVING: "costsim/data/allin_loss.csv serving_error_sigma: the serving model's "
                       "error on the blind held-out sets (docs/performance.md, The serving "
                       "model's error out of sample)",
    PhaseKind.EXPERIMENTS: "costsim/data/allin_loss.csv throughput_error_sigma: the performance "
                           "model's error on its validation rows (docs/performance.md §4)",
}


def performance_bases(prep: PreparedPlan) -> tuple[PerformanceBasis, ...]:
    """Each prepared phase's basis in scenario order; a serving phase a pay-per-token API serves
    has no performance figure of its own and is left out."""
    out = []
    for name, phase in prep.phases.items():
        basis = _phase_basis(prep, name, phase)
        if basis is not None:
            out.append(basis)
    return tuple(out)


def _phase_basis(prep: PreparedPlan, name: str, phase: PhasePrep) -> PerformanceBasis | None:
    stated = prep.scenario.uncertainty.throughput_error
    if isinstance(phase, TrainingPrep):
        kind, share = PhaseKind.TRAINING, 0.0 if phase.basis is Basis.MEASURED else 1.0
        measured_source = phase.profile_source
        model_error = phase.model_error
        note = (f" (the rate predicted-adjusted by a measured run: {phase.profile_source})"
                if phase.basis is Basis.PREDICTED_ADJUSTED else "")
    elif isinstance(phase, ServingPrep):
        if phase.api is not None:
            return None
        kind, share = PhaseKind.SERVING, predicted_share(phase.entries)
        measured_source = "; ".join(dict.fromkeys(
            source for entry in phase.entries for _, _, source in entry.measured))
        if any(b == Basis.PREDICTED_ADJUSTED.value for e in phase.entries
               for _, b, _ in e.measured):
            measured_source += (" (some request sizes predicted-adjusted: the model scaled by "
                                "the measured ratio at the nearest measured size)")
        model_error, note = phase.model_error, ""
    else:
        kind, share, measured_source = PhaseKind.EXPERIMENTS, 1.0, ""
        model_error, note = Fixed(value=1.0), _experiments_note(phase)
    if share <= 0.0:
        return PerformanceBasis(phase=name, kind=kind.value, basis=MEASURED, sigma=0.0,
                                p10_factor=1.0, p90_factor=1.0, predicted_share=0.0,
                                error=NONE, source=measured_source)
    error = capacity_error(stated, model_error)
    p10, p90 = p10_p90(error)
    if share < 1.0:
        basis = MIXED
        source = (f"{STATED_SOURCE if stated is not None else PRIOR_SOURCES[kind]}; measured: "
                  f"{measured_source}")
    else:
        basis = STATED if stated is not None else PRIOR
        source = (STATED_SOURCE if stated is not None else PRIOR_SOURCES[kind]) + note
    return PerformanceBasis(phase=name, kind=kind.value, basis=basis, sigma=log_sd(error),
                            p10_factor=p10, p90_factor=p90, predicted_share=share,
                            error=STATED if stated is not None else PRIOR, source=source)


def _experiments_note(phase: ExperimentsPrep) -> str:
    if isinstance(phase.phase.job, GenericJob):
        return ", drawn on the job GPU-hours the scenario states"
    return ""


def predicted_share(entries: tuple[ServingEntryPrep, ...]) -> float:
    """The share of a serving phase's work (requests / service capacity, over its entries) on
    predicted capacities: exactly 1 when every entry is wholly predicted, 0 when every one is
    wholly measured."""
    if all(e.predicted_share >= 1.0 for e in entries):
        return 1.0
    if all(e.predicted_share <= 0.0 for e in entries):
        return 0.0
    work = [(e.request_share / e.service_capacity_s, e.predicted_share) for e in entries
            if e.request_share > 0 and e.service_capacity_s > 0]
    total = sum(w for w, _ in work)
    return sum(w * f for w, f in work) / total if total > 0 else 1.0


def capacity_error(stated: Distribution | None, model_error: Distribution) -> Distribution:
    """The factor the simulator draws on a phase's predicted figure: the scenario's own
    ``uncertainty.throughput_error`` where it states one (it replaces the defaults), else the
    shared throughput draw (``throughput_error_sigma``, costsim/data/allin_loss.csv) times the
    phase's own model error (training σε or serving σ_serve beyond it; Fixed 1: none)."""
    if stated is not None:
        return stated
    return combined(LogNormal(sigma=allin_loss_defaults().throughput_error_sigma), model_error)


def combined(shared: Distribution, model: Distribution) -> Distribution:
    """The product of the shared throughput draw and a phase's model error, both lognormal
    (or no error, Fixed 1): lognormal with the medians' product and log-sd √(σ₁² + σ₂²)."""
    parts = []
    for dist in (shared, model):
        if isinstance(dist, Fixed):
            parts.append((dist.value, 0.0))
        elif isinstance(dist, LogNormal):
            parts.append((dist.median, dist.sigma))
        else:  # the defaults are lognormal (costsim.sim.prepare); a stated one replaces both
            raise ValueError(f"a default throughput error must be lognormal, got {dist!r}")
    median = parts[0][0] * parts[1][0]
    sigma = math.hypot(parts[0][1], parts[1][1])
    return Fixed(value=median) if sigma == 0 else LogNormal(sigma=sigma, median=median)


def log_sd(dist: Distribution) -> float | None:
    """The log-sd of a multiplicative factor: 0 for a fixed one, None when not lognormal."""
    if isinstance(dist, Fixed):
        return 0.0
    if isinstance(dist, LogNormal):
        return dist.sigma
    return None


def p10_p90(dist: Distribution) -> tuple[float, float]:
    """The 10th and 90th percentiles of ``dist`` as the simulator draws it (a Normal clipped
    to its bounds)."""
    if isinstance(dist, Fixed):
        return dist.value, dist.value
    if isinstance(dist, LogNormal):
        return (dist.median * math.exp(-Z90 * dist.sigma),
                dist.median * math.exp(Z90 * dist.sigma))
    if isinstance(dist, Normal):
        low = -math.inf if dist.low is None else dist.low
        high = math.inf if dist.high is None else dist.high
        return (min(max(dist.mean - Z90 * dist.sd, low), high),
                min(max(dist.mean + Z90 * dist.sd, low), high))
    if isinstance(dist, Uniform):
        span = dist.high - dist.low
        return dist.low + 0.1 * span, dist.low + 0.9 * span
    assert isinstance(dist, Triangular)
    return _triangular_quantile(dist, 0.1), _triangular_quantile(dist, 0.9)


def _triangular_quantile(dist: Triangular, q: float) -> float:
    """The inverse CDF of Triangular(a, c, b): a + √(q(b−a)(c−a)) below F(c) = (c−a)/(b−a),
    b − √((1−q)(b−a)(b−c)) above."""
    a, c, b = dist.low, dist.mode, dist.high
    if b == a:
        return a
    if q < (c - a) / (b - a):
        return a + math.sqrt(q * (b - a) * (c - a))
    return b - math.sqrt((1 - q) * (b - a) * (b - c))
