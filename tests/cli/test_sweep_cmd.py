"""``costsim sweep`` end to end: the folder rules of DESIGN §7 (an existing --out is refused
without --resume, nothing touched), the JSON document, the results table, resuming after an
edit, and refusals that name the flag. The engine runs on the fallback process pool with one
worker (fast to start; tests/sweep/test_engines.py compares it with Dask)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Cli

ROOT = Path(__file__).parents[2]
SWEEP = ("--set", "phases.serve.load.peak_requests_per_s=5,10", "--plan", "h100-on-demand",
         "--replications", "6", "--workers", "1")


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    target = tmp_path / "growth.yaml"
    shutil.copy(ROOT / "scenarios" / "inference-growth.yaml", target)
    return target


@pytest.fixture
def no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the 'distributed' extra (dask + pyarrow) were not installed."""
    monkeypatch.setitem(sys.modules, "distributed", None)
    monkeypatch.setitem(sys.modules, "pyarrow", None)


def _tree(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


@pytest.mark.usefixtures("no_extra")
def test_a_sweep_writes_its_folder_and_prints_the_json_of_design_7(
        cli: Cli, scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = cli("sweep", str(scenario), *SWEEP, "--out", str(out), "--json")
    assert code == 0, err
    assert err.startswith("costsim sweep: the 'distributed' extra is not installed")
    document = json.loads(stdout)
    assert document["engine"] == "process-pool"
    assert (document["variants"], document["tasks"]) == (2, 2)
    assert document["results_path"] == str(out / "results.csv")
    assert [(r["variant"], r["plan"]) for r in document["rows"]] == [
        ({"phases.serve.load.peak_requests_per_s": 5}, "h100-on-demand"),
        ({"phases.serve.load.peak_requests_per_s": 10}, "h100-on-demand")]
    low, high = (r["cost_usd"] for r in document["rows"])
    assert set(low) == {"mean", "p10", "p50", "p90"}
    assert low["mean"] < high["mean"]  # twice the peak load costs more
    with (out / "results.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert [float(r["cost_usd_mean"]) for r in table] == [low["mean"], high["mean"]]
    assert table[0]["set:phases.serve.load.peak_requests_per_s"] == "5.0"
    saved = json.loads((out / "sweep.json").read_text())
    assert saved["rows"] == document["rows"]
    assert {p.name for p in (out / "report" / "charts").iterdir()} == {
        f"{chart}.{ext}" for chart in ("sweep_cost_distribution", "sweep_tornado")
        for ext in ("png", "svg")}


@pytest.mark.usefixtures("no_extra")
def test_an_existing_out_is_refused_without_resume_and_left_untouched(
        cli: Cli, scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("sweep", str(scenario), *SWEEP, "--out", str(out))[0] == 0
    before = _tree(out)
    code, stdout, err = cli("sweep", str(scenario), *SWEEP, "--out", str(out))
    assert (code, stdout) == (2, "")
    assert err.strip() == (f"costsim sweep: error: --out: {out}: the folder exists; name a new "
                           "one, or add --resume to finish the sweep in it")
    assert _tree(out) == before


@pytest.mark.usefixtures("no_extra")
def test_resume_reuses_what_an_edit_leaves_alone_and_recomputes_the_rest(
        cli: Cli, scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("sweep", str(scenario), *SWEEP, "--out", str(out))[0] == 0
    # the base value of the swept key: every variant overrides it, so nothing changes
    text = scenario.read_text()
    scenario.write_text(text.replace("peak_requests_per_s: 30", "peak_requests_per_s: 31"))
    code, _, err = cli("sweep", str(scenario), *SWEEP, "--out", str(out), "--resume")
    assert code == 0
    assert "2 of 2 tasks came from the cache" in err
    # a new value for one variant: the other one's task is reused
    changed = [a.replace("=5,10", "=5,20") for a in SWEEP]
    code, _, err = cli("sweep", str(scenario), *changed, "--out", str(out), "--resume")
    assert code == 0
    assert "1 of 2 tasks came from the cache" in err
    # the budget changes every variant's resolved scenario: all recomputed
    scenario.write_text(text.replace("budget_usd: 1_200_000", "budget_usd: 1_300_000"))
    code, _, err = cli("sweep", str(scenario), *SWEEP, "--out", str(out), "--resume")
    assert code == 0
    assert "came from the cache" not in err


@pytest.mark.parametrize(("extra", "message"), [
    (("--scheduler", "nowhere"), "argument --scheduler: must be 'local' or a Dask scheduler "
                                 "address such as tcp://host:8786 (got 'nowhere')"),
    (("--scheduler", "tcp://127.0.0.1:1"),
     "error: --workers: 1: applies to --scheduler local only"),
    (("--plan", "h100-on-demnd"), "did you mean"),
])
def test_bad_flags_are_one_line_naming_the_flag(cli: Cli, scenario: Path, tmp_path: Path,
                                                extra: tuple[str, ...], message: str) -> None:
    out = tmp_path / "out"
    code, stdout, err = cli("sweep", str(scenario), *SWEEP, *extra, "--out", str(out))
    assert (code, stdout) == (2, "")
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_sweep_file_for_another_scenario_is_refused(cli: Cli, scenario: Path,
                                                      tmp_path: Path) -> None:
    code, _, err = cli("sweep", str(scenario), "--sweep-file",
                       str(ROOT / "sweeps" / "lifecycle-what-if.yaml"), "--out",
                       str(tmp_path / "out"))
    assert code == 2
    assert "is written for the scenario" in err


def test_resume_continues_only_a_sweep_folder(cli: Cli, scenario: Path, tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    code, _, err = cli("sweep", str(scenario), *SWEEP, "--out", str(tmp_path / "mine"),
                       "--resume")
    assert code == 2
    assert "is not a costsim sweep" in err
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_starting_the_cli_does_not_import_dask() -> None:
    probe = ("import sys; from costsim.cli.main import build_parser; build_parser(); "
             "print(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'dask', 'distributed', 'pyarrow'}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_a_sweep_file_and_set_flags_are_crossed(scenario: Path, tmp_path: Path) -> None:
    from costsim.cli.sweep_variants import load_variants

    sweep_file = tmp_path / "what-if.yaml"
    sweep_file.write_text("scenario: growth.yaml\nvariants:\n"
                          "  - {name: small, set: {phases.serve.load.peak_requests_per_s: 5}}\n"
                          "  - {name: big, set: {phases.serve.load.peak_requests_per_s: 50}}\n")
    _, variants = load_variants(scenario, ["prices.gpu_price_change_pct.H100=-10,-40"],
                                sweep_file)
    assert [(v.name, dict(v.overrides)) for v in variants] == [
        (name, {"phases.serve.load.peak_requests_per_s": peak,
                "prices.gpu_price_change_pct.H100": change})
        for name, peak in (("small", 5), ("big", 50)) for change in (-10, -40)]
    assert variants[3].scenario.phases[0].load.peak_requests_per_s == 50


@pytest.mark.usefixtures("no_extra")
def test_a_sweep_in_another_currency_names_it_and_prints_its_figures(
        cli: Cli, scenario: Path, tmp_path: Path) -> None:
    """Issue 21 item 5: sweep.json and --json stay USD with currency and fx_rate_per_usd at
    the top; the text shows euros."""
    scenario.write_text(scenario.read_text() + "currency: EUR\nfx_rate_per_usd: 0.9\n")
    flags = ("--set", "phases.serve.load.peak_requests_per_s=5", "--plan", "h100-on-demand",
             "--replications", "2", "--workers", "1")
    code, stdout, err = cli("sweep", str(scenario), *flags, "--out", str(tmp_path / "a"),
                            "--json")
    assert code == 0, err
    document = json.loads(stdout)
    assert (document["currency"], document["fx_rate_per_usd"]) == ("EUR", 0.9)
    assert "mean" in document["rows"][0]["cost_usd"]
    code, stdout, err = cli("sweep", str(scenario), *flags, "--out", str(tmp_path / "b"))
    assert code == 0, err
    assert "€" in stdout
    assert "$" not in stdout.split("Costs:")[0]
