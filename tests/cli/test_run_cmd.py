"""``costsim run`` end to end on a small scenario: the ranked table, the report folder and its
rules (--out, --force, Ctrl-C), deterministic --json, and a ledger that adds up."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from .conftest import Cli
from .deterministic import deterministic

SMALL = Path(__file__).parent / "data" / "small-project.yaml"
REPS = "8"
REPORT_FILES = {"report.html", "summary.json", "ledger.csv", "monthly.csv", "report.xlsx"}


def _run(cli: Cli, out: Path, *extra: str) -> tuple[int, str, str]:
    workers = () if "--workers" in extra else ("--workers", "1")
    return cli("run", str(SMALL), "--replications", REPS, *workers, "--out", str(out), *extra)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.slow  # draws every chart: ~10 s
def test_run_ranks_the_plans_and_writes_the_report(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "report"
    code, text, err = _run(cli, out)
    assert code == 0, err
    lines = text.splitlines()
    ranked = [line.split()[2] for line in lines if line[:2] in ("1 ", "2 ")]
    assert ranked == ["spot-training", "all-on-demand"]  # by mean cost
    assert "infeasible: train-on-one-t4:" in text
    assert "does not fit T4" in text
    assert "Recommended: spot-training" in text
    assert "against the baseline all-on-demand" in text
    assert f"Report: {out}/report.html" in text
    assert {p.name for p in out.iterdir()} >= REPORT_FILES
    charts = {p.name for p in (out / "charts").iterdir()}
    assert "cost_by_plan.png" in charts
    assert "cost_by_plan.svg" in charts
    assert _leftovers(tmp_path) == []


@pytest.mark.usefixtures("no_charts")
def test_an_existing_out_folder_is_refused_and_left_untouched(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, text, err = _run(cli, out)
    assert code == 2
    assert text == ""
    assert len(err.strip().splitlines()) == 1
    assert "the folder exists" in err
    assert "--force" in err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    code, _, err = _run(cli, out, "--force")  # not a report folder: --force refuses it too
    assert code == 2
    assert "not a costsim report" in err
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.usefixtures("no_charts")
def test_force_replaces_a_previous_report(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert _run(cli, out, "--seed", "1")[0] == 0
    first = json.loads((out / "summary.json").read_text())
    assert _run(cli, out)[0] == 2
    assert json.loads((out / "summary.json").read_text()) == first
    assert _run(cli, out, "--force", "--seed", "2")[0] == 0
    second = json.loads((out / "summary.json").read_text())
    assert second["seed"] == 2
    assert _leftovers(tmp_path) == []


@pytest.mark.usefixtures("no_charts")
def test_ctrl_c_while_simulating_leaves_nothing(cli: Cli, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from costsim.cli.progress import RunProgress

    calls = []

    def interrupt(self: RunProgress, done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(RunProgress, "__call__", interrupt)
    code, text, err = _run(cli, tmp_path / "report")
    assert code == 130
    assert text == ""
    assert err.strip().splitlines() == ["costsim run: interrupted; nothing was written"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.usefixtures("no_charts")
def test_ctrl_c_while_writing_the_report_leaves_nothing(cli: Cli, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import costsim.report

    real = costsim.report.write_report

    def half_then_interrupt(run: Any, summary: Any, out_dir: Path, **kw: Any) -> Any:
        real(run, summary, out_dir, **kw)
        assert (out_dir / "summary.json").exists()
        raise KeyboardInterrupt

    monkeypatch.setattr(costsim.report, "write_report", half_then_interrupt)
    out = tmp_path / "report"
    assert _run(cli, out)[0] == 130
    assert list(tmp_path.iterdir()) == []
    # and a replaced report survives an interrupted --force
    monkeypatch.setattr(costsim.report, "write_report", real)
    assert _run(cli, out)[0] == 0
    before = (out / "summary.json").read_bytes()
    monkeypatch.setattr(costsim.report, "write_report", half_then_interrupt)
    assert _run(cli, out, "--force", "--seed", "3")[0] == 130
    assert (out / "summary.json").read_bytes() == before
    assert _leftovers(tmp_path) == []


@pytest.mark.usefixtures("no_charts")
def test_json_is_deterministic_for_a_seed_and_the_ledger_adds_up(cli: Cli,
                                                                 tmp_path: Path) -> None:
    code, first, err = _run(cli, tmp_path / "a", "--json", "--seed", "5")
    assert code == 0, err
    code, second, _ = _run(cli, tmp_path / "b", "--json", "--seed", "5", "--workers", "2")
    assert code == 0
    one, two = json.loads(first), json.loads(second)
    assert deterministic(one) == deterministic(two)
    assert one["seed"] == 5
    assert one["replications"] == int(REPS)
    saved = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert deterministic(saved) == deterministic(one)
    feasible = [p for p in one["plans"] if p["feasible"]]
    assert len(feasible) == 2
    for plan in feasible:
        cents = sum(round(line["amount_usd"] * 100) for line in plan["ledger"])
        assert cents == round(plan["cost_usd"]["mean"] * 100), plan["name"]
        cash = sum(round(row["cash_usd"] * 100) for row in plan["monthly"])
        assert cash == round(plan["cash_usd"]["mean"] * 100), plan["name"]
    infeasible = next(p for p in one["plans"] if not p["feasible"])
    assert infeasible["name"] == "train-on-one-t4"
    assert infeasible["infeasible_reasons"]
    code, third, _ = _run(cli, tmp_path / "c", "--json", "--seed", "6")
    assert deterministic(json.loads(third)) != deterministic(one)


@pytest.mark.usefixtures("no_charts")
def test_a_plan_alone_gets_the_numbers_it_gets_in_the_full_run(cli: Cli, tmp_path: Path) -> None:
    _, full, _ = _run(cli, tmp_path / "a", "--json")
    code, alone, err = _run(cli, tmp_path / "b", "--json", "--plan", "all-on-demand")
    assert code == 0, err
    costs = {p["name"]: p["cost_usd"] for p in json.loads(full)["plans"]}
    only = json.loads(alone)["plans"]
    assert [p["name"] for p in only] == ["all-on-demand"]
    assert only[0]["cost_usd"] == costs["all-on-demand"]
    assert all(math.isfinite(v) for v in only[0]["cost_usd"].values())


@pytest.mark.usefixtures("no_charts")
@pytest.mark.parametrize(("argv", "message"), [
    (("--replications", "0"), "--replications: must be a whole number in 1..100,000 (got 0)"),
    (("--replications", "2.5"), "--replications: must be a whole number"),
    (("--workers", "65"), "--workers: must be a whole number in 1..64 (got 65)"),
    (("--seed", "-1"), "--seed: must be a whole number in 0..4,294,967,295"),
    (("--plan", "all-on-demnd"), "--plan: unknown plan 'all-on-demnd'; did you mean "
                                 "'all-on-demand'?"),
    (("--baseline", "spot"), "--baseline: unknown plan 'spot'"),
])
def test_bad_flags_are_one_line_and_exit_2(cli: Cli, tmp_path: Path, argv: tuple[str, ...],
                                           message: str) -> None:
    code, text, err = _run(cli, tmp_path / "report", *argv)
    assert code == 2
    assert text == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.usefixtures("no_charts")
def test_a_missing_or_invalid_scenario_is_one_line(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("run", str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "r"))
    assert code == 2
    assert "nope.yaml" in err
    assert len(err.strip().splitlines()) == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text(SMALL.read_text().replace("horizon_months: 6", "horizon_monts: 6"))
    code, _, err = cli("run", str(bad), "--out", str(tmp_path / "r"))
    assert code == 2
    assert "horizon_monts" in err
    assert "did you mean" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.slow  # a real process and a real signal: ~5 s
def test_a_real_ctrl_c_with_worker_processes_is_one_line_and_leaves_nothing(
        tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal sends it: the workers end silently
    (no traceback each), the run says one line, exits 130, and leaves no folder."""
    import os
    import signal
    import subprocess
    import sys
    import time

    flagship = Path(__file__).parents[2] / "scenarios" / "lifecycle-assistant.yaml"
    process = subprocess.Popen(
        [sys.executable, "-m", "costsim", "run", str(flagship), "--replications", "100000",
         "--workers", "2", "--out", str(tmp_path / "report")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        # a shell starts background jobs with SIGINT ignored; a terminal's job has it default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(6)  # well into the simulation
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert out == ""
    # 100,000 replications: the up-front work estimate comes first (issue 19 item 8), then
    # the interruption's one line, and nothing else (no worker tracebacks)
    notice, *rest = err.strip().splitlines()
    assert notice.startswith("costsim run: a large simulation: 6 plans × 100,000 replications")
    assert rest == ["costsim run: interrupted; nothing was written"]
    assert list(tmp_path.iterdir()) == []
