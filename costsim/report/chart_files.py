"""Drawing charts into files: serially, or in a process pool beside the rest of the report.

A chart job is a module-level builder and its arguments (the run result, the break-even
curves): what a worker process needs to build the figure itself, since a built figure does not
pickle (its tick formatters are closures). Each job gives one figure, drawn into PNG and SVG
bytes by :func:`~costsim.report.chart_style.render`; the bytes are written in the jobs' order,
so the files and the page are the same however the charts were drawn.

Drawing in a pool pays on more than one core: the flagship's nine charts cost ~7 CPU s, about
three quarters of a run's fixed cost, and they are independent (docs/report.md "How charts are
drawn" has the measurements). With one worker they are drawn here, one after the other.

This module imports no plotting library: the sweep's and optimize's processes that only write
charts do not load the spreadsheet or page code with it.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costsim.report.files import write_atomic

if TYPE_CHECKING:
    from costsim.report.chart_style import Chart


@dataclass(frozen=True, slots=True)
class RenderedChart:
    """A chart as the page embeds it."""

    slug: str
    title: str
    svg: bytes

    @property
    def data_uri(self) -> str:
        """The SVG as a ``data:`` URI for an ``<img>``."""
        return "data:image/svg+xml;base64," + base64.b64encode(self.svg).decode("ascii")


@dataclass(frozen=True, slots=True)
class DrawnChart:
    """A chart's files: its slug and title, PNG and SVG bytes."""

    slug: str
    title: str
    png: bytes
    svg: bytes


@dataclass(frozen=True, slots=True)
class ChartJob:
    """``builder(*args)``: a chart, or ``None`` when the run has nothing for it to show."""

    builder: Callable[..., Chart | None]
    args: tuple[Any, ...]


def draw(chart: Chart) -> DrawnChart:
    """A built chart's PNG and SVG bytes."""
    from costsim.report.chart_style import render

    png, svg = render(chart.figure)
    return DrawnChart(slug=chart.slug, title=chart.title, png=png, svg=svg)


def draw_job(job: ChartJob) -> DrawnChart | None:
    """Build and draw one job's chart (in a worker process, or here)."""
    chart = job.builder(*job.args)
    return None if chart is None else draw(chart)


@contextmanager
def drawing(jobs: Sequence[ChartJob], workers: int) -> Iterator[Callable[[], list[DrawnChart]]]:
    """Start drawing ``jobs``; the context's value returns the drawn charts in the jobs' order
    (those with nothing to show left out).

    With ``workers`` > 1 the jobs go to a pool of at most that many processes at once, so the
    caller can write its other files while they draw; with 1 they are drawn when asked for.
    The pool is shut down when the context ends (Ctrl-C included: no worker is left behind).
    """
    if workers <= 1 or len(jobs) <= 1:
        yield lambda: [d for d in (draw_job(job) for job in jobs) if d is not None]
        return
    from costsim.sim.montecarlo import quiet_on_interrupt

    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)),
                               initializer=quiet_on_interrupt)
    try:
        futures: list[Future[DrawnChart | None]] = [pool.submit(draw_job, job) for job in jobs]
        yield lambda: [d for d in (f.result() for f in futures) if d is not None]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def write_drawn(out_dir: Path, drawn: Sequence[DrawnChart], written: list[Path],
                folder: str = "charts") -> list[RenderedChart]:
    """Write each drawn chart to ``folder/<slug>.png`` and ``.svg`` in ``out_dir`` (appending
    the paths to ``written``); return the SVGs for the HTML page."""
    rendered = []
    for chart in drawn:
        written.append(write_atomic(out_dir, f"{folder}/{chart.slug}.png", chart.png))
        written.append(write_atomic(out_dir, f"{folder}/{chart.slug}.svg", chart.svg))
        rendered.append(RenderedChart(slug=chart.slug, title=chart.title, svg=chart.svg))
    return rendered


def write_charts(out_dir: Path, charts: Sequence[Chart], written: list[Path],
                 folder: str = "charts") -> list[RenderedChart]:
    """Render each built chart to ``folder/<slug>.png`` and ``.svg`` in ``out_dir`` (appending
    the paths to ``written``); return the SVGs for the HTML page."""
    return write_drawn(out_dir, [draw(chart) for chart in charts], written, folder)
