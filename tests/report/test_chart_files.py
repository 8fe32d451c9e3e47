"""Charts drawn from jobs (costsim/report/chart_files.py): one figure built per job, in the
report's order, a job with nothing to show left out; each chart laid out once into one scene that
the PNG and the SVG are written from."""

from __future__ import annotations

import pytest

from costsim.report.chart_files import ChartJob, draw, draw_jobs
from costsim.report.charts import CHART_SUBJECTS, build_charts, chart_jobs
from costsim.report.plot.figure import Figure
from costsim.report.plot.png import to_png
from costsim.report.plot.scene import Scene
from costsim.report.plot.svg import to_svg
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


def test_both_files_come_from_one_scene(monkeypatch: pytest.MonkeyPatch,
                                        run: RunResult) -> None:
    """Each chart is laid out and drawn into one scene; the PNG and the SVG are written from
    it (so they show the same picture), and drawing it again gives the same bytes."""
    from costsim.report.plot import render as render_module

    scenes: list[Scene] = []
    real = render_module.scene_of

    def counting(figure: Figure) -> Scene:
        scenes.append(real(figure))
        return scenes[-1]

    monkeypatch.setattr(render_module, "scene_of", counting)
    built = build_charts(run, run.breakevens)[0]
    png, svg = render_module.render(built.figure)
    assert len(scenes) == 1
    assert (png, svg) == (to_png(scenes[0]), to_svg(scenes[0]))
    assert png.startswith(b"\x89PNG")
    assert b"<svg" in svg
