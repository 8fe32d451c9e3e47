"""The terminal view of a run: plans ranked by mean cost, infeasible plans with their reasons,
and the recommendation with its savings against the baseline.

Money is written by :mod:`costsim.cli.numbers` (amounts to the cent, rates to 3 decimals),
shares to 0.1 %; a column no plan has a value for (no training phase: no cost per training
run) is left out.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from costsim.cli.common import format_table
from costsim.cli.numbers import percent, usd_amount, usd_rate

if TYPE_CHECKING:
    from costsim.sim.montecarlo import PlanResult
    from costsim.sim.run_result import RunResult

TABLE_WIDTH = 120

_Cell = Callable[["PlanResult"], str | None]


def _optional(value: float | None, render: Callable[[float], str]) -> str | None:
    return None if value is None else render(value)


def _slo(result: PlanResult) -> str | None:
    attainment = result.metrics.slo_attainment if result.metrics else None
    return _optional(attainment, percent)


# (header, cell, right-aligned); cost_usd is set for every feasible plan
_COLUMNS: tuple[tuple[str, _Cell, bool], ...] = (
    ("mean cost", lambda r: _optional(r.cost_usd.mean if r.cost_usd else None, usd_amount),
     True),
    ("P50", lambda r: _optional(r.cost_usd.p50 if r.cost_usd else None, usd_amount), True),
    ("P10", lambda r: _optional(r.cost_usd.p10 if r.cost_usd else None, usd_amount), True),
    ("P90", lambda r: _optional(r.cost_usd.p90 if r.cost_usd else None, usd_amount), True),
    ("$/training run", lambda r: _optional(r.cost_per_training_run_usd, usd_amount), True),
    ("$/1M tokens", lambda r: _optional(r.cost_per_million_tokens_usd, usd_rate), True),
    ("P(deadline missed)", lambda r: _optional(r.p_deadline_missed, percent), True),
    ("P(over budget)", lambda r: _optional(r.p_over_budget, percent), True),
    ("SLO attained", _slo, True),
)


def ranked(results: Sequence[PlanResult]) -> list[PlanResult]:
    """Feasible plans by mean cost (then name), infeasible ones left out."""
    feasible = [r for r in results if r.feasible and r.cost_usd is not None]
    return sorted(feasible, key=lambda r: (r.cost_usd.mean if r.cost_usd else 0.0, r.name))


def plan_table(run: RunResult) -> str:
    """The ranked table of the feasible plans (recommended '*', baseline 'b')."""
    rows_of = ranked(run.plans)
    columns = [(h, cell, right) for h, cell, right in _COLUMNS
               if any(cell(r) is not None for r in rows_of)]
    rows = []
    for rank, result in enumerate(rows_of, start=1):
        marks = ("*" if result.name == run.recommendation.plan else "") + (
            "b" if result.name == run.baseline else "")
        rows.append((rank, marks, result.name,
                     *("-" if (text := cell(result)) is None else text
                       for _, cell, _ in columns)))
    header = ("#", "", "plan", *(h for h, _, _ in columns))
    right = [0, *(i + 3 for i, (_, _, r) in enumerate(columns) if r)]
    return format_table(rows, header, right_align=right, max_width=TABLE_WIDTH, shrink=(2,))


def infeasible_lines(run: RunResult) -> list[str]:
    """One line per infeasible plan with its reasons."""
    return [f"infeasible: {r.name}: " + "; ".join(r.infeasible_reasons or ("no reason given",))
            for r in run.plans if not r.feasible]


def recommendation_lines(run: RunResult) -> list[str]:
    """The recommended plan and why, its savings against the baseline, and the plans passed
    over for risk."""
    rec = run.recommendation
    if rec.plan is None:
        lines = [f"No recommendation: {rec.reason}."]
    else:
        lines = [f"Recommended: {rec.plan} — {rec.reason}."]
        lines.append(savings_line(run, rec.plan))
    lines += [f"passed over: {name}: {why}" for name, why in rec.passed_over
              if not why.startswith("infeasible")]
    return lines


def savings_line(run: RunResult, plan: str) -> str:
    """``plan``'s mean cost against the baseline's: saving in $ and %."""
    if plan == run.baseline:
        return f"It is the baseline ({run.baseline})."
    chosen, base = run.plan(plan).cost_usd, run.plan(run.baseline).cost_usd
    if chosen is None or base is None:
        return f"The baseline ({run.baseline}) is infeasible: no saving to state."
    saving = base.mean - chosen.mean
    share = f" ({saving / base.mean:.1%})" if base.mean > 0 else ""
    return (f"Saves {usd_amount(saving)}{share} against the baseline {run.baseline} "
            f"({usd_amount(base.mean)} -> {usd_amount(chosen.mean)}, mean cost).")


def render_run(run: RunResult, report_dir: str | None) -> str:
    """The whole text output of ``costsim run``."""
    scenario = run.scenario
    head = (f"{scenario.name}: {len(run.plans)} plans, {run.replications:,} replications, "
            f"seed {run.seed} ({run.wall_s:.1f} s)")
    parts = [head, ""]
    if ranked(run.plans):
        parts += [plan_table(run), ""]
    parts += infeasible_lines(run)
    parts += recommendation_lines(run)
    parts.append("")
    parts.append(textwrap.fill(
        "Costs are the economic cost over the horizon (commitments in full, owned hardware net "
        "of its residual value), mean and P10/P50/P90 over the replications; '*' recommended "
        "(cheapest feasible plan within the risk limits), 'b' baseline. Per-phase ledger, "
        "monthly cash flow, prices with their sources: the report folder or --json.",
        width=TABLE_WIDTH))
    if report_dir is not None:
        parts.append(f"Report: {report_dir}/report.html")
    return "\n".join(parts)
