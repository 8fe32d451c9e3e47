"""The budget split's JSON and charts, and the run report's spend split chart."""

from __future__ import annotations

import json
from functools import cache

import pytest

from costsim.optimize import budget_split as bs
from costsim.optimize.budget_split import optimize_budget_split
from costsim.optimize.budget_split_result import BudgetSplitResult
from costsim.report.budget_split import (
    GROUP_LABELS,
    budget_split_charts,
    budget_split_json,
    capex_tick,
    spend_split_chart,
)
from costsim.report.plot.figure import Line, Place, Points, Segments
from costsim.report.plot.layout import place
from costsim.report.plot.render import render, scene_of
from costsim.report.plot.style import STAR
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


def test_the_shares_chart_draws_each_group_against_the_seed_rules_band() -> None:
    result = _result()
    shares, _ = budget_split_charts(result)
    (panel,) = shares.figure.panels
    assert panel.title.startswith(f"Where the money goes: {result.best.servers} × ")
    assert panel.y.inverted  # the first group at the top
    assert panel.y.tick_labels == [GROUP_LABELS[s.group] for s in result.shares if s.usd]
    (rules,) = [m for m in panel.marks if isinstance(m, Segments)]
    gpu_row = panel.y.tick_labels.index("GPUs")
    assert (rules.x0s[0], rules.x1s[0], rules.ys[0]) == (0.6, 0.7, gpu_row)
    assert 0 < rules.alpha < 1  # a band, the bar under it still seen
    drawn = {t.text for t in scene_of(shares.figure).texts}
    assert any(t.endswith(")") and "%" in t and "$" in t for t in drawn)  # "86.1% ($600k)"


def test_the_sensitivity_chart_puts_parts_on_a_log_2_axis_and_capex_on_a_twin_axis() -> None:
    result = _result()
    _, sensitivity = budget_split_charts(result)
    panels = sensitivity.figure.panels
    parts = list(dict.fromkeys(p.part for p in result.sensitivity))
    assert len(panels) == len(parts)
    for panel, part in zip(panels, parts, strict=True):
        assert panel.x.log == (part != "servers")
        if panel.x.log:
            assert (panel.x.base, panel.x.subs) == (2.0, (1.0,))
        assert panel.y.low == 0
        assert panel.right is not None
        assert panel.right.label == "capex"
        (capex,) = [m for m in panel.marks if isinstance(m, Line) and m.right]
        assert capex.dash  # dashed, as the title says
        assert panel.legend is not None
        assert panel.legend.place is Place.LOWER_RIGHT
        labels = [e.label for e in panel.legend.entries]
        assert labels[0] == "delivered tokens/s"
        assert "chosen" in labels
        over = [p for p in result.sensitivity if p.part == part and not p.within_budget]
        assert ("over the budget" in labels) == bool(over)
        chosen = [m for m in panel.marks if isinstance(m, Points) and m.label == "chosen"]
        assert [m.face for m in chosen] == [None]  # a ring around the chosen point
    placed = place(sensitivity.figure)
    ram = placed.panels[parts.index("ram_gib")]
    assert ram.x.positions == (256.0, 512.0, 1024.0)  # powers of 2 on the RAM ladder
    assert ram.right is not None
    assert all(label.startswith("$") for label in ram.right.labels)


def test_the_run_reports_spend_split_has_a_panel_per_simulated_plan(run: RunResult) -> None:
    chart = spend_split_chart(run)
    assert chart is not None
    simulated = [p for p in run.plans if p.ledger is not None and p.ledger.cost_usd > 0]
    assert len(chart.figure.panels) == len(simulated)
    assert chart.figure.share_x  # one share scale, its ticks under the last panel
    assert chart.figure.panels[-1].x.label.startswith("share of the plan's economic cost")


def test_the_budget_split_charts_keep_their_text_inside_the_figure() -> None:
    from tests.report.chart_checks import assert_inside

    for chart in budget_split_charts(_result()):
        assert_inside(chart)


def test_the_spend_split_is_titled_ranked_and_stars_the_recommendation(run: RunResult) -> None:
    chart = spend_split_chart(run)
    assert chart is not None
    assert chart.figure.title.startswith("Spend by part group")
    titles = [panel.title.split(": $")[0] for panel in chart.figure.panels]
    costs = {p.name: p.cost_usd.mean for p in run.plans if p.cost_usd is not None}
    names = [t.removeprefix(f"{STAR} ").removesuffix(" (recommended)") for t in titles]
    assert [costs[n] for n in names] == sorted(costs[n] for n in names)
    assert [t for t in titles if t.startswith(STAR)] == [
        f"{STAR} {run.recommendation.plan} (recommended)"]
    bold = [p.title.split(": $")[0] for p in chart.figure.panels if p.title_bold]
    assert bold == [f"{STAR} {run.recommendation.plan} (recommended)"]
    assert all(p.title_left for p in chart.figure.panels)


@pytest.mark.parametrize(("amount", "label"), [
    (2_425_000, "$2.425M"), (2_400_000, "$2.4M"), (2_450_000, "$2.45M"), (12_500, "$12.5k"),
    (950, "$950"), (2_000_000, "$2M")])
def test_a_capex_tick_keeps_the_digit_that_tells_it_from_its_neighbours(amount: float,
                                                                         label: str) -> None:
    assert capex_tick(amount) == label
