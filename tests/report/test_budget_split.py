"""The budget split's JSON and charts, and the run report's spend split chart."""

from __future__ import annotations

import json
from functools import cache

import pytest

from costsim.optimize import budget_split as bs
from costsim.optimize.budget_split import optimize_budget_split
from costsim.optimize.budget_split_result import BudgetSplitResult
from costsim.report.budget_split import budget_split_charts, budget_split_json, spend_split_chart
from costsim.report.chart_style import render
from costsim.sim.run_result import RunResult
from tests.optimize.split_scenarios import SERVER, training_scenario


@cache
def _result() -> BudgetSplitResult:
    ladders = {"RAM_GIB_OPTIONS": (256, 1024), "NVME_DRIVE_COUNTS": (1, 8),
               "CORES_PER_SOCKET": (16, 64), "NIC_COUNTS": (1, 8)}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in ladders.items():
            patch.setattr(bs, name, value)
        return optimize_budget_split(training_scenario("llama-3-8b", 5e11, budget=900_000,
                                               deadline_days=None), servers=[SERVER])


def test_the_json_holds_the_choice_the_split_the_rules_and_the_sensitivity() -> None:
    result = _result()
    document = json.loads(json.dumps(budget_split_json(result)))  # plain JSON types only
    best = document["best"]
    assert best["server"] == SERVER
    assert best["gpus"] == best["servers"] * best["gpus_per_server"]
    assert set(best["parts"]) == {"ram_gib", "nvme_tb", "cpu_cores", "nic_gbps"}
    assert best["capex_usd"] <= document["budget_usd"] == 900_000
    assert sum(s["usd"] for s in document["shares"]) == pytest.approx(best["capex_usd"],
                                                                      abs=0.02)
    assert sum(line["amount_usd"] for line in document["bom_per_server"]) * best[
        "servers"] == pytest.approx(best["capex_usd"], abs=0.05)
    assert {r["rule"] for r in document["rules"]} >= {"GPUs are 60–70 % of the budget",
                                                      "system RAM needed is 1.5–2× VRAM"}
    assert all(isinstance(r["holds"], bool) for r in document["rules"])
    assert {p["part"] for p in document["sensitivity"]} == {
        "servers", "ram_gib", "nvme_tb", "cpu_cores", "nic_gbps"}
    (phase,) = best["phases"]
    assert phase["delivered_tokens_per_s"] <= phase["steady_tokens_per_s"]


def test_the_charts_render() -> None:
    charts = budget_split_charts(_result())
    assert [c.slug for c in charts] == ["budget_split_shares", "budget_split_sensitivity"]
    for chart in charts:
        png, svg = render(chart.figure)
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        assert b"<svg" in svg


def test_the_run_reports_spend_split_has_a_panel_per_simulated_plan(run: RunResult) -> None:
    chart = spend_split_chart(run)
    assert chart is not None
    simulated = [p for p in run.plans if p.ledger is not None and p.ledger.cost_usd > 0]
    assert len(chart.figure.axes) == len(simulated)


def test_the_budget_split_charts_keep_their_text_inside_the_figure() -> None:
    from tests.report.chart_checks import assert_inside

    for chart in budget_split_charts(_result()):
        assert_inside(chart)


def test_the_spend_split_is_titled_ranked_and_stars_the_recommendation(run: RunResult) -> None:
    from costsim.report.chart_style import STAR

    chart = spend_split_chart(run)
    assert chart is not None
    assert chart.figure.get_suptitle().startswith("Spend by part group")
    titles = [axes.get_title(loc="left").split(": $")[0] for axes in chart.figure.axes]
    costs = {p.name: p.cost_usd.mean for p in run.plans if p.cost_usd is not None}
    names = [t.removeprefix(f"{STAR} ").removesuffix(" (recommended)") for t in titles]
    assert [costs[n] for n in names] == sorted(costs[n] for n in names)
    assert [t for t in titles if t.startswith(STAR)] == [
        f"{STAR} {run.recommendation.plan} (recommended)"]
