"""Charts drawn from jobs (costsim/report/chart_files.py): one figure built per job, in the
report's order, a job with nothing to show left out; each chart laid out once and drawn by one
PNG and one SVG pass."""

from __future__ import annotations

from typing import Any

import pytest
from matplotlib.figure import Figure

from costsim.report.chart_files import ChartJob, draw, draw_jobs
from costsim.report.chart_style import render
from costsim.report.charts import CHART_SUBJECTS, build_charts, chart_jobs
from costsim.sim.run_result import RunResult


def test_jobs_draw_the_built_charts_in_the_report_order(run: RunResult) -> None:
    drawn = draw_jobs(chart_jobs(run, run.breakevens))
    built = build_charts(run, run.breakevens)
    assert [d.slug for d in drawn] == [c.slug for c in built]
    order = [slug for slug, _ in CHART_SUBJECTS]
    assert [d.slug for d in drawn] == sorted((d.slug for d in drawn), key=order.index)
    first = draw(built[0])  # the same figure built again draws the same bytes
    assert (first.png, first.svg) == (drawn[0].png, drawn[0].svg)


def _nothing(run: RunResult) -> None:
    return None


def test_a_job_with_nothing_to_show_is_left_out(run: RunResult) -> None:
    jobs = [ChartJob(builder=_nothing, args=(run,)), *chart_jobs(run, run.breakevens)[:1]]
    assert [d.slug for d in draw_jobs(jobs)] == ["cost_by_plan"]


def test_render_draws_each_format_once(monkeypatch: pytest.MonkeyPatch,
                                       run: RunResult) -> None:
    """One Agg pass and one SVG pass; no layout-only draw (savefig makes one for a figure that
    still has a layout engine, even the placeholder a frozen layout leaves)."""
    # TRANSITION: the first chart still drawn by matplotlib
    built = next(c for c in build_charts(run, run.breakevens) if isinstance(c.figure, Figure))
    draws = []
    real = Figure.draw

    def counting(self: Figure, renderer: Any) -> None:
        draws.append(type(renderer).__name__)
        real(self, renderer)

    monkeypatch.setattr(Figure, "draw", counting)
    png, svg = render(built.figure)
    assert png.startswith(b"\x89PNG")
    assert b"<svg" in svg
    assert draws == ["RendererAgg", "MixedModeRenderer"]
