"""The sweep's JSON rows and charts, from the sweep's result types."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.report.sweep import sweep_json, write_sweep_report
from tests.sweep.results_builders import factorial, sweep_of


def test_the_json_has_design_7s_keys_and_one_row_per_variant_and_plan() -> None:
    document = sweep_json(factorial(), results_path="out/results.parquet",
                          provenance={"scenario": "s.yaml"})
    assert {"engine", "variants", "tasks", "results_path", "rows", "scenario"} <= set(document)
    assert document["engine"] == "dask"
    row = document["rows"][1]
    assert row["variant"] == {"a": 1, "b": "y"}
    assert row["plan"] == "p"
    assert row["cost_usd"] == {"mean": 110.0, "p10": 110.0, "p50": 110.0, "p90": 110.0}
    assert {"p_over_budget", "p_deadline_missed", "slo_attainment",
            "cost_per_training_run_usd", "cost_per_million_tokens_usd"} <= set(row)


@pytest.mark.slow
def test_the_report_draws_the_distribution_and_the_tornado(tmp_path: Path) -> None:
    written = write_sweep_report(factorial(), tmp_path)
    assert sorted(p.name for p in written) == [
        "sweep_cost_distribution.png", "sweep_cost_distribution.svg", "sweep_tornado.png",
        "sweep_tornado.svg"]
    assert all(p.stat().st_size > 1000 for p in written)


def test_a_sweep_of_one_variant_has_no_tornado(tmp_path: Path) -> None:
    from costsim.report.charts_sweep import sweep_charts

    one = sweep_of(list(factorial().rows[:1]))
    assert [chart.slug for chart in sweep_charts(one)] == ["sweep_cost_distribution"]
