"""Every chart of the report, in the order the report shows them (docs/report.md).

A chart with nothing to show for this run (no training phase, no reservation, no serving phase,
no break-even asked for) is left out rather than drawn empty; the HTML report says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from costsim.domain.breakeven import BreakEven
from costsim.report.budget_split import spend_split_chart
from costsim.report.chart_files import ChartJob, DrawnChart
from costsim.report.charts_capacity import break_even, reserved_utilization, serving_fleet
from costsim.report.charts_cost import (
    cost_by_phase_category,
    cost_by_plan,
    cost_per_training_run,
    cumulative_cost,
    monthly_cash_flow,
)
from costsim.report.plot.style import Chart
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


def chart_jobs(run: RunResult, breakevens: Sequence[BreakEven] = ()) -> list[ChartJob]:
    """Every chart of the report as a job (builder and arguments), in the report's order; a
    job whose run has nothing to show builds ``None``."""
    curves = tuple(breakevens)
    return [ChartJob(builder=cost_by_plan, args=(run,)),
            ChartJob(builder=cost_per_training_run, args=(run,)),
            ChartJob(builder=cumulative_cost, args=(run,)),
            ChartJob(builder=monthly_cash_flow, args=(run,)),
            ChartJob(builder=cost_by_phase_category, args=(run,)),
            ChartJob(builder=reserved_utilization, args=(run,)),
            ChartJob(builder=break_even, args=(curves, run.scenario.currency)),
            ChartJob(builder=serving_fleet, args=(run,)),
            ChartJob(builder=spend_split_chart, args=(run,))]


def build_charts(run: RunResult, breakevens: Sequence[BreakEven] = ()) -> list[Chart]:
    """The charts this run has data for."""
    built = (job.builder(*job.args) for job in chart_jobs(run, breakevens))
    return [chart for chart in built if chart is not None]


def missing_charts(charts: Sequence[Chart | DrawnChart]) -> list[str]:
    """What the charts left out would have shown (for the report's note)."""
    drawn = {chart.slug for chart in charts}
    return [subject for slug, subject in CHART_SUBJECTS if slug not in drawn]
