"""What each phase's performance figure rests on, as the report says it: summary.json's
``performance_basis``, the page's plain sentences (a prior's out-of-sample range, a measurement
without one) and the workbook's assumptions sheet."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from openpyxl import load_workbook

from costsim.catalog.perf_defaults import allin_loss_defaults
from costsim.cli.scenario_names import load_scenario_file
from costsim.report import summary_json
from costsim.report.basis_text import basis_rows, basis_sentence
from costsim.report.compare import compare_plans
from costsim.report.html import report_html
from costsim.sim.performance_basis import Z90
from costsim.sim.run_result import RunResult, simulate_scenario

SCENARIO = """\
name: measured serving, predicted training
start: 2027-01-01
horizon_months: 1
models:
  chat: {preset: llama-3-8b}
measurements:
  serving:
    - {path: bench.csv, gpu: NVIDIA H100 80GB HBM3}
phases:
  - {name: train, kind: training, model: chat, tokens: 1e9}
  - {name: serve, kind: serving, duration_months: 1, model: chat,
     load: {peak_requests_per_s: 20, diurnal: false},
     requests: {prompt_tokens: 1000, output_tokens: 200}}
plans:
  - name: h100
    use: {train: {gpu: H100, count: 8}, serve: {gpu: H100}}
"""


def _run(tmp_path: Path) -> RunResult:
    (tmp_path / "bench.csv").write_text(
        "model,prompt_tokens,output_tokens,request_rate,requests_per_s,source\n"
        "llama-3-8b,1000,200,inf,8,offline run\n")
    (tmp_path / "s.yaml").write_text(SCENARIO)
    loaded = load_scenario_file(tmp_path / "s.yaml")
    return simulate_scenario(loaded.scenario, seed=0, replications=2, inputs=loaded.resolved)


def _html(summary: dict[str, Any]) -> str:
    comparison = compare_plans(summary["plans"], summary["baseline"],
                               [p["name"] for p in summary["inputs"]["phases"]])
    return report_html(summary, comparison, [], [])


def _range(sigma: float) -> str:
    return f"between {math.exp(-Z90 * sigma):.2f}× and {math.exp(Z90 * sigma):.2f}×"


def test_the_summary_and_page_say_prior_for_a_predicted_phase_and_not_for_a_measured_one(
        tmp_path: Path) -> None:
    summary = summary_json(_run(tmp_path), generated_at="")
    bases = {b["phase"]: b for b in summary["plans"][0]["performance_basis"]}
    sigma = allin_loss_defaults().training_sigma
    assert bases["train"] == {
        "phase": "train", "kind": "training", "basis": "prior", "sigma": round(sigma, 4),
        "p10_factor": round(math.exp(-Z90 * sigma), 4),
        "p90_factor": round(math.exp(Z90 * sigma), 4), "predicted_share": 1.0,
        "error": "prior", "source": bases["train"]["source"]}
    assert (bases["serve"]["basis"], bases["serve"]["sigma"]) == ("measured", 0.0)
    html = _html(summary)
    assert "What the performance figures rest on" in html
    assert ("Training throughput of phase &#39;train&#39; is costsim&#39;s estimate from its "
            "performance model") in html
    assert _range(sigma) in html
    assert "To narrow it, measure a short run and give it to costsim" in html
    assert "Measured training runs" in html  # where to read how to measure it
    assert "Serving capacity of phase &#39;serve&#39; is the team&#39;s measurement" in html
    assert "Serving capacity of phase &#39;serve&#39; is costsim&#39;s estimate" not in html
    assert _range(allin_loss_defaults().serving_sigma) not in html


def test_the_lifecycle_pages_serving_prior_states_its_out_of_sample_range(
        report_dir: Path, summary: dict[str, Any]) -> None:
    html = (report_dir / "report.html").read_text()
    assert ("Serving capacity of phase &#39;serve&#39; is costsim&#39;s estimate from published "
            "benchmarks") in html
    assert "between 0.45× and 2.23× the estimate about 8 times in 10" in html
    book = load_workbook(report_dir / "report.xlsx")
    cells = list(book["assumptions"].iter_rows(values_only=True))
    assert "What the performance figures rest on" in [row[0] for row in cells]
    rows = [row for row in cells if row[3] in ("prior", "measured", "mixed", "stated")]
    feasible = [p for p in summary["plans"] if p["feasible"]]
    assert len(rows) == sum(len(p["performance_basis"]) for p in feasible) > 0
    assert {row[0] for row in rows} == {p["name"] for p in feasible}


def test_infeasible_plans_have_an_empty_basis_and_identical_plans_share_a_row(
        summary: dict[str, Any]) -> None:
    for plan in summary["plans"]:
        assert "performance_basis" in plan
        assert plan["feasible"] or plan["performance_basis"] == []
    rows = basis_rows(summary["plans"])
    serve = [row for row in rows if row["phase"] == "serve"]
    # every feasible plan serves on predicted L4 capacity alike: one row naming them all
    assert len(serve) == 1
    assert serve[0]["plans"] == [p["name"] for p in summary["plans"]
                                 if any(b["phase"] == "serve"
                                        for b in p["performance_basis"])]


BASE = {"phase": "serve", "kind": "serving", "sigma": 0.1, "p10_factor": 0.8797,
        "p90_factor": 1.1367, "source": "x"}


def test_stated_and_mixed_sentences() -> None:
    stated = basis_sentence({**BASE, "basis": "stated", "error": "stated",
                             "predicted_share": 1.0})
    assert "uncertainty.throughput_error" in stated
    assert "between 0.88× and 1.14×" in stated
    assert "costsim's estimate from published benchmarks" not in stated
    mixed = basis_sentence({**BASE, "basis": "mixed", "error": "prior",
                            "predicted_share": 0.375})
    assert "part of its work" in mixed
    assert "38% of the work" in mixed
    assert "Measure the rest to narrow the range" in mixed
    experiments = basis_sentence({**BASE, "kind": "experiments", "phase": "research",
                                  "basis": "prior", "error": "prior", "predicted_share": 1.0})
    assert "only costsim's in-sample validation error" in experiments
    assert "between 0.88× and 1.14×" in experiments
    assert "may be wider" in experiments
    measured = basis_sentence({**BASE, "basis": "measured", "error": "none", "sigma": 0.0,
                               "p10_factor": 1.0, "p90_factor": 1.0, "predicted_share": 0.0})
    assert "draws no model error" in measured
    assert "8 times in 10" not in measured
