"""Every shipped scenario's results at a fixed seed equal its checked-in golden summary, so a
change in results shows up in review (regenerate on purpose: python scripts/update_goldens.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.golden.goldens import (
    differences,
    golden_path,
    golden_text,
    normalize,
    optimize_golden_path,
    optimize_of,
    optimize_scenarios,
    shipped_scenarios,
    summary_of,
)


@cache
def _summary(scenario: Path) -> dict[str, Any]:
    return summary_of(scenario)


def test_scenarios_are_shipped_and_each_has_a_golden() -> None:
    scenarios = shipped_scenarios()
    assert len(scenarios) >= 6
    goldens = {p.name for p in golden_path(scenarios[0]).parent.glob("*.summary.json")}
    assert goldens == {golden_path(s).name for s in scenarios}, (
        "a golden per shipped scenario, none for a removed one: "
        "python scripts/update_goldens.py")


@pytest.mark.parametrize("scenario", shipped_scenarios(), ids=lambda p: p.stem)
def test_results_equal_the_golden_summary(scenario: Path) -> None:
    golden = json.loads(golden_path(scenario).read_text(encoding="utf-8"))
    now = json.loads(golden_text(scenario, _summary(scenario)))
    changed = differences(golden, now)
    assert not changed, (f"{scenario.name}: results changed ({len(changed)} values; if that "
                         "is intended, run python scripts/update_goldens.py and review):\n"
                         + "\n".join(changed[:20]))


def test_normalize_drops_volatile_keys_and_rounds_money_to_the_cent() -> None:
    summary = {"wall_s": 1.5, "generated_at": "x", "report_dir": "r", "arch_path": "p",
               "cost_usd": {"mean": 10.004999, "p10": -0.001}, "p_over_budget": 0.1234567891234,
               "plans": [{"amount_usd": 1.239, "gpu_hours": 2.0000000000001}]}
    assert normalize(summary) == {"cost_usd": {"mean": 10.0, "p10": 0.0},
                                  "p_over_budget": 0.123456789,
                                  "plans": [{"amount_usd": 1.24, "gpu_hours": 2.0}]}
    assert "-0.0" not in json.dumps(normalize(summary))


@pytest.mark.parametrize("scenario", shipped_scenarios(), ids=lambda p: p.stem)
def test_every_ledger_adds_up_to_the_cost_and_every_month_to_the_cash(scenario: Path) -> None:
    plans = _summary(scenario)["plans"]
    assert any(plan["feasible"] for plan in plans)
    for plan in plans:
        if not plan["feasible"]:
            assert plan["infeasible_reasons"], plan["name"]
            continue
        lines = sum(round(line["amount_usd"] * 100) for line in plan["ledger"])
        assert lines == round(plan["cost_usd"]["mean"] * 100), plan["name"]
        months = sum(round(row["cash_usd"] * 100) for row in plan["monthly"])
        assert months == round(plan["cash_usd"]["mean"] * 100), plan["name"]


@pytest.mark.parametrize("scenario", optimize_scenarios(), ids=lambda p: p.stem)
def test_the_optimizers_answer_equals_its_golden(scenario: Path) -> None:
    golden = json.loads(optimize_golden_path(scenario).read_text(encoding="utf-8"))
    now = json.loads(golden_text(scenario, optimize_of(scenario)))
    changed = differences(golden, now)
    assert not changed, (f"{scenario.name}: optimize --json changed ({len(changed)} values; "
                         "if that is intended, run python scripts/update_goldens.py and "
                         "review):\n" + "\n".join(changed[:20]))
