"""Sizing a serving fleet: the request rate a sizing rule lets one replica take, and the
replicas a rate needs.

A replica of maximum request rate λ_max may take at most

    capacity = min(u · λ_max, λ_SLO)

where u is the target utilization (default 0.70: Knative's autoscaler, which KServe's serverless
mode uses, targets 70 % of a replica's capacity; Amazon SageMaker's target-tracking guide starts
at 0.5 of the load-tested maximum) and λ_SLO is the highest rate whose p95 TTFT and TPOT meet
the SLO (:func:`costsim.perf.latency.max_rate_at_slo`): the SLO given, else the default
interactive one (MLPerf Inference Server: TTFT 2 s, TPOT 100 ms). Replicas = ⌈rate /
capacity⌉, so with u ≤ 0.9 a sized fleet keeps at least 10 % headroom: replicas · λ_max ≥
rate / u ≥ rate / 0.9. When the *default* SLO cannot be met at any load the fleet is sized by
u alone (and the caller warns); a *given* SLO that cannot be met leaves no capacity.

Everything here is arithmetic on floats and arrays with frozen results, so the simulator's
autoscaler can call :func:`replicas_for_rate` per time bucket (vectorized over buckets) and
:func:`costsim.perf.latency.latency_at_load` at the resulting per-replica load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike

from costsim.domain.performance import ServingAssumptions
from costsim.errors import InputError

# Headroom floor of issue 8: a sized fleet's maximum throughput covers rate / 0.9.
MAX_DEFAULT_UTILIZATION = 0.9
# No real fleet comes near a billion replicas (there are tens of millions of datacenter GPUs in
# the world); the bound also keeps replica counts exact in int64 and float64 arithmetic.
MAX_REPLICAS = 10**9
# rate / capacity is shrunk by this relative amount before ⌈·⌉ so that a rate of exactly k
# capacities (k · c computed in floats, a few ulps off) needs k replicas, not k + 1, while any
# rate > 0 still needs at least one.
RATIO_TOLERANCE = 1e-12


class SizingBound(StrEnum):
    """Which bound of a :class:`SizingRule` set a replica's capacity."""

    TARGET_UTILIZATION = "target-utilization"
    SLO = "slo"


class SloSource(StrEnum):
    """Where the SLO of a sizing rule came from."""

    DEFAULT = "default"
    GIVEN = "given"


@dataclass(frozen=True, slots=True, kw_only=True)
class SizingRule:
    """How much load a replica may take: a target utilization and a p95 latency SLO."""

    target_utilization: float
    slo_ttft_p95_s: float | None
    slo_tpot_p95_s: float | None
    slo_source: SloSource

    def __post_init__(self) -> None:
        if not 0 < self.target_utilization <= 1:
            raise InputError("", "--target-utilization",
                             f"must be in (0, 1] (got {self.target_utilization:g})")
        for flag, value in (("--slo-ttft-s", self.slo_ttft_p95_s),
                            ("--slo-tpot-s", self.slo_tpot_p95_s)):
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise InputError("", flag, f"must be a finite number > 0 (got {value:g})")


def sizing_rule(assumptions: ServingAssumptions, *, slo_ttft_s: float | None = None,
                slo_tpot_s: float | None = None,
                target_utilization: float | None = None) -> SizingRule:
    """The rule a fleet is sized by: a given SLO (either part) replaces the default SLO as a
    whole (a part not given is then unconstrained); the target utilization defaults to the
    shipped one."""
    given = slo_ttft_s is not None or slo_tpot_s is not None
    utilization = (assumptions.target_utilization if target_utilization is None
                   else target_utilization)
    if given:
        return SizingRule(target_utilization=utilization, slo_ttft_p95_s=slo_ttft_s,
                          slo_tpot_p95_s=slo_tpot_s, slo_source=SloSource.GIVEN)
    return SizingRule(target_utilization=utilization,
                      slo_ttft_p95_s=assumptions.default_slo_ttft_p95_s,
                      slo_tpot_p95_s=assumptions.default_slo_tpot_p95_s,
                      slo_source=SloSource.DEFAULT)


def slo_text(slo_ttft_p95_s: float | None, slo_tpot_p95_s: float | None) -> str:
    """An SLO as a user reads it: ``p95 TTFT <= 2 s, TPOT <= 100 ms``."""
    parts = ([f"TTFT <= {slo_ttft_p95_s:g} s"] if slo_ttft_p95_s is not None else []) + (
        [f"TPOT <= {slo_tpot_p95_s * 1000:g} ms"] if slo_tpot_p95_s is not None else [])
    return "p95 " + ", ".join(parts) if parts else "none"


def sizing_warnings(rule: SizingRule, slo_met: bool) -> list[str]:
    """What a user must know about the rule that sized a fleet."""
    warnings: list[str] = []
    slo = slo_text(rule.slo_ttft_p95_s, rule.slo_tpot_p95_s)
    if not slo_met and rule.slo_source is SloSource.GIVEN:
        warnings.append(f"no request rate meets the SLO ({slo}) on this GPU: a faster GPU, "
                        "more tensor parallelism or a looser SLO is needed")
    elif not slo_met:
        warnings.append(f"the default SLO ({slo}) is not met at any load on this GPU; sized "
                        f"by target utilization {rule.target_utilization:.0%} alone (give "
                        "--slo-ttft-s/--slo-tpot-s, or see the advice)")
    if rule.target_utilization > MAX_DEFAULT_UTILIZATION:
        warnings.append(f"--target-utilization {rule.target_utilization:g} leaves less than "
                        f"{1 - MAX_DEFAULT_UTILIZATION:.0%} headroom: a burst or a slow "
                        "replica overloads the fleet")
    return warnings


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaCapacity:
    """The load one replica may take under a :class:`SizingRule`.

    ``requests_per_s`` is what sizing divides the rate by (0 when a given SLO cannot be met);
    ``slo_met``: some load meets the SLO; ``bound``: which bound set ``requests_per_s``.
    """

    max_requests_per_s: float
    at_slo_requests_per_s: float
    requests_per_s: float
    bound: SizingBound
    slo_met: bool

    @property
    def utilization(self) -> float:
        """``requests_per_s`` as a share of the maximum (0 when the maximum is 0)."""
        if self.max_requests_per_s <= 0:
            return 0.0
        return self.requests_per_s / self.max_requests_per_s


def capacity_under_rule(max_requests_per_s: float, at_slo_requests_per_s: float,
                        rule: SizingRule) -> ReplicaCapacity:
    """min(u · λ_max, λ_SLO), with the fall-back of the module docstring when no load meets
    the SLO."""
    if max_requests_per_s < 0 or at_slo_requests_per_s < 0:
        raise ValueError("request rates must be >= 0")
    by_utilization = rule.target_utilization * max_requests_per_s
    slo_met = at_slo_requests_per_s > 0
    if not slo_met:
        usable = by_utilization if rule.slo_source is SloSource.DEFAULT else 0.0
        return ReplicaCapacity(max_requests_per_s=max_requests_per_s,
                               at_slo_requests_per_s=0.0, requests_per_s=usable,
                               bound=(SizingBound.TARGET_UTILIZATION
                                      if rule.slo_source is SloSource.DEFAULT
                                      else SizingBound.SLO),
                               slo_met=False)
    if at_slo_requests_per_s < by_utilization:
        return ReplicaCapacity(max_requests_per_s=max_requests_per_s,
                               at_slo_requests_per_s=at_slo_requests_per_s,
                               requests_per_s=at_slo_requests_per_s, bound=SizingBound.SLO,
                               slo_met=True)
    return ReplicaCapacity(max_requests_per_s=max_requests_per_s,
                           at_slo_requests_per_s=at_slo_requests_per_s,
                           requests_per_s=by_utilization,
                           bound=SizingBound.TARGET_UTILIZATION, slo_met=True)


def replicas_for_rate(rate_requests_per_s: ArrayLike,
                      capacity_requests_per_s: float) -> np.ndarray:
    """⌈rate / capacity⌉ replicas for each rate (0 for a rate of 0), as int64 (0-d for a
    scalar rate). Never falls as the rate rises.

    Raises:
        ValueError: a capacity that is not a finite number > 0, a negative or non-finite rate,
            or a rate that needs more than :data:`MAX_REPLICAS` replicas.
    """
    if not (capacity_requests_per_s > 0 and math.isfinite(capacity_requests_per_s)):
        raise ValueError(f"capacity must be a finite number > 0 "
                         f"(got {capacity_requests_per_s})")
    rates = np.asarray(rate_requests_per_s, dtype=np.float64)
    # min and max, not isfinite/any passes (called per hour of a simulated year): a NaN makes
    # the minimum NaN, which is not >= 0
    if rates.size and not (rates.min() >= 0 and math.isfinite(rates.max())):
        raise ValueError("rates must be finite and >= 0")
    ratio = rates / capacity_requests_per_s * (1.0 - RATIO_TOLERANCE)
    if ratio.size and ratio.max() > MAX_REPLICAS:
        raise ValueError(f"a rate needs more than {MAX_REPLICAS:,} replicas")
    # A positive rate needs a replica even where rate / capacity underflows to 0: ⌈ratio⌉ >= 0,
    # raised to 1 (True) where the rate is positive, left at 0 (False) where it is 0
    return np.maximum(np.ceil(ratio), rates > 0).astype(np.int64)
