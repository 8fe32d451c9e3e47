"""Every chart of the report, in the order the report shows them (docs/report.md).

A chart with nothing to show for this run (no training phase, no reservation, no serving phase,
no break-even asked for) is left out rather than drawn empty; the HTML report says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from costsim.domain.breakeven import BreakEven
from costsim.report.budget_split import spend_split_chart
from costsim.report.chart_style import Chart
from costsim.report.charts_capacity import break_even, reserved_utilization, serving_fleet
from costsim.report.charts_cost import (
    cost_by_phase_category,
    cost_by_plan,
    cost_per_training_run,
    cumulative_cost,
    monthly_cash_flow,
)
from costsim.sim.run_result import RunResult

# (slug, what the chart would show): the report lists the ones this run has no data for.
CHART_SUBJECTS: tuple[tuple[str, str], ...] = (
    ("cost_by_plan", "cost of each plan"),
    ("cost_per_training_run", "cost per training run (the scenario has no training phase)"),
    ("cumulative_cost", "cumulative cost over the calendar"),
    ("monthly_cash_flow", "monthly cash flow"),
    ("cost_by_phase_category", "cost by phase and category"),
    ("reserved_utilization", "reserved utilization (no plan reserves capacity)"),
    ("break_even", "break-even of reserving and of buying (none was computed for this run)"),
    ("serving_fleet", "serving fleet size (no plan serves)"),
    ("spend_split", "spend by part group (no feasible plan)"),
)


def build_charts(run: RunResult, breakevens: Sequence[BreakEven] = ()) -> list[Chart]:
    """The charts this run has data for."""
    built = (cost_by_plan(run), cost_per_training_run(run), cumulative_cost(run),
             monthly_cash_flow(run), cost_by_phase_category(run), reserved_utilization(run),
             break_even(breakevens, run.scenario.currency), serving_fleet(run),
             spend_split_chart(run))
    return [chart for chart in built if chart is not None]


def missing_charts(charts: Sequence[Chart]) -> list[str]:
    """What the charts left out would have shown (for the report's note)."""
    drawn = {chart.slug for chart in charts}
    return [subject for slug, subject in CHART_SUBJECTS if slug not in drawn]
