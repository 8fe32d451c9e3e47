"""Drawing charts into files, one chart at a time.

A chart job is a builder and its arguments (the run result, the break-even curves): the figure
is built when it is drawn, drawn into PNG and SVG bytes from one scene by
:func:`~costsim.report.plot.render.render`, and dropped, so one figure at a time is alive.
Drawing the jobs in a process pool was measured and left out: it was slower than drawing them
here, even on two idle cores (docs/report.md "How charts are drawn").

This module imports no drawing library at import time and no spreadsheet or page code: the
sweep's and optimize's processes that only write charts load just what drawing needs.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costsim.report.files import write_atomic

if TYPE_CHECKING:
    from costsim.report.plot.style import Chart


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
    from costsim.report.plot.render import render

    png, svg = render(chart.figure)
    return DrawnChart(slug=chart.slug, title=chart.title, png=png, svg=svg)


def draw_job(job: ChartJob) -> DrawnChart | None:
    """Build and draw one job's chart."""
    chart = job.builder(*job.args)
    return None if chart is None else draw(chart)


def draw_jobs(jobs: Sequence[ChartJob]) -> list[DrawnChart]:
    """The jobs' charts drawn, in the jobs' order (those with nothing to show left out)."""
    return [drawn for drawn in map(draw_job, jobs) if drawn is not None]


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
