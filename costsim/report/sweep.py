"""The sweep's JSON document (DESIGN §7 "sweep --json") and its report folder: the charts of
cost per variant and plan and of which swept input moves cost most (docs/sweep.md "Results").

Built from the sweep's result types only; the plotting library is imported when charts are
drawn, so ``--json`` stays light.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from costsim.domain.currency import USD, Currency
from costsim.sweep.results import SweepResult, SweepRow

REPORT_DIR = "report"


def _stats(row: SweepRow) -> dict[str, float] | None:
    cost = row.result.cost_usd
    if cost is None:
        return None
    return {"mean": cost.mean, "p10": cost.p10, "p50": cost.p50, "p90": cost.p90}


def sweep_row_json(row: SweepRow) -> dict[str, Any]:
    """One variant × plan row: the overrides, the plan, and ``run``'s figures for it."""
    result = row.result
    return {
        "variant": dict(row.overrides), "variant_index": row.variant, "variant_label": row.label,
        "variant_name": row.name,
        "plan": result.name, "feasible": result.feasible,
        "infeasible_reasons": list(result.infeasible_reasons),
        "within_limits": result.feasible and not row.limit_breaches,
        "limit_breaches": list(row.limit_breaches),
        "replications": result.replications,
        "cost_usd": _stats(row),
        "cash_usd": {"mean": result.cash_usd_mean}, "npv_usd": {"mean": result.npv_usd_mean},
        "p_over_budget": result.p_over_budget, "p_deadline_missed": result.p_deadline_missed,
        "slo_attainment": result.metrics.slo_attainment if result.metrics else None,
        "cost_per_training_run_usd": result.cost_per_training_run_usd,
        "cost_per_million_tokens_usd": result.cost_per_million_tokens_usd,
        "cost_per_million_output_tokens_usd": result.cost_per_million_output_tokens_usd,
    }


def sweep_json(result: SweepResult, *, results_path: str, provenance: Mapping[str, Any]
               ) -> dict[str, Any]:
    """The ``sweep --json`` document. ``provenance``: the scenario, its hash, the costsim
    version and price book the CLI knows (merged in as given)."""
    settings = result.settings
    return {
        **provenance,
        "engine": result.engine, "variants": result.variants, "tasks": result.tasks,
        "block_size": settings.block_size, "seed": settings.seed,
        "replications": settings.replications, "swept": list(result.swept_keys),
        "results_path": results_path,
        "rows": [sweep_row_json(row) for row in result.rows],
        "stats": {"wall_s": result.wall_s},
    }


def write_sweep_report(result: SweepResult, out_dir: Path,
                       currency: Currency = USD) -> tuple[Path, ...]:
    """Draw the sweep's charts into ``out_dir/report/charts`` (PNG and SVG), labelled in the
    scenario's display ``currency``; return the paths."""
    from costsim.report.chart_files import write_charts
    from costsim.report.charts_sweep import sweep_charts

    written: list[Path] = []
    (out_dir / REPORT_DIR).mkdir(exist_ok=True)
    write_charts(out_dir, sweep_charts(result, currency), written, f"{REPORT_DIR}/charts")
    return tuple(written)
