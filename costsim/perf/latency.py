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
    DecodeStep,
    ReplicaTerms,
    prefill_latency_s,
    prefill_work_s,
)

# Grid refinement of the SLO boundary: 64 rates a round, 5 rounds = 64^5 ~ 1e9 steps, i.e. the
# boundary to ~1e-9 of the capacity (as 60 bisection steps gave) in 5 vectorized calls.
SLO_GRID_POINTS = 64
SLO_GRID_ROUNDS = 5
# Iterations of the Little's-law fixed point (the concurrency at a rate).
FIXED_POINT_STEPS = 60


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
    step_s = DecodeStep(r, context)
    # Little's law fixed point n = λ·O·t_step(n)/(1−ρ_p); t_step grows with n, so iterate
    # from n = 0 (monotone convergence below the capacity), FIXED_POINT_STEPS times. Once an
    # iterate equals the one before, every later one is that iterate bit for bit (each is a
    # function of max(n, 1) alone, which ±0 do not tell apart), so the loop stops there.
    demand = lam * output_tokens
    n = np.zeros_like(lam)
    for _ in range(FIXED_POINT_STEPS):
        following = np.minimum(demand * step_s(np.maximum(n, 1.0)) / busy, float(max_batch))
        repeated = bool((following == n).all())  # NaN never repeats
        n = following
        if repeated:
            break
    step = step_s(np.maximum(n, 1.0))
    tpot = step / busy
    n95 = np.minimum(n + assumptions.tail_concurrency_z * np.sqrt(n), float(max_batch))
    tpot95 = step_s(np.maximum(n95, 1.0)) / busy
    rho = np.clip(lam / max_rps, 0.0, 0.999999)
    first = float(prefill_latency_s(r, prompt_tokens))
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

    Latencies grow with the rate, so the boundary is found by refining a grid of rates: each
    round scores :data:`SLO_GRID_POINTS` rates in one vectorized call and keeps the interval
    between the last rate that meets the SLOs and the first that does not.
    """
    def meets(rates: FloatArray) -> np.ndarray:
        lat = latency_at_load(r, rates, prompt_tokens, output_tokens, max_batch, max_rps,
                              assumptions)
        ok = np.ones(rates.shape, dtype=bool)
        if slo_ttft_s is not None:
            ok &= lat.ttft_p95_s <= slo_ttft_s
        if slo_tpot_s is not None:
            ok &= lat.tpot_p95_s <= slo_tpot_s
        return ok

    lo = 1e-9 * max_rps
    if not meets(np.asarray([lo]))[0]:
        return 0.0
    hi = max_rps
    for _ in range(SLO_GRID_ROUNDS):
        grid = np.linspace(lo, hi, SLO_GRID_POINTS + 1)[1:]
        failing = np.flatnonzero(~meets(grid))
        if failing.size == 0:
            return float(hi)
        first = int(failing[0])
        lo, hi = (float(grid[first - 1]) if first else lo), float(grid[first])
    return lo


@dataclass(frozen=True, slots=True, kw_only=True)
class ClosedLoop:
    """A closed loop of ``users`` clients, each sending a request as soon as its previous one
    finished (how k6 virtual users and ``--max-concurrency`` benchmarks load a server)."""

    users: int
    output_tokens: int
    request_s: float
    rate_per_s: float
    ttft_s: float
    tpot_s: float

    @property
    def output_tokens_per_s(self) -> float:
        """Output tokens per second of the whole loop."""
        return self.rate_per_s * self.output_tokens

    @property
    def ms_per_output_token(self) -> float:
        """A request's time over its output tokens (the 'latency per token' load tools print)."""
        return self.request_s / self.output_tokens * 1e3


def closed_loop(r: ReplicaTerms, users: int, prompt_tokens: int, output_tokens: int,
                max_batch: int, max_rps: float, assumptions: ServingAssumptions) -> ClosedLoop:
    """Steady state of ``users`` clients in a closed loop on one replica.

    The loop's rate λ and a request's time T satisfy λ = users / T (Little's law on the whole
    loop) with T = TTFT(λ) + output · TPOT(λ) from :func:`latency_at_load`, so the other users'
    prompts slow every decode step by their prefill share (ρ_p = λ·prefill work, a separate
    forward pass without chunked prefill). λ·T(λ) grows with λ; its root is found by refining
    a grid of rates (one vectorized call a round).
    """
    if users < 1:
        raise ValueError("a closed loop needs at least one user")

    def excess(rates: FloatArray) -> FloatArray:
        lat = latency_at_load(r, rates, prompt_tokens, output_tokens, max_batch, max_rps,
                              assumptions)
        return np.asarray(rates * (lat.ttft_s + output_tokens * lat.tpot_s) - users)

    # Grid refinement as in max_rate_at_slo: the root of λ·T(λ) = users to ~1e-9 of λ_max.
    lo, hi = 0.0, max_rps
    if excess(np.asarray([hi]))[0] <= 0:
        lo = hi
    else:
        for _ in range(SLO_GRID_ROUNDS):
            grid = np.linspace(lo, hi, SLO_GRID_POINTS + 1)[1:]
            over = np.flatnonzero(excess(grid) > 0)
            first = int(over[0])
            lo, hi = (float(grid[first - 1]) if first else lo), float(grid[first])
    rate = max(lo, 1e-12 * max_rps)
    lat = latency_at_load(r, rate, prompt_tokens, output_tokens, max_batch, max_rps, assumptions)
    ttft, tpot = float(lat.ttft_s), float(lat.tpot_s)
    return ClosedLoop(users=users, output_tokens=output_tokens,
                      request_s=ttft + output_tokens * tpot,
                      rate_per_s=users / (ttft + output_tokens * tpot), ttft_s=ttft, tpot_s=tpot)
