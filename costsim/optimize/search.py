"""The plan optimizer's entry point: candidates, the analytic screen, the Monte Carlo of the
finalists, and the choice (DESIGN §7 "optimize").

BASELINE (to be replaced by the i11-core helper's two-stage search): simulates the scenario's
hand-written plans at the same seed and replications as ``run`` and ranks them by the objective.
The signature is the contract with the CLI.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from costsim.catalog.prices import PriceBook
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.optimize.result import Candidate, Objective, OptimizeResult, Origin, RankedPlan
from costsim.sim.montecarlo import PlanResult, Progress
from costsim.sim.run_result import limit_breaches, simulate_scenario

DEFAULT_TOP_K = 8


def optimize_scenario(scenario: Scenario, *, seed: int, replications: int,
                      objective: Objective = Objective.MEAN, limits: RiskLimits | None = None,
                      top_k: int = DEFAULT_TOP_K, exhaustive: bool = False,
                      book: PriceBook | None = None, progress: Progress | None = None,
                      workers: int = 1, clock: Callable[[], float] | None = None,
                      scenario_sha256: str = "", costsim_version: str = "",
                      price_book_date: str = "",
                      inputs: Mapping[str, object] | None = None) -> OptimizeResult:
    """The cheapest plan by ``objective`` among those feasible within ``limits`` (default: the
    scenario's risk limits)."""
    del top_k, exhaustive, book
    risk = limits if limits is not None else scenario.risk
    candidates = {plan.name: Candidate(plan=plan, origin=Origin.HAND_WRITTEN,
                                       screen_cost_usd=None) for plan in scenario.plans}
    run = simulate_scenario(dataclasses.replace(scenario, risk=risk), seed=seed,
                            replications=replications, progress=progress, workers=workers,
                            clock=clock, scenario_sha256=scenario_sha256,
                            costsim_version=costsim_version, price_book_date=price_book_date,
                            inputs=inputs)
    ranked = rank(run.plans, candidates, objective, risk)
    best = ranked[0] if ranked and ranked[0].within_limits else None
    return OptimizeResult(objective=objective, best=best, ranked=ranked,
                          candidates_screened=0, candidates_simulated=len(ranked),
                          exhaustive_candidates=len(ranked), exhaustive=True,
                          explanation=explain(best, ranked, objective), run=run)


def rank(results: tuple[PlanResult, ...], candidates: Mapping[str, Candidate],
         objective: Objective, risk: RiskLimits) -> tuple[RankedPlan, ...]:
    """Simulated candidates, best first: within the limits by objective, then the rest."""
    ranked = []
    for result in results:
        value = objective.of(result.cost_usd) if result.feasible and result.cost_usd else None
        why = (list(result.infeasible_reasons) if not result.feasible
               else limit_breaches(result, risk))
        ranked.append(RankedPlan(candidate=candidates[result.name], result=result,
                                 objective_usd=value, within_limits=value is not None and not why,
                                 why_not=tuple(why)))
    return tuple(sorted(ranked, key=lambda r: (not r.within_limits, r.objective_usd is None,
                                               r.objective_usd or 0.0, r.result.name)))


def explain(best: RankedPlan | None, ranked: tuple[RankedPlan, ...], objective: Objective) -> str:
    """One or two sentences on the choice."""
    if best is None:
        return "No candidate plan is feasible within the limits; see each plan's reasons."
    assert best.objective_usd is not None
    text = (f"'{best.result.name}' has the lowest {objective.value} cost, "
            f"${best.objective_usd:,.0f}, of the {len(ranked)} plans simulated")
    others = [r for r in ranked if r is not best and r.within_limits]
    if others and others[0].objective_usd is not None:
        text += (f"; the next, '{others[0].result.name}', costs "
                 f"${others[0].objective_usd - best.objective_usd:,.0f} more")
    return text + "."
