"""The break-even chart on costsim's own drawing: a panel per server, its curves, crossings and
legend (the reserved-utilization and serving-fleet charts are tested in test_charts.py)."""

from __future__ import annotations

from costsim.report.charts_capacity import TERM_DASHES, Y_LIMIT_FACTOR, break_even
from costsim.report.plot.figure import Line, Place, Points
from costsim.report.plot.layout import place
from costsim.sim.run_result import RunResult
from tests.report.chart_checks import assert_inside


def test_break_even_draws_a_panel_per_server_with_its_crossings_and_a_legend_below(
        run: RunResult) -> None:
    assert run.breakevens
    assert break_even(()) is None
    chart = break_even(run.breakevens)
    assert chart is not None
    assert chart.figure.title == "Break-even of reserving and of buying vs utilization"
    assert len(chart.figure.panels) == len(run.breakevens)
    for panel, result in zip(chart.figure.panels, run.breakevens, strict=True):
        assert panel.title.startswith(f"Owning {result.server.name} (")
        assert panel.legend is not None
        assert panel.legend.place is Place.BELOW
        assert not panel.legend.frame
        labels = [e.label for e in panel.legend.entries]
        assert labels[0].startswith(f"own {result.server.name}")
        flat = [r for r in result.rentals if not r.committed]
        assert len(labels) >= 1 + len(flat)
        lines = [m for m in panel.marks if isinstance(m, Line)]
        dashed = {m.dash for m in lines if m.dash}
        assert dashed <= set(TERM_DASHES.values())  # reserved terms: "--" and "-."
        crossings = [m for m in panel.marks if isinstance(m, Points)]
        owning = [r for r in flat if result.owning_break_even_utilization(r) is not None]
        assert len(crossings) >= len(owning)
        ceiling = max([r.price_usd_per_gpu_hour for r in flat]
                      + [min(lines[0].ys)]) * Y_LIMIT_FACTOR
        assert (panel.y.low, panel.y.high) == (0.0, ceiling)
    placed = place(chart.figure).panels[0]
    assert "100%" in placed.x.labels
    assert all(label.startswith("$") for label in placed.y.labels)
    assert_inside(chart)
