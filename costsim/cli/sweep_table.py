"""The terminal view of a sweep: one row per variant × plan with ``run``'s columns, and where
the results, sweep.json and charts were written."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from costsim.cli.common import format_table
from costsim.cli.run_table import COLUMN_LEGEND, PLAN_COLUMNS, TABLE_WIDTH, currency_text
from costsim.domain.currency import USD, Currency

if TYPE_CHECKING:
    from costsim.sweep.results import SweepResult


def render_sweep(result: SweepResult, out_dir: str, table_name: str,
                 currency: Currency = USD) -> str:
    """The whole text output of ``costsim sweep``, its money in the scenario's display
    ``currency`` (the results file and sweep.json keep USD)."""
    settings = result.settings
    plans = len({row.result.name for row in result.rows})
    head = (f"{result.variants} variants × {plans} plans, {settings.replications:,} "
            f"replications, "
            f"seed {settings.seed}: {result.tasks} tasks on {result.engine} "
            f"({result.workers} workers, {result.wall_s:.1f} s)")
    feasible = [r for r in result.rows if r.result.feasible]
    columns = [(h, cell) for h, cell in PLAN_COLUMNS
               if any(cell(r.result, currency) is not None for r in feasible)]
    rows = [(row.label, row.result.name,
             *("-" if (text := cell(row.result, currency)) is None else text
               for _, cell in columns))
            for row in feasible]
    parts = [head, ""]
    if rows:
        parts.append(format_table(rows, ("variant", "plan",
                                         *(currency_text(h, currency) for h, _ in columns)),
                                  right_align=range(2, 2 + len(columns))))
        parts.append("")
    parts += [f"infeasible: {row.label}: {row.result.name}: "
              + "; ".join(row.result.infeasible_reasons or ("no reason given",))
              for row in result.rows if not row.result.feasible]
    parts += [textwrap.fill(currency_text(COLUMN_LEGEND, currency), width=TABLE_WIDTH), "",
              f"Results: {out_dir}/{table_name}, {out_dir}/sweep.json; charts: "
              f"{out_dir}/report/charts/"]
    return "\n".join(parts)
