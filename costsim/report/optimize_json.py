"""``optimize.json``: the ``optimize --json`` document (DESIGN §7, docs/optimizer.md "Command").

Built from an :class:`~costsim.optimize.result.OptimizeResult`; each plan appears "as it would
appear in the scenario": the CLI passes ``plan_block``, the scenario layer's serializer (the
report imports no scenario code, DESIGN §4). Costs are the simulator's, copied unrounded (as in
``summary.json``); the document is the same for the same inputs and seed except ``wall_s`` and
``generated_at`` (DESIGN §7).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from costsim.domain.currency import USD, Currency, currency_json
from costsim.domain.plans import Plan
from costsim.domain.scenario import RiskLimits
from costsim.optimize.reservation import ReservationSizing
from costsim.optimize.result import OptimizeResult, Origin, RankedPlan
from costsim.optimize.training_front import TrainingFront
from costsim.report.summary import (
    RATE_DIGITS,
    JsonDict,
    estimated_inputs_json,
    jsonable,
    stats_json,
)
from costsim.units import SECONDS_PER_DAY

PlanBlock = Callable[[Plan], Mapping[str, Any]]


def optimize_json(result: OptimizeResult, *, plan_block: PlanBlock, scenario: str,
                  scenario_sha256: str, costsim_version: str, price_book_date: str, seed: int,
                  replications: int, limits: RiskLimits, wall_s: float, generated_at: str,
                  sections: Mapping[str, Any] | None = None,
                  currency: Currency = USD) -> JsonDict:
    """The optimizer's answer as JSON: the chosen plan (its scenario block and cost), the
    candidates ranked, the plan-level Pareto front, and what the search measured on the way
    (reservation cost curves, serving mixes, training fronts). ``sections``: more top-level
    keys from steps the CLI runs beside the search (``budget_split`` for --budget-split);
    ``currency``: the scenario's display currency, named at the top (amounts stay USD)."""
    best = result.best
    return {
        "scenario": scenario,
        "scenario_sha256": scenario_sha256,
        "costsim_version": costsim_version,
        "price_book_date": price_book_date,
        **currency_json(currency),
        "seed": seed,
        "replications": replications,
        "objective": result.objective.value,
        "limits": {"max_p_over_budget": limits.max_p_over_budget,
                   "max_p_deadline_missed": limits.max_p_deadline_missed,
                   "min_slo_attainment": limits.min_slo_attainment},
        "best": None if best is None else {**ranked_json(best, plan_block), "rank": 1},
        "explanation": result.explanation,
        "versus_hand_written": versus_hand_written(result),
        "candidates_screened": result.candidates_screened,
        "candidates_simulated": result.candidates_simulated,
        "exhaustive_candidates": result.exhaustive_candidates,
        "exhaustive": result.exhaustive,
        "simulator_runs": result.candidates_simulated * replications,
        "pareto": [_pareto_point(r) for r in result.pareto],
        "ranked": [{"rank": rank, **ranked_json(r, plan_block)}
                   for rank, r in enumerate(result.ranked, start=1)],
        "reservations": [reservation_json(s) for s in result.reservations],
        "serving_mixes": [jsonable(mix) for mix in result.serving_mixes],
        "training_fronts": [training_front_json(f) for f in result.training_fronts],
        **(sections or {}),
        "stats": {"wall_s": wall_s, "seed": seed, "replications": replications},
        "generated_at": generated_at,
    }


def ranked_json(ranked: RankedPlan, plan_block: PlanBlock) -> JsonDict:
    """One simulated candidate: its plan block, where it came from, its simulated figures and
    whether it is within the limits (with why not)."""
    plan, candidate = ranked.result, ranked.candidate
    slo = plan.metrics.slo_attainment if plan.metrics else None
    return {
        "name": plan.name,
        "origin": candidate.origin.value,
        "plan": dict(plan_block(candidate.plan)),
        "feasible": plan.feasible,
        "within_limits": ranked.within_limits,
        "why_not": list(ranked.why_not),
        "screen_cost_usd": candidate.screen_cost_usd,
        "objective_usd": ranked.objective_usd,
        "cost_usd": stats_json(plan.cost_usd),
        "p_over_budget": plan.p_over_budget,
        "p_deadline_missed": plan.p_deadline_missed,
        "slo_attainment": None if slo is None else round(slo, 6),
        "finish_days": stats_json(plan.finish_s, scale=1 / SECONDS_PER_DAY, digits=2),
        "cost_per_training_run_usd": plan.cost_per_training_run_usd,
        "cost_per_million_tokens_usd": (None if plan.cost_per_million_tokens_usd is None
                                        else round(plan.cost_per_million_tokens_usd,
                                                   RATE_DIGITS)),
        "notes": list(candidate.notes),
        "estimated_inputs": estimated_inputs_json(plan),
    }


def versus_hand_written(result: OptimizeResult) -> JsonDict | None:
    """The chosen plan against the best hand-written plan within the limits, by the objective
    (None when either is missing)."""
    best = result.best
    hand = next((r for r in result.ranked if r.within_limits
                 and r.candidate.origin is Origin.HAND_WRITTEN), None)
    if best is None or hand is None or best.objective_usd is None or hand.objective_usd is None:
        return None
    saving = hand.objective_usd - best.objective_usd
    return {"plan": hand.result.name, "objective_usd": hand.objective_usd,
            "saving_usd": saving,
            "saving_pct": None if hand.objective_usd <= 0 else
            round(100 * saving / hand.objective_usd, 2)}


def _pareto_point(ranked: RankedPlan) -> JsonDict:
    plan = ranked.result
    return {"name": plan.name, "origin": ranked.candidate.origin.value,
            "objective_usd": ranked.objective_usd,
            "finish_days": stats_json(plan.finish_s, scale=1 / SECONDS_PER_DAY, digits=2)}


def reservation_json(sizing: ReservationSizing) -> JsonDict:
    """One GPU type and term option: the cost curve over commitment levels and its three
    marked points (docs/optimizer.md "Reservation sizing")."""
    return jsonable(sizing)  # type: ignore[no-any-return]


def training_front_json(front: TrainingFront) -> JsonDict:
    """Every option rated for one training phase, and the time–cost front among them."""
    return {"phase": front.phase, "rated": front.rated,
            "options": [jsonable(option) for option in front.options],
            "front": [jsonable(option) for option in front.front]}
