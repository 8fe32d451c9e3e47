"""The recommendation rule and the run's provenance."""

from __future__ import annotations

from dataclasses import replace

import pytest

from costsim.domain.scenario import RiskLimits
from costsim.errors import CatalogError
from costsim.sim.montecarlo import PlanMetrics, PlanResult, Stats
from costsim.sim.run_result import defaults_used, limit_breaches, recommend, simulate_scenario
from tests.domain.scenario_builders import lifecycle


def _plan(name: str, mean: float, *, p_over: float = 0.0, feasible: bool = True) -> PlanResult:
    if not feasible:
        return PlanResult(name=name, feasible=False, infeasible_reasons=("does not fit",),
                          replications=0)
    return PlanResult(name=name, feasible=True, infeasible_reasons=(), replications=10,
                      cost_usd=Stats(mean=mean, p10=mean, p50=mean, p90=mean),
                      p_over_budget=p_over,
                      metrics=PlanMetrics(gpu_hours_used=1, gpu_hours_paid=1,
                                          reserved_utilization=None,
                                          stranded_commitment_usd=0, queue_wait_p95_s=None,
                                          slo_attainment=None))


def test_the_cheapest_feasible_plan_is_recommended_and_the_others_say_why_not() -> None:
    plans = [_plan("a", 300.0), _plan("b", 200.0), _plan("c", 100.0, feasible=False)]
    rec = recommend(plans, RiskLimits())
    assert rec.plan == "b"
    assert "$100.00 below the next ('a')" in rec.reason
    assert dict(rec.passed_over)["c"].startswith("infeasible: does not fit")


def test_risk_limits_exclude_a_cheaper_but_riskier_plan() -> None:
    plans = [_plan("safe", 300.0, p_over=0.05), _plan("risky", 200.0, p_over=0.4)]
    rec = recommend(plans, RiskLimits(max_p_over_budget=0.1))
    assert rec.plan == "safe"
    assert "P(over budget) 40% > 10%" in dict(rec.passed_over)["risky"]
    assert recommend([plans[1]], RiskLimits(max_p_over_budget=0.1)).plan is None


def test_unknown_plan_names_are_refused_with_a_suggestion() -> None:
    with pytest.raises(CatalogError, match="did you mean 'all-on-demand'"):
        simulate_scenario(lifecycle(), seed=0, replications=1, plans=["all-on-demnd"])


def test_a_run_keeps_the_baseline_and_every_default_it_used() -> None:
    scenario = lifecycle()
    second = replace(scenario.plans[0], name="second")
    scenario = replace(scenario, plans=(scenario.plans[0], second))
    run = simulate_scenario(scenario, seed=0, replications=2, plans=["second"],
                            baseline="all-on-demand")
    assert {p.name for p in run.plans} == {"all-on-demand", "second"}
    assert run.baseline == "all-on-demand"
    assert run.recommendation.plan in {"all-on-demand", "second"}
    assert all(d.source for d in defaults_used())
    # H100 is the only GPU of the plans that a shipped server (hgx-h100-8) carries
    assert {curve.server.gpu for curve in run.breakevens} == {"H100"}
    first = run.plan("all-on-demand")
    assert first.prices
    assert all(p.source and p.effective_date for p in first.prices)


def test_a_limit_breach_reads_as_two_different_percentages() -> None:
    """99.97 % SLO attainment against a 100 % floor must not print "100.0% < 100.0%"."""
    metrics = PlanMetrics(gpu_hours_used=1, gpu_hours_paid=1, reserved_utilization=None,
                          stranded_commitment_usd=0, queue_wait_p95_s=None,
                          slo_attainment=0.9997)
    result = PlanResult(name="p", feasible=True, infeasible_reasons=(), replications=1,
                        p_deadline_missed=0.1004, metrics=metrics)
    breaches = limit_breaches(result, RiskLimits(min_slo_attainment=1.0,
                                                 max_p_deadline_missed=0.1))
    assert breaches == ["P(deadline missed) 10.04% > 10.00%",
                        "SLO attainment 99.97% < 100.00%"]
