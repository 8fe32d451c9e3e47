"""Estimated prices are marked wherever a plan's figures show (issue 19 item 3): the flagship's
optimized plan rests on a tier-2 reservation at costsim's generic 35 % discount
(``reserved-by-contract``), once printed as "discount 35%" with no mark."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import Cli

FLAGSHIP = Path(__file__).parents[2] / "scenarios" / "lifecycle-assistant.yaml"


@pytest.mark.slow  # the full search on the flagship (~20 s at 2 replications)
@pytest.mark.usefixtures("no_charts")
def test_the_flagships_choice_is_marked_as_resting_on_an_estimate(cli: Cli,
                                                                   tmp_path: Path) -> None:
    code, out, err = cli("optimize", str(FLAGSHIP), "--replications", "2", "--top", "2",
                         "--workers", "1", "--out", str(tmp_path / "opt"))
    assert code == 0, err
    document = json.loads((tmp_path / "opt" / "optimize.json").read_text(encoding="utf-8"))
    best = document["best"]
    flags = {e["flag"] for e in best["estimated_inputs"]}
    assert "reserved-by-contract" in flags
    for entry in best["estimated_inputs"]:
        assert set(entry) == {"phase", "pool", "option", "flag", "source"}
        assert entry["source"]
    # the table: every money figure of the chosen row carries the mark
    row = next(line for line in out.splitlines() if f" {best['name']} " in line
               and line.lstrip().startswith("1"))
    assert len(re.findall(r"\$[\d,]+~", row)) == 4, row
    # the explanation and the reservation lines
    assert "rests on an estimated price: ask for a quote" in document["explanation"]
    assert "reserved-by-contract" in document["explanation"]
    estimated = [s for s in document["reservations"] if s["estimate"]]
    assert estimated
    assert re.search(r"\(discount ~\d+% \(estimate\)\)", out)
    assert not re.search(r"\(discount \d+%\)", out)  # no unmarked estimated discount
    # a plan resting on no estimate is not marked
    plain = [r for r in document["ranked"] if r["feasible"] and not r["estimated_inputs"]]
    assert plain
    plain_row = next(line for line in out.splitlines() if f" {plain[0]['name']} " in line)
    assert "~" not in plain_row


@pytest.mark.usefixtures("no_charts")
def test_run_marks_the_plans_and_the_recommendation(cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("run", str(FLAGSHIP), "--plan", "reserved-base", "--plan",
                         "large-cards", "--replications", "2", "--workers", "1", "--out",
                         str(tmp_path / "run"), "--json")
    assert code == 0, err
    summary = json.loads(out)
    plans = {p["name"]: p for p in summary["plans"]}
    assert [e["flag"] for e in plans["reserved-base"]["estimated_inputs"]] == [
        "reserved-by-contract"]
    assert plans["large-cards"]["estimated_inputs"] == []
    if summary["recommended"]["plan"] == "reserved-base":
        assert "ask for a quote" in summary["recommended"]["reason"]
    code, text, err = cli("run", str(FLAGSHIP), "--plan", "reserved-base", "--plan",
                          "large-cards", "--replications", "2", "--workers", "1", "--out",
                          str(tmp_path / "run2"))
    assert code == 0, err
    reserved = next(line for line in text.splitlines() if " reserved-base " in line)
    large = next(line for line in text.splitlines() if " large-cards " in line)
    assert re.search(r"\$[\d,]+~", reserved)
    assert "~" not in large
    assert "rests on an estimated price" in text
