"""``costsim compare`` and ``costsim diff`` end to end: Δ per phase and category against the
baseline, two saved runs with the inputs that changed, and malformed summary files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import Cli

pytestmark = pytest.mark.usefixtures("no_charts")

SMALL = Path(__file__).parent / "data" / "small-project.yaml"


def test_compare_shows_each_plan_against_the_baseline(cli: Cli) -> None:
    code, text, err = cli("compare", str(SMALL), "--replications", "6", "--workers", "1")
    assert code == 0, err
    assert text.startswith("Baseline: all-on-demand (mean cost $")
    assert "spot-training: $" in text
    assert "→" in text
    assert "train" in text


def test_compare_json_deltas_are_plan_minus_baseline(cli: Cli) -> None:
    code, text, _ = cli("compare", str(SMALL), "--replications", "6", "--workers", "1",
                        "--baseline", "spot-training", "--json")
    assert code == 0
    document = json.loads(text)
    assert document["baseline"] == "spot-training"
    plans = {p["name"]: p for p in document["plans"]}
    base = plans["spot-training"]["cost_usd"]["mean"]
    other = plans["all-on-demand"]
    assert other["delta_usd"] == pytest.approx(other["cost_usd"]["mean"] - base, abs=0.005)
    rows = other["by_phase_category"]
    assert rows
    assert round(sum(r["delta_usd"] for r in rows), 2) == pytest.approx(other["delta_usd"],
                                                                      abs=0.005)


def _saved_run(cli: Cli, folder: Path, scenario: Path, *extra: str) -> Path:
    code, _, err = cli("run", str(scenario), "--replications", "6", "--workers", "1",
                       "--out", str(folder), *extra)
    assert code == 0, err
    return folder / "summary.json"


def test_diff_of_two_saved_runs_names_the_inputs_that_changed(cli: Cli, tmp_path: Path) -> None:
    old = _saved_run(cli, tmp_path / "old", SMALL)
    revised = tmp_path / "revised.yaml"
    revised.write_text(SMALL.read_text().replace("tokens: 2e8", "tokens: 4e8"))
    new = _saved_run(cli, tmp_path / "new", revised)
    code, text, err = cli("diff", str(old), str(new))
    assert code == 0, err
    assert "all-on-demand: $" in text
    assert "→" in text
    assert "Inputs that changed:" in text
    assert "tokens" in text
    code, text, _ = cli("diff", str(old), str(new), "--json")
    assert code == 0
    document = json.loads(text)
    paths = [item["path"] for item in document["inputs_changed"]]
    assert any(path.endswith("tokens") for path in paths), paths
    code, text, _ = cli("diff", str(old), str(old), "--json")
    assert json.loads(text)["inputs_changed"] == []


def test_diff_names_inputs_by_the_files_own_keys_and_rounds_like_the_rest(
        cli: Cli, tmp_path: Path) -> None:
    """Issue 19: `prices.overrides.cloud_discount_pct[0][1]` (the resolved document's path) is
    the file's `prices.overrides[0].discount_pct` with its cloud; rates read $0.996, not
    0.9957962499999999; the scenario's SHA-256 is shown whole, not cut inside its quotes."""
    text = SMALL.read_text().replace(
        "data: {", "prices: {overrides: [{cloud: aws, discount_pct: 10}]}\ndata: {")
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text(text)
    second.write_text(text.replace("discount_pct: 10", "discount_pct: 15").replace(
        "train: {gpu: H100, count: 8},", "train: {gpu: H100, count: 16},", 1))
    old = _saved_run(cli, tmp_path / "old", first)
    new = _saved_run(cli, tmp_path / "new", second)
    code, out, err = cli("diff", str(old), str(new))
    assert code == 0, err
    lines = out.splitlines()
    assert "  prices.overrides[0].discount_pct (cloud aws): 10 → 15" in lines
    assert "  plans.all-on-demand.use.train.count: 8 → 16" in lines
    assert "cloud_discount_pct" not in out
    assert "uses[" not in out
    sha_old = json.loads(old.read_text())["scenario_sha256"]
    sha_new = json.loads(new.read_text())["scenario_sha256"]
    assert f'  run.scenario_sha256: "{sha_old}" → "{sha_new}"' in lines
    rates = [line for line in lines if ".rate_usd_per_gpu_hour: " in line]
    assert rates
    for line in rates:
        _, values = line.rsplit(": ", 1)
        for value in values.split(" → "):
            assert re.fullmatch(r"\$\d+\.\d{3}", value), line
    code, out, _ = cli("diff", str(old), str(new), "--json")
    changed = {item["path"]: item for item in json.loads(out)["inputs_changed"]}
    assert changed["prices.overrides[0].discount_pct"] == {
        "path": "prices.overrides[0].discount_pct", "old": 10.0, "new": 15.0,
        "item": "cloud aws"}


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read it"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a summary.json document"),
    ('{"plans": [{"cost": 1}]}', "plans[0].name"),
    ("\udcff", "not UTF-8"),
])
def test_diff_refuses_a_file_that_is_not_a_summary(cli: Cli, tmp_path: Path,
                                                   content: str | None, message: str) -> None:
    good = tmp_path / "good.json"
    good.write_text('{"plans": []}')
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_bytes(content.encode("utf-8", "surrogateescape"))
    code, text, err = cli("diff", str(good), str(bad))
    assert code == 2
    assert text == ""
    assert len(err.strip().splitlines()) == 1
    assert str(bad) in err
    assert message in err
