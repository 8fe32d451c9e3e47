"""The plan optimizer's entry point: the search space, the analytic screen, the Monte Carlo of
the finalists, the reservation round, and the choice (DESIGN §7 "optimize"; docs/optimizer.md
"Search", "Two stages", "Exhaustive check").

1. Space (:mod:`.space`): each phase's memory-feasible choices, prepared by the simulator.
2. Stage 1, the screen (:mod:`.screen`): every choice priced analytically; the ``top_k``
   cheapest whole plans by the summed estimates (``exhaustive``: every plan in the space).
3. Stage 2: those plans and every hand-written plan (never screened out) simulated together in
   one copy of the scenario, at the same seed and replications, so on the same futures.
4. Reservation round (:mod:`.reservation_round`): the best finalist's simulated demand sizes
   commitments per GPU type; the optimum and balanced variants are simulated the same way.
5. The choice: the lowest ``objective`` cost among the feasible plans within the limits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from costsim.catalog.prices import PriceBook, price_book
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.optimize.explain import explain, pareto_front
from costsim.optimize.reservation import ReservationSizing
from costsim.optimize.reservation_round import reservation_round, variant_notes
from costsim.optimize.result import Candidate, Objective, OptimizeResult, Origin, RankedPlan
from costsim.optimize.screen import (
    ChoiceEstimate,
    Combination,
    all_combinations,
    best_combinations,
    screen_space,
)
from costsim.optimize.space import search_space
from costsim.sim.montecarlo import PlanResult, Progress
from costsim.sim.run_result import (
    RunResult,
    horizon_passed_over,
    limit_breaches,
    recommend,
    simulate_scenario,
)

# Finalists the Monte Carlo runs besides the hand-written plans: as many as fit in the CPU time
# the old default of 8 took on the flagship at 744b6e6 (15 plans simulated, ~35 CPU s on one
# worker). Measured after issue 20's simulator, preparation and search-space work: --top 72 (79
# plans simulated, 5.3x) costs 34.1-35.5 CPU s where 744b6e6's --top 8 cost 37.0-37.7 in the
# same minutes (docs/optimizer.md "Speed after issue 20")
DEFAULT_TOP_K = 72
# The reservation round sizes the best finalist that rents on demand in a long phase, among the
# best few within the limits (the best may already commit, or rent nothing for long)
ROUND_TRIES = 3


def optimize_scenario(scenario: Scenario, *, seed: int, replications: int,
                      objective: Objective = Objective.MEAN, limits: RiskLimits | None = None,
                      top_k: int = DEFAULT_TOP_K, exhaustive: bool = False,
                      book: PriceBook | None = None, progress: Progress | None = None,
                      workers: int = 1, clock: Callable[[], float] | None = None,
                      scenario_sha256: str = "", costsim_version: str = "",
                      price_book_date: str = "",
                      inputs: Mapping[str, object] | None = None) -> OptimizeResult:
    """The cheapest plan by ``objective`` among those feasible within ``limits`` (default: the
    scenario's risk limits), searched in two stages (or exhaustively)."""
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    start = clock() if clock else 0.0
    book = book or price_book(scenario.prices.overrides)
    risk = limits if limits is not None else scenario.risk
    space = search_space(scenario, book, risk)
    screened = screen_space(scenario, space, risk)
    combos = (all_combinations([estimates for _, estimates in screened]) if exhaustive
              else best_combinations(screened, top_k))
    candidates = _hand_written(scenario) + _searched(combos, space.cloud, space.region,
                                                     {p.name for p in scenario.plans})
    counter = _Counter(progress, len(candidates) * replications)

    def simulate(batch: Sequence[Candidate]) -> RunResult:
        return simulate_scenario(
            dataclasses.replace(scenario, plans=tuple(c.plan for c in batch), risk=risk),
            seed=seed, replications=replications, progress=counter, workers=workers,
            scenario_sha256=scenario_sha256, costsim_version=costsim_version,
            price_book_date=price_book_date, inputs=inputs)

    run = simulate(candidates)
    by_name = {c.plan.name: c for c in candidates}
    ranked = rank(run.plans, by_name, objective, risk, scenario.calendar.end.isoformat())
    sizings: tuple[ReservationSizing, ...] = ()
    for leader in [r for r in ranked if r.within_limits][:ROUND_TRIES]:
        sizings, variants = reservation_round(scenario, leader.candidate.plan, leader.result,
                                              book)
        if not sizings:
            continue  # nothing rented on demand in a long phase: try the next finalist
        extra = [Candidate(plan=v.plan, origin=Origin.RESERVATION, screen_cost_usd=None,
                           notes=(*leader.candidate.notes, *variant_notes(v)))
                 for v in variants if v.plan.name not in by_name]
        if extra:
            counter.grow(len(extra) * replications)
            more = simulate(extra)
            by_name.update({c.plan.name: c for c in extra})
            run = _merged(run, more, risk)
            ranked = rank(run.plans, by_name, objective, risk, scenario.calendar.end.isoformat())
        break
    best = ranked[0] if ranked and ranked[0].within_limits else None
    if clock:
        run = dataclasses.replace(run, wall_s=clock() - start)
    return OptimizeResult(
        objective=objective, best=best, ranked=ranked,
        candidates_screened=sum(len(estimates) for _, estimates in screened),
        candidates_simulated=len(ranked), exhaustive_candidates=space.size,
        exhaustive=exhaustive, explanation=explain(best, ranked, objective, scenario.currency),
        pareto=pareto_front(ranked), training_fronts=space.training_fronts,
        reservations=tuple(sizings), serving_mixes=space.serving_mixes, run=run)


def rank(results: tuple[PlanResult, ...], candidates: Mapping[str, Candidate],
         objective: Objective, risk: RiskLimits,
         horizon_end: str = "the horizon's end") -> tuple[RankedPlan, ...]:
    """Simulated candidates, best first: within the limits by objective, then the rest (a
    plan the horizon cuts is outside them while another finishes, as ``run`` recommends)."""
    ranked = []
    cut = horizon_passed_over(results, risk, horizon_end)
    for result in results:
        value = objective.of(result.cost_usd) if result.feasible and result.cost_usd else None
        why = (list(result.infeasible_reasons) if not result.feasible
               else limit_breaches(result, risk))
        if result.name in cut:
            why.append(cut[result.name])
        ranked.append(RankedPlan(candidate=candidates[result.name], result=result,
                                 objective_usd=value, within_limits=value is not None and not why,
                                 why_not=tuple(why)))
    # on a tie the scenario's own plan first: a search candidate that equals it saves nothing
    return tuple(sorted(ranked, key=lambda r: (not r.within_limits, r.objective_usd is None,
                                               r.objective_usd or 0.0,
                                               r.candidate.origin is not Origin.HAND_WRITTEN,
                                               r.result.name)))


def _hand_written(scenario: Scenario) -> list[Candidate]:
    return [Candidate(plan=plan, origin=Origin.HAND_WRITTEN, screen_cost_usd=None)
            for plan in scenario.plans]


def _searched(combos: Sequence[Combination], cloud: str | None, region: str | None,
              taken: set[str]) -> list[Candidate]:
    """The combinations as candidates named ``opt-<rank by screen>-<choices>`` (unique: the
    choices differ, and a name a hand-written plan has gets a suffix; stable: the screen's
    order is deterministic)."""
    out = []
    for i, combo in enumerate(combos, start=1):
        name = f"opt-{i}-{combo.slug}"
        while name in taken:
            name += "-search"
        taken.add(name)
        out.append(Candidate(plan=combo.plan(name, cloud, region), origin=Origin.SEARCH,
                             screen_cost_usd=combo.cost_usd,
                             notes=tuple(n for e in combo.estimates for n in _notes(e))))
    return out


def _notes(estimate: ChoiceEstimate) -> tuple[str, ...]:
    choice = estimate.choice
    text = f"{choice.phase}: {choice.label}, screened at ${estimate.cost_usd:,.0f}"
    if estimate.p_deadline_missed is not None:
        text += f", P(deadline missed) {estimate.p_deadline_missed:.0%} by the screen"
    return (text, *choice.notes)


def _merged(first: RunResult, second: RunResult, risk: RiskLimits) -> RunResult:
    """Two runs of the same scenario, seed and replications as one (the second's plans are
    new candidates simulated on the same futures)."""
    plans = first.plans + second.plans
    scenario = dataclasses.replace(first.scenario,
                                   plans=first.scenario.plans + second.scenario.plans)
    return dataclasses.replace(first, scenario=scenario, plans=plans,
                               recommendation=recommend(
                                   plans, risk, first.scenario.currency,
                                   first.scenario.calendar.end.isoformat()),
                               breakevens=first.breakevens + tuple(
                                   b for b in second.breakevens if b not in first.breakevens),
                               wall_s=first.wall_s + second.wall_s,
                               events=first.events + second.events)


class _Counter:
    """Progress over every simulation of the search: replications done of all planned (the
    total grows once, when the reservation round adds its variants)."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def grow(self, more: int) -> None:
        self.total += more

    def __call__(self, done: int, of: int) -> None:
        if self.progress is not None:
            self.progress(self.done + done, self.total)
        if done >= of:
            self.done += of

