"""compare and diff: deltas per phase and category, exact to the cent; inputs that changed."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.errors import InputError
from costsim.report import compare_json, diff_json, summary_json
from costsim.report.compare import plan_delta
from costsim.report.diff import inputs_changed
from costsim.sim.run_result import RunResult, simulate_scenario
from tests.report.runs import report_scenario


def _plan(name: str, lines: list[tuple[str, str, float]]) -> dict[str, Any]:
    total = sum(round(amount * 100) for _, _, amount in lines) / 100
    return {"name": name, "cost_usd": {"mean": total, "p10": total, "p50": total, "p90": total},
            "ledger": [{"phase": p, "category": c, "amount_usd": a} for p, c, a in lines]}


def _summary(*plans: dict[str, Any], inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"scenario": "s", "plans": list(plans), "inputs": inputs or {}}


def test_compare_rows_are_hand_checkable() -> None:
    old = _plan("base", [("train", "compute", 1000.10), ("serve", "compute", 200.0)])
    new = _plan("alt", [("train", "compute", 900.05), ("serve", "compute", 200.0),
                        ("", "reserved-idle", 50.0)])
    diff = diff_json(_summary(old | {"name": "alt"}), _summary(new),
                     sources=("a.json", "b.json"))
    (row,) = diff["plans"]
    assert row["delta_usd"] == pytest.approx(-50.05, abs=1e-9)
    assert row["delta_pct"] == round(-5005 / 120010 * 100, 2)
    cells = {(c["phase"], c["category"]): c for c in row["by_phase_category"]}
    assert cells[("train", "compute")]["delta_usd"] == pytest.approx(-100.05, abs=1e-9)
    assert cells[("serve", "compute")]["delta_usd"] == 0
    assert cells[("serve", "compute")][
        "delta_pct"] == 0
    idle = cells[("", "reserved-idle")]
    assert (idle["baseline_usd"], idle["plan_usd"], idle["delta_pct"]) == (0, 50.0, None)
    # plan-wide lines come after the phases
    assert [c["phase"] for c in row["by_phase_category"]][-1] == ""


def test_compare_against_the_baseline_of_a_run(run: RunResult) -> None:
    document = compare_json(run)
    assert document["baseline"] == "all-on-demand"
    rows = {row["name"]: row for row in document["plans"]}
    assert set(rows) == {plan.name for plan in run.plans}
    base = rows["all-on-demand"]
    assert base["delta_usd"] == 0
    assert all(c["delta_usd"] == 0
                                          for c in base["by_phase_category"])
    for name, row in rows.items():
        plan = run.plan(name)
        if plan.cost_usd is None:
            assert row["delta_usd"] is None
            assert row["by_phase_category"] == []
            continue
        expected = round(plan.cost_usd.mean * 100) - round(base["cost_usd"]["mean"] * 100)
        assert round(row["delta_usd"] * 100) == expected
        # the rows' deltas add up to the total delta, to the cent
        assert sum(round(c["delta_usd"] * 100) for c in row["by_phase_category"]) == expected
        assert {"phase", "category", "baseline_usd", "plan_usd", "delta_usd", "delta_pct"} == \
            set(row["by_phase_category"][0])
    reserve = rows["reserve-serving"]
    assert any(c["category"] == "reserved-idle" and c["delta_usd"] > 0
               for c in reserve["by_phase_category"])


def test_a_summary_against_itself_changes_nothing(summary: dict[str, Any]) -> None:
    diff = diff_json(summary, copy.deepcopy(summary))
    assert diff["inputs_changed"] == []
    assert diff["added"] == []
    assert diff["removed"] == []
    assert all(row["delta_usd"] in (0, None) for row in diff["plans"])
    assert len(diff["plans"]) == len(summary["plans"])


def test_diff_names_the_changed_scenario_key_price_and_plans() -> None:
    scenario = report_scenario()
    train = scenario.phases[1]
    revised = replace(scenario, phases=(scenario.phases[0], replace(train, tokens=3e10),  # type: ignore[arg-type]
                                        scenario.phases[2]),
                      plans=scenario.plans[:2] + scenario.plans[3:])

    def summary(s: Any) -> dict[str, Any]:
        return summary_json(simulate_scenario(s, seed=0, replications=1), generated_at="")

    old, new = summary(scenario), summary(revised)
    new["inputs"]["prices_used"]["all-on-demand"][0]["rate_usd_per_gpu_hour"] = 9.99
    diff = diff_json(old, new)
    assert diff["removed"] == ["buy-servers"]
    assert diff["added"] == []
    changes = {c["path"]: (c["old"], c["new"]) for c in diff["inputs_changed"]}
    assert changes["phases.train.tokens"] == (2e10, 3e10)
    first_price = old["inputs"]["prices_used"]["all-on-demand"][0]
    assert changes[f"prices_used.all-on-demand.{first_price['name']}.rate_usd_per_gpu_hour"
                   ] == (first_price["rate_usd_per_gpu_hour"], 9.99)
    assert changes["plans.buy-servers"][1] is None  # a whole named item removed
    train_row = next(r for r in diff["plans"] if r["name"] == "all-on-demand")
    cell = next(c for c in train_row["by_phase_category"] if c["phase"] == "train")
    assert cell["delta_usd"] > 0  # 50 % more tokens cost more


def test_inputs_changed_walks_lists_by_name_or_position() -> None:
    old = {"a": [{"name": "x", "v": 1}, {"name": "y", "v": 2}], "b": [1, 2], "c": 5}
    new = {"a": [{"name": "y", "v": 3}, {"name": "x", "v": 1}], "b": [1, 2, 4], "c": 5.0,
           "d": True}
    assert inputs_changed(old, new) == [
        {"path": "a.y.v", "old": 2, "new": 3},
        {"path": "b[2]", "old": None, "new": 4},
        {"path": "d", "old": None, "new": True},
    ]
    assert inputs_changed({"f": 1}, {"f": True}) == [{"path": "f", "old": 1, "new": True}]


@pytest.mark.parametrize(("document", "path"), [
    ([], ""),
    ({"plans": {}}, "plans"),
    ({"plans": [{"cost_usd": None}]}, "plans[0].name"),
    ({"plans": [{"name": "a"}, {"name": "a"}]}, "plans[1].name"),
    ({"plans": [{"name": "a", "cost_usd": {"mean": "1"}}]}, "plans[0].cost_usd.mean"),
    ({"plans": [{"name": "a", "ledger": [{"phase": "t", "category": "compute",
                                          "amount_usd": float("nan")}]}]},
     "plans[0].ledger[0].amount_usd"),
])
def test_a_document_that_is_not_a_summary_is_refused_with_its_key_path(
        document: Any, path: str) -> None:
    with pytest.raises(InputError) as error:
        diff_json(_summary(), document, sources=("old.json", "new/summary.json"))
    assert error.value.source == "new/summary.json"
    assert error.value.key_path == path


CATEGORIES = ["compute", "reserved-idle", "storage", "capex", "residual-value"]
amounts = st.integers(min_value=-10**9, max_value=10**11).map(lambda cents: cents / 100)
lines = st.lists(st.tuples(st.sampled_from(["", "train", "serve"]), st.sampled_from(CATEGORIES),
                           amounts), max_size=12)


@given(old=lines, new=lines)
def test_row_deltas_add_up_to_the_plans_delta_to_the_cent(
        old: list[tuple[str, str, float]], new: list[tuple[str, str, float]]) -> None:
    row = plan_delta(_plan("p", old), _plan("p", new), ["train", "serve"])
    total = round(row["cost_usd"]["mean"] * 100) - round(row["baseline_cost_usd"]["mean"] * 100)
    assert round(row["delta_usd"] * 100) == total
    assert sum(round(c["delta_usd"] * 100) for c in row["by_phase_category"]) == total
    for cell in row["by_phase_category"]:
        assert round(cell["plan_usd"] * 100) - round(cell["baseline_usd"] * 100) == round(
            cell["delta_usd"] * 100)
    phases = [c["phase"] for c in row["by_phase_category"]]
    assert phases == sorted(phases, key=["train", "serve", ""].index)
