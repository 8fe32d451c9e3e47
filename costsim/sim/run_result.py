"""A whole run: every plan's result, the baseline and the recommendation, with provenance.

The recommendation rule (DESIGN §7): the feasible plan with the lowest mean ``cost_usd`` among
those within the scenario's risk limits (P(over budget), P(deadline missed), SLO attainment,
where the scenario sets them); the baseline is the plan asked for or the scenario's first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from costsim.catalog.breakeven import break_even, break_evens
from costsim.catalog.gpus import find_gpu
from costsim.catalog.perf_defaults import allin_loss_defaults, perf_defaults
from costsim.catalog.prices import price_book
from costsim.catalog.servers import declared_server
from costsim.catalog.sim_defaults import sim_assumptions
from costsim.domain.breakeven import BreakEven
from costsim.domain.currency import USD, Currency
from costsim.domain.display import money_amount
from costsim.domain.plans import Plan
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.errors import CatalogError
from costsim.sim.montecarlo import PlanResult, Progress, run_plan
from costsim.sim.prepare import prepare_plan
from costsim.sim.results import DefaultUsed, estimate_sentence


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation:
    """The recommended plan (None when no plan is feasible within the limits) and why."""

    plan: str | None
    reason: str
    passed_over: tuple[tuple[str, str], ...] = ()  # (plan, why it was not recommended)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """What ``costsim run`` computed; everything the summary, tables and report show."""

    scenario: Scenario
    scenario_sha256: str
    costsim_version: str
    price_book_date: str
    seed: int
    replications: int
    plans: tuple[PlanResult, ...]
    baseline: str
    recommendation: Recommendation
    defaults: tuple[DefaultUsed, ...]
    # rent vs reserve vs buy over utilization, for each GPU the plans use that a shipped server
    # carries (the report's break-even chart; prices with the scenario's overrides)
    breakevens: tuple[BreakEven, ...] = ()
    inputs: Mapping[str, object] = field(default_factory=dict)  # the resolved scenario
    wall_s: float = 0.0
    events: int = 0
    # run-wide warnings (DESIGN §7 "Warnings"); each plan carries its own too
    warnings: tuple[str, ...] = ()

    def plan(self, name: str) -> PlanResult:
        """The result of the plan called ``name``."""
        for result in self.plans:
            if result.name == name:
                return result
        raise KeyError(name)


def limit_breaches(result: PlanResult, risk: RiskLimits) -> list[str]:
    """Why a feasible plan is outside the scenario's risk limits (empty: within them)."""
    breaches = []
    if (risk.max_p_over_budget is not None and result.p_over_budget is not None
            and result.p_over_budget > risk.max_p_over_budget):
        breaches.append("P(over budget) " + _versus(result.p_over_budget, ">",
                                                    risk.max_p_over_budget, 0))
    if (risk.max_p_deadline_missed is not None and result.p_deadline_missed is not None
            and result.p_deadline_missed > risk.max_p_deadline_missed):
        breaches.append("P(deadline missed) " + _versus(result.p_deadline_missed, ">",
                                                        risk.max_p_deadline_missed, 0))
    attainment = result.metrics.slo_attainment if result.metrics else None
    if (risk.min_slo_attainment is not None and attainment is not None
            and attainment < risk.min_slo_attainment):
        breaches.append("SLO attainment " + _versus(attainment, "<", risk.min_slo_attainment, 1))
    return breaches


def horizon_passed_over(results: Sequence[PlanResult], risk: RiskLimits,
                        horizon_end: str) -> dict[str, str]:
    """Plans whose work the horizon cut (a phase unfinished or never started at its end, in
    some replication), passed over while another plan within the risk limits finishes all its
    work in every replication: a cut plan's cost leaves out the rest of its work, so it is
    not comparable (a training run on servers delivered days before the horizon ends costs a
    few days' depreciation). When no plan finishes, none is passed over for it (the
    ``horizon_cuts`` warnings say what each leaves out). Name → reason."""
    fit = [r for r in results if r.feasible and r.cost_usd is not None
           and not limit_breaches(r, risk)]
    if not any(r.horizon_cut_replications == 0 for r in fit):
        return {}
    return {r.name: (f"the horizon cut its work in {r.horizon_cut_replications} of "
                     f"{r.replications} replications (a phase had not ended or never started "
                     f"by {horizon_end}): its cost leaves out the rest of the work, while "
                     f"other plans finish theirs")
            for r in fit if r.horizon_cut_replications > 0}


def _versus(value: float, sign: str, limit: float, decimals: int) -> str:
    """``value sign limit`` as percentages with enough decimals to tell them apart (99.97 %
    against a 100 % limit must not read "100.0% < 100.0%")."""
    while decimals < 4 and f"{value:.{decimals}%}" == f"{limit:.{decimals}%}":
        decimals += 1
    return f"{value:.{decimals}%} {sign} {limit:.{decimals}%}"


def mean_cost_in(result: PlanResult, currency: Currency) -> float | None:
    """A plan's mean cost in ``currency``: the sum of its ledger lines each converted (the
    rule of costsim.domain.currency), as every report shows it; None when infeasible."""
    if result.cost_usd is None:
        return None
    if currency.is_usd or result.ledger is None:
        return currency.amount(result.cost_usd.mean)
    return currency.total(line.amount_usd for line in result.ledger.lines)


def recommend(plans: Sequence[PlanResult], risk: RiskLimits,
              currency: Currency = USD, horizon_end: str = "the horizon's end") -> Recommendation:
    """The feasible plan with the lowest mean cost within the risk limits, among those that
    finish their work inside the horizon where any does (:func:`horizon_passed_over`); the
    reason's amounts are written in the scenario's display ``currency``, as the text and HTML
    show it."""
    passed: list[tuple[str, str]] = []
    candidates: list[PlanResult] = []
    cut = horizon_passed_over(plans, risk, horizon_end)
    for result in plans:
        if not result.feasible or result.cost_usd is None:
            passed.append((result.name, "infeasible: " + "; ".join(result.infeasible_reasons)))
            continue
        breaches = limit_breaches(result, risk)
        if breaches:
            passed.append((result.name, "outside the risk limits: " + "; ".join(breaches)))
            continue
        if result.name in cut:
            passed.append((result.name, "unfinished: " + cut[result.name]))
            continue
        candidates.append(result)
    if not candidates:
        return Recommendation(plan=None, reason="no plan is feasible within the risk limits",
                              passed_over=tuple(passed))
    best = min(candidates, key=lambda r: (r.cost_usd.mean if r.cost_usd else 0.0, r.name))
    assert best.cost_usd is not None
    others = [r for r in candidates if r is not best]
    estimated = best.estimated_inputs
    mark = "~" if estimated else ""
    best_mean = mean_cost_in(best, currency) or 0.0
    reason = f"lowest mean cost ({money_amount(best_mean, currency)}{mark})"
    if others:
        runner = min(others, key=lambda r: r.cost_usd.mean if r.cost_usd else 0.0)
        gap = (mean_cost_in(runner, currency) or 0.0) - best_mean
        reason += (f", {money_amount(gap, currency)}{mark} below the next "
                   f"('{runner.name}')")
    if any(v is not None for v in (risk.max_p_over_budget, risk.max_p_deadline_missed,
                                   risk.min_slo_attainment)):
        reason += " among the plans within the risk limits"
    if estimated:
        reason += "; " + estimate_sentence(estimated)
    return Recommendation(plan=best.name, reason=reason, passed_over=tuple(passed))


def defaults_used() -> tuple[DefaultUsed, ...]:
    """The simulator's and performance model's default assumptions a run relies on."""
    sim = sim_assumptions()
    used = [DefaultUsed(key=f"sim.{key}", value=float(getattr(sim, key)), source=source,
                        estimate=key in sim.estimates)
            for key, source in sim.sources.items()]
    loss = allin_loss_defaults()
    for key in ("extra_loss_median", "extra_loss_sigma", "extra_loss_onset_days",
                "throughput_error_sigma", "training_error_sigma", "serving_error_sigma"):
        used.append(DefaultUsed(key=f"allin.{key}", value=float(getattr(loss, key)),
                                source=loss.sources.get(key, "costsim/data/allin_loss.csv"),
                                estimate=False))
    perf = perf_defaults()
    for key in ("interruptions_per_gpu_hour", "restart_s", "evaluation_fraction",
                "checkpoint_write_gb_per_s_per_node"):
        used.append(DefaultUsed(key=f"goodput.{key}", value=float(getattr(perf.goodput, key)),
                                source=perf.goodput.sources.get(key, ""), estimate=False))
    serving = perf.serving
    for key in ("target_utilization", "default_slo_ttft_p95_s", "default_slo_tpot_p95_s"):
        used.append(DefaultUsed(key=f"serving.{key}", value=float(getattr(serving, key)),
                                source=serving.sources.get(key, ""), estimate=False))
    return tuple(used)


def plan_breakevens(scenario: Scenario, plans: Sequence[Plan]) -> tuple[BreakEven, ...]:
    """Break-even curves of owning, reserving and renting each GPU the plans use, where a
    shipped server carries that GPU, then of every server the scenario declares
    (``servers:``, as declared: its own capex and operating costs), priced with the
    scenario's overrides."""
    book = price_book(scenario.prices.overrides)
    gpus = sorted({found.name for plan in plans for use in plan.uses for entry in use.entries
                   if (found := find_gpu(entry.gpu)) is not None})
    shipped = tuple(curve for gpu in gpus for curve in break_evens(book, gpu))
    return shipped + tuple(break_even(book, declared_server(declared))
                           for declared in scenario.servers)


def simulate_scenario(scenario: Scenario, *, seed: int, replications: int,
                      plans: Sequence[str] | None = None, baseline: str | None = None,
                      progress: Progress | None = None, workers: int = 1,
                      clock: Callable[[], float] | None = None,
                      scenario_sha256: str = "", costsim_version: str = "",
                      price_book_date: str = "",
                      inputs: Mapping[str, object] | None = None) -> RunResult:
    """Simulate every plan (or those named) on the same futures and recommend one.

    Raises:
        CatalogError: a plan or baseline name the scenario does not have ("did you mean").
    """
    names = [p.name for p in scenario.plans]
    for name in [*(plans or []), *([baseline] if baseline else [])]:
        if name not in names:
            raise CatalogError("plan", name, names, source="--plan" if name != baseline
                               else "--baseline")
    start = clock() if clock else 0.0
    wanted = None if plans is None else {*plans, *([baseline] if baseline else [])}
    chosen = [p for p in scenario.plans if wanted is None or p.name in wanted]
    results = tuple(run_plan(prepare_plan(scenario, plan), seed=seed,
                             replications=replications, progress=progress, workers=workers)
                    for plan in chosen)
    return RunResult(
        scenario=scenario, scenario_sha256=scenario_sha256, costsim_version=costsim_version,
        price_book_date=price_book_date, seed=seed, replications=replications, plans=results,
        baseline=baseline or chosen[0].name,
        recommendation=recommend(results, scenario.risk, scenario.currency,
                                 scenario.calendar.end.isoformat()),
        defaults=defaults_used(),
        breakevens=plan_breakevens(scenario, chosen),
        inputs=inputs or {}, wall_s=(clock() - start) if clock else 0.0,
        events=sum(r.events for r in results), warnings=scenario.horizon_warnings())
