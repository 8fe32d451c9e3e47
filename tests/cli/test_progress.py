"""One progress bar over every plan: per-plan reports add up; nothing on stdout."""

from __future__ import annotations

import pytest

from costsim.cli.progress import RunProgress


def test_per_plan_progress_adds_up_over_the_plans() -> None:
    progress = RunProgress(plans=3, replications=4, enabled=False)
    for done in (1, 2, 3, 4):
        progress(done, 4)
    assert progress.done == 4
    progress(4, 4)  # an infeasible plan reports all at once
    assert progress.done == 8
    progress(2, 4)  # worker chunks report several at a time
    progress(4, 4)
    assert progress.done == 12


def test_the_bar_goes_to_stderr_only(capsys: pytest.CaptureFixture[str]) -> None:
    with RunProgress(plans=2, replications=5, enabled=True) as progress:
        for _ in range(2):
            for done in range(1, 6):
                progress(done, 5)
        assert progress.done == 10
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "simulating" in captured.err  # tqdm redraws at most every 0.1 s


def test_no_bar_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    with RunProgress(plans=1, replications=3) as progress:  # pytest's stderr is no TTY
        progress(3, 3)
    assert capsys.readouterr() == ("", "")
