"""summary.json: the contract's keys, the ledger adding up, determinism, the inputs diff reads."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from costsim.report import summary_json
from costsim.sim.run_result import simulate_scenario
from tests.report.runs import report_scenario

TOP_KEYS = {"scenario", "scenario_sha256", "costsim_version", "price_book_date", "seed",
            "replications", "plans", "stats", "recommended", "baseline", "inputs",
            "generated_at"}
PLAN_KEYS = {"name", "feasible", "infeasible_reasons", "cost_usd", "cash_usd", "npv_usd",
             "p_over_budget", "p_deadline_missed", "cost_per_training_run_usd",
             "cost_per_million_tokens_usd", "cost_per_million_output_tokens_usd", "ledger",
             "monthly", "metrics"}
LEDGER_KEYS = {"phase", "pool", "gpu", "option", "category", "component", "gpu_hours",
               "rate_usd_per_gpu_hour", "amount_usd"}
MONTH_KEYS = {"month", "cash_usd", "capex_usd", "opex_usd", "amortized_usd"}
METRIC_KEYS = {"gpu_hours_used", "gpu_hours_paid", "reserved_utilization",
               "stranded_commitment_usd", "queue_wait_p95_s", "slo_attainment"}
CATEGORIES = {"compute", "reserved-idle", "spot-lost-work", "storage", "data-transfer",
              "capex", "residual-value", "power-colocation", "maintenance-staff",
              "stranded-commitment"}


def _cents(amount: float) -> int:
    return round(amount * 100)


def test_every_key_of_design_section_7_is_there(summary: dict[str, Any]) -> None:
    assert summary.keys() >= TOP_KEYS
    assert summary["stats"].keys() >= {"events", "wall_s", "replications", "seed"}
    assert summary["stats"]["events"] > 0
    for plan in summary["plans"]:
        assert plan.keys() >= PLAN_KEYS
        if not plan["feasible"]:
            continue
        assert set(plan["cost_usd"]) == {"mean", "p10", "p50", "p90"}
        assert set(plan["cash_usd"]) == {"mean"}
        assert set(plan["npv_usd"]) == {"mean"}
        assert set(plan["metrics"]) == METRIC_KEYS
        assert all(set(line) == LEDGER_KEYS for line in plan["ledger"])
        assert {line["category"] for line in plan["ledger"]} <= CATEGORIES
        assert all(set(row) == MONTH_KEYS for row in plan["monthly"])
    json.dumps(summary, allow_nan=False)  # valid JSON: no NaN or infinity anywhere


def test_the_ledger_adds_up_to_the_mean_cost_and_the_months_to_the_cash(
        summary: dict[str, Any]) -> None:
    feasible = [p for p in summary["plans"] if p["feasible"]]
    assert len(feasible) >= 4
    for plan in feasible:
        assert sum(_cents(line["amount_usd"]) for line in plan["ledger"]) == _cents(
            plan["cost_usd"]["mean"]), plan["name"]
        assert sum(_cents(row["cash_usd"]) for row in plan["monthly"]) == _cents(
            plan["cash_usd"]["mean"]), plan["name"]
        assert all(_cents(r["capex_usd"]) + _cents(r["opex_usd"]) == _cents(r["cash_usd"])
                   for r in plan["monthly"])
        cost = plan["cost_usd"]
        assert cost["p10"] <= cost["p50"] <= cost["p90"]


def test_cash_equals_cost_to_the_cent_where_nothing_is_capitalized_or_stranded(
        summary: dict[str, Any]) -> None:
    """Pay-as-you-go plans and reservations inside the horizon: every dollar of economic cost
    is paid as cash within the horizon, so the two agree to the cent (issue 19: $117,401.38 of
    cost against $117,401.41 of monthly cash, each line and month rounded on its own)."""
    checked = 0
    for plan in summary["plans"]:
        categories = {line["category"] for line in plan["ledger"]}
        if not plan["feasible"] or categories & {"capex", "residual-value",
                                                 "stranded-commitment"}:
            continue
        assert plan["cash_usd"]["mean"] == plan["cost_usd"]["mean"], plan["name"]
        checked += 1
    assert checked >= 3  # on-demand, spot and the reservation plans


def test_an_infeasible_plan_has_its_reasons_and_no_figures(summary: dict[str, Any]) -> None:
    plan = next(p for p in summary["plans"] if p["name"] == "one-small-card")
    assert plan["feasible"] is False
    assert any("T4" in reason for reason in plan["infeasible_reasons"])
    assert plan["cost_usd"] is None
    assert plan["ledger"] == []
    assert plan["metrics"] is None
    passed = {item["plan"]: item["reason"] for item in summary["recommended"]["passed_over"]}
    assert passed["one-small-card"].startswith("infeasible")


def test_the_recommendation_is_the_cheapest_feasible_plan(summary: dict[str, Any]) -> None:
    feasible = [p for p in summary["plans"] if p["feasible"]]
    cheapest = min(feasible, key=lambda p: p["cost_usd"]["mean"])
    assert summary["recommended"]["plan"] == cheapest["name"]
    assert summary["baseline"] == "all-on-demand"


def test_the_inputs_hold_the_scenario_and_every_price_and_default_with_a_source(
        summary: dict[str, Any]) -> None:
    inputs = summary["inputs"]
    assert [phase["name"] for phase in inputs["phases"]] == ["prototype", "train", "serve"]
    assert inputs["phases"][1]["tokens"] == 2e10
    assert set(inputs["prices_used"]) == {plan["name"] for plan in summary["plans"]}
    for prices in inputs["prices_used"].values():
        assert prices
        assert all(p["source"] and p["effective_date"] for p in prices)
        assert len({p["name"] for p in prices}) == len(prices)  # diff addresses them by name
    assert all(d["source"] for d in inputs["defaults_used"])
    assert any(d["estimate"] for d in inputs["defaults_used"])


def test_the_resolved_scenario_from_the_loader_is_used_as_given() -> None:
    scenario = report_scenario()
    resolved = {"name": "acme", "phases": [{"name": "train", "tokens": 2e10}]}
    run = simulate_scenario(replace(scenario, plans=scenario.plans[:1]), seed=0,
                            replications=1, inputs=resolved)
    inputs = summary_json(run, generated_at="")["inputs"]
    assert inputs["phases"] == resolved["phases"]
    assert "prices_used" in inputs
    assert "defaults_used" in inputs


def test_same_inputs_and_seed_give_the_same_summary_except_the_excluded_keys() -> None:
    scenario = report_scenario()

    def summary(seed: int, clock_s: float, generated_at: str) -> dict[str, Any]:
        ticks = iter([0.0, clock_s])
        run = simulate_scenario(scenario, seed=seed, replications=2, clock=lambda: next(ticks))
        return summary_json(run, generated_at=generated_at)

    first = summary(5, 1.5, "2026-12-01T04:00:00Z")
    second = summary(5, 9.25, "2026-12-02T05:00:00Z")
    assert first["stats"]["wall_s"] != second["stats"]["wall_s"]
    for document in (first, second):
        document["stats"].pop("wall_s")
        document.pop("generated_at")
    assert json.dumps(first) == json.dumps(second)
    other = summary(6, 1.5, "")
    assert other["plans"][0]["cost_usd"] != first["plans"][0]["cost_usd"]
