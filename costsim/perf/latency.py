"""Latency of a serving replica at a request rate, and the highest rate that meets an SLO.

At a load λ per replica: prefill takes a share ρ_p = λ·t_prefill of the GPU, decode concurrency
n solves n = λ · output · TPOT(n) (Little's law), TPOT = t_step(n)/(1 − ρ_p); TTFT = prefill
latency + half an iteration + an M/D/1 queueing wait ρ/(2(1−ρ))·t_prefill with ρ = λ/λ_max.
Tail rule (p95): TTFT_p95 = prefill latency + one full iteration + 3.0 × the mean wait (the p95
of an exponential wait); TPOT_p95 = TPOT at the p95 concurrency n + 1.645·√n (Poisson).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from costsim.domain.performance import ServingAssumptions
from costsim.perf.flops import FloatArray
from costsim.perf.roofline import (
    ReplicaTerms,
    decode_step_s,
    prefill_latency_s,
    prefill_work_s,
)

BISECTION_STEPS = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadLatency:
    """Mean and p95 latencies of a replica at a request rate (arrays over rates)."""

    rate_per_s: FloatArray
    concurrency: FloatArray
    ttft_s: FloatArray
    tpot_s: FloatArray
    ttft_p95_s: FloatArray
    tpot_p95_s: FloatArray
    overloaded: np.ndarray


def latency_at_load(r: ReplicaTerms, rate_per_s: ArrayLike, prompt_tokens: int,
                    output_tokens: int, max_batch: int, max_rps: float,
                    assumptions: ServingAssumptions) -> LoadLatency:
    """Latencies of one replica at ``rate_per_s`` requests per second (see module docstring)."""
    lam = np.asarray(rate_per_s, dtype=np.float64)
    context = prompt_tokens + output_tokens / 2.0
    prefill_share = lam * float(prefill_work_s(r, prompt_tokens))
    busy = np.clip(1.0 - prefill_share, 1e-9, 1.0)
    # Little's law fixed point n = λ·O·t_step(n)/(1−ρ_p); t_step grows with n, so iterate
    # from n = 0 (monotone convergence below the capacity).
    n = np.zeros_like(lam)
    for _ in range(60):
        n = np.minimum(lam * output_tokens * decode_step_s(r, np.maximum(n, 1.0), context)
                       / busy, float(max_batch))
    tpot = decode_step_s(r, np.maximum(n, 1.0), context) / busy
    n95 = np.minimum(n + assumptions.tail_concurrency_z * np.sqrt(n), float(max_batch))
    tpot95 = decode_step_s(r, np.maximum(n95, 1.0), context) / busy
    rho = np.clip(lam / max_rps, 0.0, 0.999999)
    first = float(prefill_latency_s(r, prompt_tokens))
    step = decode_step_s(r, np.maximum(n, 1.0), context)
    wait = rho / (2.0 * (1.0 - rho)) * first
    overloaded = lam > max_rps * (1.0 + 1e-9)  # at exactly the capacity the queue still drains
    inf = np.full_like(lam, np.inf)
    return LoadLatency(
        rate_per_s=lam,
        concurrency=n,
        ttft_s=np.where(overloaded, inf, first + step / 2.0 + wait),
        tpot_s=np.where(overloaded, inf, tpot),
        ttft_p95_s=np.where(overloaded, inf,
                            first + step + assumptions.tail_wait_multiplier * wait),
        tpot_p95_s=np.where(overloaded, inf, tpot95),
        overloaded=overloaded,
    )


def max_rate_at_slo(r: ReplicaTerms, prompt_tokens: int, output_tokens: int, max_batch: int,
                    max_rps: float, assumptions: ServingAssumptions, slo_ttft_s: float | None,
                    slo_tpot_s: float | None) -> float:
    """The highest request rate whose p95 TTFT and TPOT meet the SLOs (0 if none does).

    Latencies grow with the rate, so bisection finds the boundary.
    """
    def meets(rate: float) -> bool:
        lat = latency_at_load(r, rate, prompt_tokens, output_tokens, max_batch, max_rps,
                              assumptions)
        ok = True
        if slo_ttft_s is not None:
            ok = ok and float(lat.ttft_p95_s) <= slo_ttft_s
        if slo_tpot_s is not None:
            ok = ok and float(lat.tpot_p95_s) <= slo_tpot_s
        return ok

    if not meets(1e-9 * max_rps):
        return 0.0
    lo, hi = 1e-9 * max_rps, max_rps
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if meets(mid):
            lo = mid
        else:
            hi = mid
    return lo
