"""A scenario in another currency end to end (issue 21 item 5, DESIGN §5/§13): the JSON stays
in USD and names ``currency`` and ``fx_rate_per_usd``; ledger.csv, monthly.csv, report.xlsx,
report.html and the text are in the scenario's currency — each ledger line the USD line × the
rate to the cent — with money columns named with its code; bad currencies and rates exit 2."""

from __future__ import annotations

import csv
import io
import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from openpyxl import load_workbook

from .conftest import Cli

pytestmark = pytest.mark.usefixtures("no_charts")

SMALL = Path(__file__).parent / "data" / "small-project.yaml"
RATE = "0.9215"  # EUR per USD; four digits, so most products need rounding
RUN = ("--replications", "2", "--workers", "1", "--seed", "3")


def _scenario(tmp_path: Path, extra: str, name: str = "eur.yaml") -> Path:
    path = tmp_path / name
    path.write_text(SMALL.read_text() + extra)
    return path


def _eur(usd: float) -> float:
    """The oracle: the USD line × the rate in exact decimal, to the cent, half away from 0."""
    exact = Decimal(str(usd)) * Decimal(RATE)
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The small project run in USD and in EUR on the same futures: the two report folders
    and the EUR run's text."""
    from costsim.cli.main import main

    tmp = tmp_path_factory.mktemp("currency")
    patch = pytest.MonkeyPatch()
    patch.setattr("costsim.report.write.chart_jobs", lambda *args, **kwargs: [])
    try:
        assert main(["run", str(SMALL), *RUN, "--out", str(tmp / "usd")]) == 0
        eur = _scenario(tmp, f"currency: EUR\nfx_rate_per_usd: {RATE}\n")
        buffer = io.StringIO()
        patch.setattr("sys.stdout", buffer)
        assert main(["run", str(eur), *RUN, "--out", str(tmp / "eur")]) == 0
    finally:
        patch.undo()
    return tmp / "usd", tmp / "eur", buffer.getvalue()


def _csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_json_stays_in_usd_and_names_the_currency(runs: tuple[Path, Path, str]) -> None:
    usd_dir, eur_dir, _ = runs
    usd = json.loads((usd_dir / "summary.json").read_text())
    eur = json.loads((eur_dir / "summary.json").read_text())
    assert "currency" not in usd
    assert "fx_rate_per_usd" not in usd
    assert eur["currency"] == "EUR"
    assert eur["fx_rate_per_usd"] == float(RATE)
    for old, new in zip(usd["plans"], eur["plans"], strict=True):
        assert new["ledger"] == old["ledger"]  # the same USD amounts, key for key
        assert new["cost_usd"] == old["cost_usd"]
        assert new["monthly"] == old["monthly"]
    assert eur["inputs"]["currency"] == {"code": "EUR", "fx_rate_per_usd": float(RATE)}


def test_the_eur_ledger_is_the_usd_ledger_times_the_rate_to_the_cent_per_line(
        runs: tuple[Path, Path, str]) -> None:
    usd_dir, eur_dir, _ = runs
    usd_rows, eur_rows = _csv(usd_dir / "ledger.csv"), _csv(eur_dir / "ledger.csv")
    assert "amount_eur" in eur_rows[0]
    assert "amount_usd" not in eur_rows[0]
    assert "rate_eur_per_gpu_hour" in eur_rows[0]
    assert len(eur_rows) == len(usd_rows) > 5
    for old, new in zip(usd_rows, eur_rows, strict=True):
        assert new["amount_eur"] == f"{_eur(float(old['amount_usd'])):.2f}"
        assert float(new["rate_eur_per_gpu_hour"]) == pytest.approx(
            float(old["rate_usd_per_gpu_hour"]) * float(RATE), rel=1e-9, abs=1e-9)
    # the plan's economic cost is the sum of its converted lines (summary sheet and HTML)
    summary = json.loads((usd_dir / "summary.json").read_text())
    book = load_workbook(eur_dir / "report.xlsx")
    plans = book["summary"]
    header = [cell.value for cell in plans[1]]
    assert "Cost mean (EUR)" in header
    assert "Cost mean (USD)" not in header
    means = {row[0]: row[header.index("Cost mean (EUR)")]
             for row in plans.iter_rows(min_row=2, values_only=True)}
    for plan in summary["plans"]:
        if plan["feasible"]:
            lines = sum(round(_eur(line["amount_usd"]) * 100) for line in plan["ledger"])
            assert means[plan["name"]] == pytest.approx(lines / 100, abs=1e-9)


def test_the_workbook_ledger_matches_the_csv_in_eur(runs: tuple[Path, Path, str]) -> None:
    _, eur_dir, _ = runs
    sheet = load_workbook(eur_dir / "report.xlsx")["ledger"]
    header = [cell.value for cell in sheet[1]]
    assert header[-2:] == ["Rate (EUR per GPU-hour)", "Amount (EUR)"]
    rows = list(sheet.iter_rows(min_row=2))
    expected = _csv(eur_dir / "ledger.csv")
    assert len(rows) == len(expected)
    for row, line in zip(rows, expected, strict=True):
        assert f"{row[-1].value:.2f}" == line["amount_eur"]
        assert row[-1].number_format == "#,##0.00"


def test_months_add_up_in_eur(runs: tuple[Path, Path, str]) -> None:
    usd_dir, eur_dir, _ = runs
    for old, new in zip(_csv(usd_dir / "monthly.csv"), _csv(eur_dir / "monthly.csv"),
                        strict=True):
        assert new["capex_eur"] == f"{_eur(float(old['capex_usd'])):.2f}"
        assert new["opex_eur"] == f"{_eur(float(old['opex_usd'])):.2f}"
        assert Decimal(new["cash_eur"]) == Decimal(new["capex_eur"]) + Decimal(new["opex_eur"])


def test_text_and_html_show_euros(runs: tuple[Path, Path, str]) -> None:
    _, eur_dir, text = runs
    assert "€" in text
    assert "$" not in text.split("Costs:")[0]
    assert f"Amounts in EUR at {RATE} per USD" in " ".join(text.split())
    html = (eur_dir / "report.html").read_text()
    assert "Amounts in EUR at 0.9215 EUR per USD" in html
    assert "€" in html


def test_compare_and_diff_json_name_the_currency(cli: Cli, tmp_path: Path,
                                                  runs: tuple[Path, Path, str]) -> None:
    usd_dir, eur_dir, _ = runs
    eur = _scenario(tmp_path, f"currency: EUR\nfx_rate_per_usd: {RATE}\n")
    code, out, err = cli("compare", str(eur), *RUN, "--json")
    assert code == 0, err
    document = json.loads(out)
    assert (document["currency"], document["fx_rate_per_usd"]) == ("EUR", float(RATE))
    assert "baseline_usd" in document["plans"][1]["by_phase_category"][0]
    code, text, err = cli("compare", str(eur), *RUN)
    assert code == 0, err
    assert text.startswith("Baseline: all-on-demand (mean cost €")
    code, out, err = cli("diff", str(usd_dir / "summary.json"), str(eur_dir / "summary.json"),
                         "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["currency"] == "EUR"
    assert {"path": "currency", "old": None, "new": "EUR"} in document["inputs_changed"]
    code, text, err = cli("diff", str(usd_dir / "summary.json"), str(eur_dir / "summary.json"))
    assert code == 0, err
    # both runs converted at the later run's rate: the same futures, no change in any row
    assert "all-on-demand: €" in text
    assert "(±€0.00, ±0.0%)" in text


@pytest.mark.parametrize(("extra", "needle"), [
    ("currency: EUR\n", "fx_rate_per_usd: is required with currency EUR"),
    ("currency: EUR\nfx_rate_per_usd: 0\n", "fx_rate_per_usd: must be greater than 0"),
    ("currency: EUR\nfx_rate_per_usd: -0.9\n", "fx_rate_per_usd: must be greater than 0"),
    ("currency: EUR\nfx_rate_per_usd: .nan\n", "fx_rate_per_usd: must be a finite number"),
    ("currency: EUR\nfx_rate_per_usd: .inf\n", "fx_rate_per_usd: must be a finite number"),
    ("currency: EUR\nfx_rate_per_usd: lots\n", "fx_rate_per_usd: expected a number"),
    ("currency: XYZ\nfx_rate_per_usd: 0.9\n", "currency: must be an ISO 4217 currency code"),
    ("currency: EURO\nfx_rate_per_usd: 0.9\n", "currency: "),
    ("fx_rate_per_usd: 0.9\n", "fx_rate_per_usd: goes with currency"),
    ("currency: USD\nfx_rate_per_usd: 0.9\n", "fx_rate_per_usd: USD's rate per USD is 1"),
])
def test_a_bad_currency_or_rate_exits_2_with_one_line(cli: Cli, tmp_path: Path, extra: str,
                                                      needle: str) -> None:
    path = _scenario(tmp_path, extra)
    code, out, err = cli("run", str(path), *RUN, "--out", str(tmp_path / "r"))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err
    assert str(path) in err
    assert not (tmp_path / "r").exists()


PRICE_HEADER = ("cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"
                "effective_date,currency\n")


def test_a_price_file_row_in_another_currency_exits_2(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "prices.csv").write_text(
        PRICE_HEADER + "aws,us-east-1,quoted-l4,L4,1,0.80,2026-11-01,GBP\n")
    path = _scenario(tmp_path, f"currency: EUR\nfx_rate_per_usd: {RATE}\n")
    path.write_text(path.read_text().replace("data: {", "prices: {price_file: prices.csv}\n"
                                                        "data: {"))
    code, _out, err = cli("run", str(path), *RUN, "--out", str(tmp_path / "r"))
    assert code == 2, err
    assert err.count("\n") == 1
    assert "prices.csv:2:8: currency: must be USD or the scenario's currency EUR" in err
    assert "'GBP'" in err
