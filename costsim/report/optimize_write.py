"""The report folder of ``costsim optimize`` (docs/optimizer.md "Command"): ``optimize.json``,
``best-plan.yaml`` (the chosen plan as a ``plans:`` item to paste into the scenario),
``optimize.html`` and ``charts/*.png`` + ``*.svg``.

Every file is written atomically inside the existing ``out_dir`` (the CLI creates the folder
and owns the rules about existing ones, as for ``run``); the page is read from the JSON
document, so the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from costsim.domain.currency import currency_of
from costsim.optimize.result import OptimizeResult
from costsim.report.chart_files import RenderedChart, write_charts
from costsim.report.charts_optimize import optimize_charts
from costsim.report.files import json_bytes, write_atomic
from costsim.report.html import template_environment
from costsim.report.plot.style import Chart

TEMPLATE = "optimize.html.j2"
PLAN_FILE = "best-plan.yaml"


def write_optimize_report(result: OptimizeResult, document: Mapping[str, Any], out_dir: Path,
                          *, best_plan_yaml: str | None,
                          extra_charts: Sequence[Chart] = ()) -> tuple[Path, ...]:
    """Write the charts, ``best-plan.yaml`` (when a plan was chosen), ``optimize.json`` and
    ``optimize.html`` into ``out_dir``; return the paths written. ``extra_charts``: charts of
    steps the CLI runs beside the search (the budget split's), drawn after the search's."""
    written: list[Path] = []
    charts = [*optimize_charts(result), *extra_charts]
    rendered = write_charts(out_dir, charts, written)
    if best_plan_yaml is not None:
        scenario = " ".join(str(document["scenario"]).split())  # one comment line, always
        header = (f"# costsim optimize: the chosen plan for '{scenario}' "
                  f"(seed {document['seed']}, {document['replications']} replications).\n"
                  "# Paste it under the scenario's `plans:` key; `costsim run` gives it the "
                  "same cost at the same seed and replications.\n")
        written.append(write_atomic(out_dir, PLAN_FILE,
                                    (header + best_plan_yaml).encode("utf-8")))
    written.append(write_atomic(out_dir, "optimize.json", json_bytes(document)))
    page = optimize_html(document, rendered, best_plan_yaml)
    written.append(write_atomic(out_dir, "optimize.html", page.encode("utf-8")))
    return tuple(written)


def optimize_html(document: Mapping[str, Any], charts: list[RenderedChart],
                  plan_yaml: str | None) -> str:
    """The page: the answer and its explanation, the block to paste, the ranked plans, the
    charts (embedded, so the file needs nothing beside it)."""
    # optimize.json stays USD; the page shows the scenario's display currency
    return template_environment(currency_of(document), convert=True).get_template(
        TEMPLATE).render(
        d=document, charts=charts, plan_yaml=plan_yaml)
