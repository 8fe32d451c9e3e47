"""Reservation sizing against simulated demand: how many GPUs of one type to commit for a term.

A commitment of c GPUs at the effective rate r_c (upfront spread over the term plus the
recurring rate) is owed for every hour of its term T; demand above c runs on demand at r_od.
Over the H horizon hours of simulated demand u_h, per replication:

    cost(c) = c · r_c · T_owed + r_od · Σ_h max(0, u_h − c)

The level is held over the whole horizon, renewing the term as it ends: T_owed = ⌈H/T⌉·T
(T_owed = H when the terms end with the horizon; the last term's hours beyond the horizon are
the stranded commitment, owed all the same). The cost is convex and piecewise linear in c, its
slope r_c·T_owed − r_od·#{h: u_h > c} is zero where F(c) = 1 − (r_c/r_od)·(T_owed/H) = d', so
the cheapest commitment is the d'-quantile of hourly demand (a newsvendor rule; with T_owed = H,
d' is the discount d = 1 − r_c/r_od). The cost model is terraform-aws-sp-autopilot's
(``lambda/shared/optimal_coverage.py``, which scans it over a week or two of past usage);
docs/optimizer.md "Reservation sizing" derives the quantile. Here the demand is the simulator's,
pooled over all hours of all replications, so the level minimizes the expected cost.
Commitments are bought in whole instances, so the curve is scanned at whole instances.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from costsim.domain.pricing import PurchaseOption
from costsim.domain.reservation import ReservationTerms
from costsim.sim.demand import DemandHistogram

# sp-autopilot's "balanced" point: the knee of the savings curve, the last level before the
# marginal saving per step falls below 40 % of its peak; without such a drop, 60 % of the way
# from the safe level to the optimum (optimal_coverage.py, calculate_knee_point)
KNEE_MARGINAL_SHARE = 0.40
KNEE_FALLBACK_SHARE = 0.60
# Demand windows overrun whole terms by calendar arithmetic, not by need: 12 average months
# are 8,766 h against a 8,760-hour 1y term, and a commitment bought on a date starts up to a day
# before its phase; an overrun up to two days is priced as covered (at most c GPUs × 48 h at
# r_c instead of r_od), not as a second term
TERM_SLACK_HOURS = 48.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitmentLevel:
    """One commitment level, expected over the simulated futures (per replication)."""

    instances: int
    gpus: int
    cost_usd: float  # the commitment's whole obligation + on-demand GPU-hours above it
    commitment_usd: float  # gpus · r_c · term
    on_demand_usd: float  # r_od · GPU-hours above the commitment
    idle_gpu_hours: float  # committed within the horizon, not used
    stranded_gpu_hours: float  # committed beyond the horizon
    stranded_usd: float  # stranded_gpu_hours · r_c
    savings_usd: float  # against no commitment (all demand on demand)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReservationSizing:
    """The cost curve over commitment levels and its marked points, for one GPU type and one
    term/payment option."""

    gpu: str
    option: PurchaseOption
    gpus_per_instance: int
    on_demand_usd_per_gpu_hour: float  # r_od
    committed_usd_per_gpu_hour: float  # r_c
    horizon_hours: float  # H, demand hours per replication
    term_hours: float  # T
    terms_owed: int  # ⌈H / T⌉ terms back to back
    discount: float  # d = 1 − r_c / r_od
    quantile_level: float  # d' = 1 − (r_c / r_od)·(T_owed / H): the newsvendor quantile
    quantile_gpus: int  # smallest whole-GPU c with F(c) ≥ d' (0 when d' ≤ 0)
    curve: tuple[CommitmentLevel, ...]  # 0, 1, 2 … instances up to the peak demand
    conservative: CommitmentLevel  # never idle: the GPUs used in every hour
    balanced: CommitmentLevel  # the knee of the savings curve
    aggressive: CommitmentLevel  # the cost minimum
    # r_c rests on costsim's estimated discount (a contract cloud's generic rate, a fallback):
    # shown "discount ~35% (estimate)"
    estimate: bool = False

    @property
    def optimal(self) -> CommitmentLevel:
        """The cheapest level (the aggressive point)."""
        return self.aggressive


def size_reservation(demand: DemandHistogram, terms: ReservationTerms,
                     gpus_per_instance: int, *, on_demand_factor: float = 1.0,
                     excess_factors: Callable[[Sequence[int]], Sequence[float]] | None = None
                     ) -> ReservationSizing:
    """The cost curve of committing whole instances of ``terms`` against ``demand``.

    ``demand`` covers the hours from the commitment's start to the horizon's end (each
    replication the same hours), pooled over the replications so the levels are priced at
    their expected cost; ``terms`` are one instance's (ReservationTerms is per instance), so
    the per-GPU rates divide by ``gpus_per_instance``. ``on_demand_factor`` scales the
    on-demand rate the commitment saves (the expected price drift over the window: the
    commitment's own rate is fixed when it is bought); ``excess_factors`` gives, per level,
    the drift factor of the demand above it relative to ``on_demand_factor`` (demand above a
    high level falls in the later, cheaper months of a growing load), 1 when not given.
    """
    if gpus_per_instance < 1:
        raise ValueError(f"gpus_per_instance must be >= 1, got {gpus_per_instance}")
    if terms.term_hours <= 0:
        raise ValueError(f"term of {terms.option} must be > 0 h, got {terms.term_hours}")
    horizon_h = demand.hours_per_replication
    r_od = terms.on_demand_usd_per_hour / gpus_per_instance * on_demand_factor
    r_c = terms.effective_usd_per_hour / gpus_per_instance
    if r_od <= 0:
        raise ValueError(f"on-demand rate of {demand.gpu} must be > 0, got {r_od}")
    # a window up to TERM_SLACK_HOURS longer than whole terms is not one more term: those hours
    # count as covered
    terms_owed = max(1, math.ceil((horizon_h - TERM_SLACK_HOURS) / terms.term_hours - 1e-9))
    owed_h = max(terms_owed * terms.term_hours, horizon_h)
    quantile_level = 1 - r_c / r_od * owed_h / horizon_h
    quantile_gpus = 0 if quantile_level <= 0 else _quantile(demand, quantile_level)
    gpus = [k * gpus_per_instance
            for k in range(math.ceil(demand.max_gpus / gpus_per_instance) + 1)]
    excess = demand.excess_gpu_hours(gpus)
    weights = [1.0] * len(gpus) if excess_factors is None else list(excess_factors(gpus))
    curve = tuple(_level(k, c, float(excess[k]), float(excess[0]) * weights[0],
                         demand.mean_gpu_hours, horizon_h, owed_h - horizon_h, r_c,
                         r_od, weights[k])
                  for k, c in enumerate(gpus))
    best = min(curve, key=lambda level: (level.cost_usd, level.gpus))
    safe = min(demand.always_used_gpus() // gpus_per_instance, best.instances)
    return ReservationSizing(
        gpu=demand.gpu, option=terms.option, gpus_per_instance=gpus_per_instance,
        on_demand_usd_per_gpu_hour=r_od, committed_usd_per_gpu_hour=r_c,
        horizon_hours=horizon_h, term_hours=terms.term_hours, terms_owed=terms_owed,
        discount=1 - r_c / r_od,
        quantile_level=quantile_level, quantile_gpus=quantile_gpus, curve=curve,
        conservative=curve[safe], balanced=curve[_knee(curve, safe, best.instances)],
        aggressive=best, estimate=terms.estimate)


def _quantile(demand: DemandHistogram, level: float) -> int:
    """The smallest whole-GPU c with F(c) ≥ ``level`` (F steps only at the histogram's levels)."""
    share = demand.share_at_or_below(demand.levels)
    return demand.levels[int(np.searchsorted(share, level - 1e-12, side="left"))]


def _level(instances: int, gpus: int, above: float, all_demand_above_zero: float,
           demand_gpu_hours: float, horizon_h: float, stranded_h: float, r_c: float,
           r_od: float, weight: float = 1.0) -> CommitmentLevel:
    """One point of the curve; ``above``: GPU-hours of demand above ``gpus``, paid at r_od ×
    ``weight``; ``all_demand_above_zero``: the drift-weighted GPU-hours of all demand."""
    commitment = gpus * r_c * (horizon_h + stranded_h)
    on_demand = above * r_od * weight
    return CommitmentLevel(
        instances=instances, gpus=gpus, cost_usd=commitment + on_demand,
        commitment_usd=commitment, on_demand_usd=on_demand,
        # committed hours minus the demand they covered (demand − the part above c)
        idle_gpu_hours=max(0.0, gpus * horizon_h - (demand_gpu_hours - above)),
        stranded_gpu_hours=gpus * stranded_h, stranded_usd=gpus * stranded_h * r_c,
        savings_usd=all_demand_above_zero * r_od - (commitment + on_demand))


def _knee(curve: tuple[CommitmentLevel, ...], safe: int, best: int) -> int:
    """sp-autopilot's balanced point between the safe level and the optimum, in instances."""
    if best <= safe:
        return best
    steps = [curve[k - 1].cost_usd - curve[k].cost_usd for k in range(safe + 1, best + 1)]
    threshold = KNEE_MARGINAL_SHARE * max(steps)
    for offset, saving in enumerate(steps):
        if saving < threshold:
            return safe + offset  # the level before the step whose saving fell off
    return safe + math.floor(KNEE_FALLBACK_SHARE * (best - safe))
