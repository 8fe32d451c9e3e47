"""What the plan optimizer returns: the objective, the candidates it simulated, ranked, and the
chosen plan with a sentence a finance reader follows (DESIGN §7 "optimize --json").

These types are the contract between the search (:mod:`costsim.optimize.search`), the CLI (which
serializes the chosen plan through the scenario layer) and the report (which draws and writes
them); they hold no behaviour beyond reading an objective off a cost distribution.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from costsim.domain.plans import Plan
from costsim.optimize.reservation import ReservationSizing
from costsim.optimize.serving_mix_plan import ServingMix
from costsim.optimize.training_front import TrainingFront
from costsim.sim.montecarlo import PlanResult, Stats
from costsim.sim.run_result import RunResult


class Objective(StrEnum):
    """Which statistic of a plan's simulated ``cost_usd`` the optimizer minimizes."""

    MEAN = "mean"
    P50 = "p50"
    P90 = "p90"

    def of(self, cost: Stats) -> float:
        """This objective's value of a cost distribution."""
        return float(getattr(cost, self.value))


class Origin(StrEnum):
    """Where a candidate plan came from."""

    HAND_WRITTEN = "hand-written"  # the scenario's own plans: always simulated
    SEARCH = "search"  # a combination of per-phase choices that passed the analytic screen
    RESERVATION = "reservation"  # a finalist with commitments sized on its simulated demand
    SERVING_MIX = "serving-mix"  # a finalist with the serving phase's Mélange-style GPU mix


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A plan the optimizer considered, with the analytic estimate it was screened on."""

    plan: Plan
    origin: Origin
    screen_cost_usd: float | None  # the analytic estimate (None: not screened, e.g. hand-written)
    notes: tuple[str, ...] = ()  # per-phase facts a reader needs: layout, why a count


@dataclass(frozen=True, slots=True, kw_only=True)
class RankedPlan:
    """A simulated candidate: its Monte Carlo result and its place against the limits."""

    candidate: Candidate
    result: PlanResult
    objective_usd: float | None  # None when the plan is infeasible
    within_limits: bool  # feasible and within every limit that applies
    why_not: tuple[str, ...] = ()  # infeasible reasons or limit breaches (empty when chosen-able)


@dataclass(frozen=True, slots=True, kw_only=True)
class OptimizeResult:
    """The optimizer's answer for one scenario."""

    objective: Objective
    best: RankedPlan | None  # None when no candidate is feasible within the limits
    ranked: tuple[RankedPlan, ...]  # every simulated candidate, best first, infeasible last
    candidates_screened: int  # candidates the analytic screen priced
    candidates_simulated: int  # candidates the Monte Carlo ran (hand-written plans included)
    exhaustive_candidates: int  # how many an exhaustive search would simulate
    exhaustive: bool  # True when every candidate was simulated (--exhaustive)
    explanation: str  # why the best plan, in one or two sentences for a finance reader
    # simulated candidates within the limits that no other beats on both the objective cost and
    # the P90 finish time (the plan-level time–cost front; training fronts are per phase)
    pareto: tuple[RankedPlan, ...] = ()
    training_fronts: tuple[TrainingFront, ...] = ()  # per training phase: time–cost options
    reservations: tuple[ReservationSizing, ...] = ()  # per GPU type and term, on simulated demand
    serving_mixes: tuple[ServingMix, ...] = ()  # per serving phase
    run: RunResult | None = None  # the Monte Carlo of every simulated candidate
