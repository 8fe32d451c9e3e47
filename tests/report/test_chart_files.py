"""Charts drawn in a process pool give the same files, in the same order, as drawn one after
the other (costsim/report/chart_files.py); each chart is drawn by one PNG and one SVG pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

from costsim.report import write_report
from costsim.report.chart_files import ChartJob, draw_job, drawing
from costsim.report.chart_style import render
from costsim.report.charts import chart_jobs
from costsim.sim.run_result import RunResult


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file's bytes; the workbook's only by name (its zip entries carry the time it was
    written)."""
    return {str(p.relative_to(folder)): b"" if p.suffix == ".xlsx" else p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_pool_writes_the_same_files_as_one_process(run: RunResult, summary: dict[str, Any],
                                                     report_dir: Path, tmp_path: Path) -> None:
    written = write_report(run, summary, tmp_path, workers=2)
    assert _tree(tmp_path) == _tree(report_dir)  # the session's report, drawn serially
    charts = [p for p in written if p.parent.name == "charts"]
    assert list(written[:len(charts)]) == charts  # the charts first, as before
    assert {p.name for p in charts} == {p.name for p in (report_dir / "charts").iterdir()}


def test_drawn_charts_keep_the_jobs_order_and_leave_out_empty_ones(run: RunResult) -> None:
    jobs = chart_jobs(run, run.breakevens)
    with drawing(jobs, workers=1) as serial:
        one = serial()
    with drawing(jobs, workers=3) as pooled:
        three = pooled()
    assert [(c.slug, c.png, c.svg) for c in three] == [(c.slug, c.png, c.svg) for c in one]
    expected = [d.slug for d in (draw_job(job) for job in jobs) if d is not None]
    assert [c.slug for c in one] == expected


def _nothing(run: RunResult) -> None:
    return None


def test_a_job_with_nothing_to_show_is_left_out(run: RunResult) -> None:
    with drawing([ChartJob(builder=_nothing, args=(run,))] * 2, workers=2) as drawn:
        assert drawn() == []


def test_render_draws_each_format_once(monkeypatch: pytest.MonkeyPatch,
                                       run: RunResult) -> None:
    """One PNG pass (which lays the figure out) and one SVG pass: no separate layout draw."""
    chart = chart_jobs(run, run.breakevens)[0]
    built = chart.builder(*chart.args)
    assert built is not None
    draws = []
    real = Figure.draw

    def counting(self: Figure, renderer: Any) -> None:
        draws.append(type(renderer).__name__)
        real(self, renderer)

    monkeypatch.setattr(Figure, "draw", counting)
    png, svg = render(built.figure)
    assert png.startswith(b"\x89PNG")
    assert b"<svg" in svg
    assert len(draws) == 2, draws
