"""`run`, `optimize` and `sweep` say up front how long a large simulation is expected to take
(stderr, before simulating), and say nothing for a small one; the progress bar has an ETA."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from costsim.cli.progress import RunProgress
from costsim.cli.work_notice import duration_text

from .conftest import Cli

pytestmark = pytest.mark.usefixtures("no_charts")

SMALL = Path(__file__).parent / "data" / "small-project.yaml"


@pytest.fixture
def busy(tmp_path: Path) -> Path:
    """The small project with 100,000 experiment jobs a day (minutes to simulate 200 times,
    hours 10,000 times)."""
    path = tmp_path / "busy.yaml"
    path.write_text(SMALL.read_text().replace("arrivals_per_day: 4,",
                                              "arrivals_per_day: 100000,"))
    return path


def _interrupt(*args: Any, **kwargs: Any) -> Any:
    raise KeyboardInterrupt  # stands in for the hours of simulation the estimate announces


def test_run_says_up_front_how_long_a_large_run_takes(
        cli: Cli, busy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("costsim.cli.run_pipeline.simulate", _interrupt)
    code, out, err = cli("run", str(busy), "--out", str(tmp_path / "r"), "--workers", "2",
                         "--replications", "10000")
    assert code == 130
    assert out == ""
    first = err.splitlines()[0]
    assert first.startswith("costsim run: a large simulation: 3 plans × 10,000 replications, ")
    assert "experiment jobs" in first
    assert "expected to take about " in first
    assert " h on 2 worker(s); fewer --replications or --plan" in first


def test_a_small_run_says_nothing_and_a_lower_threshold_shows_the_line(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = cli("run", str(SMALL), "--replications", "2", "--workers", "1",
                       "--out", str(tmp_path / "a"))
    assert code == 0
    assert "large simulation" not in err
    monkeypatch.setattr("costsim.cli.work_notice.ANNOUNCE_ABOVE_S", 0.0)
    code, out, err = cli("run", str(SMALL), "--replications", "2", "--workers", "1",
                         "--out", str(tmp_path / "b"))
    assert code == 0
    assert "costsim run: a large simulation: 3 plans × 2 replications" in err
    assert out.startswith("Small test project: 3 plans")  # the run goes on as usual


def test_optimize_and_sweep_say_it_too(cli: Cli, busy: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("costsim.optimize.search.optimize_scenario", _interrupt)
    code, _, err = cli("optimize", str(busy), "--replications", "200", "--top", "4",
                       "--out", str(tmp_path / "o"))
    assert code == 130
    assert err.startswith("costsim optimize: a large simulation: 7 plans × 200 replications")
    code, _, err = cli("optimize", str(busy), "--replications", "200", "--exhaustive",
                       "--out", str(tmp_path / "e"))
    assert "expected to take at least about" in err
    monkeypatch.setattr("costsim.sweep.run.run_sweep", _interrupt)
    code, _, err = cli("sweep", str(busy), "--set", "budget_usd=1000,2000",
                       "--out", str(tmp_path / "s"), "--workers", "1")
    assert code == 130
    assert "costsim sweep: a large simulation: 6 variant plans × 200 replications" in err


def test_the_bar_has_an_eta_and_the_estimate_until_the_first_plan_reports(
        capsys: pytest.CaptureFixture[str]) -> None:
    with RunProgress(plans=2, replications=5, enabled=True, expected_s=150.0) as progress:
        progress(5, 5)
        progress(5, 5)
    err = capsys.readouterr().err
    assert "expected about 2 min in all" in err
    assert "ETA" in err


def test_durations_read_in_the_unit_that_fits() -> None:
    assert duration_text(45) == "about 45 s"
    assert duration_text(150) == "about 2 min"
    assert duration_text(2.5 * 3600) == "about 2.5 h"
    assert duration_text(3 * 86_400) == "about 3.0 days"
