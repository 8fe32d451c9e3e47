"""Quoted reservations: read from a price file (or a scenario), they win over the table's
estimated discount for the offerings they name, and say they are quotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.catalog.price_file import load_price_file, load_price_file_entries
from costsim.catalog.prices import PriceBook, find_offering
from costsim.domain.pricing import (
    Payment,
    PriceFlag,
    PriceOverrides,
    PurchaseOption,
    QuotedReservation,
)
from costsim.errors import InputError
from costsim.units import HOURS_PER_YEAR

R1 = PurchaseOption.RESERVED_1Y_NO_UPFRONT
HEADER = ("cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"
          "effective_date,option,term,payment,upfront_usd,recurring_usd_per_hour,source\n")


def _write(tmp_path: Path, rows: str, header: str = HEADER) -> Path:
    path = tmp_path / "quotes.csv"
    path.write_text(header + rows)
    return path


def _quote(**changes: object) -> QuotedReservation:
    fields: dict[str, object] = {"cloud": "aws", "gpu": "L4", "term_years": 1,
                                     "payment": Payment.NO_UPFRONT, "upfront_usd": 0.0,
                                     "recurring_usd_per_hour": 0.45, "source": "test quote",
                                     "effective_date": "2026-11-20"}
    fields.update(changes)
    return QuotedReservation(**fields)  # type: ignore[arg-type]


def test_quote_rows_become_quoted_reservations(tmp_path: Path) -> None:
    path = _write(tmp_path, "aws,us-east-1,g6.xlarge,L4,,,2026-11-20,reserved,1y,,,0.45,\n"
                            "aws,,,nvidia l4,,,2026-11-21,reserved-3y-all-upfront,,,9000,,"
                            "AWS quote #7\n")
    offerings, quotes = load_price_file_entries(path)
    assert offerings == ()
    first, second = quotes
    assert (first.option, first.region, first.instance_type) == (R1, "us-east-1", "g6.xlarge")
    assert first.recurring_usd_per_hour == 0.45
    assert first.source == "quote in quotes.csv line 2"
    assert (second.option, second.gpu, second.region) == (
        PurchaseOption.RESERVED_3Y_ALL_UPFRONT, "L4", None)
    assert (second.upfront_usd, second.source) == (9000, "AWS quote #7")


def test_a_row_with_a_price_and_a_quote_adds_both(tmp_path: Path) -> None:
    path = _write(tmp_path, "colo,home,box,A100-40GB,2,2.1,2026-11-01,reserved,3y,"
                            "all-upfront,30000,,\n")
    (offering,), (quote,) = load_price_file_entries(path)
    assert (offering.cloud, offering.on_demand_usd_per_hour) == ("colo", 2.1)
    assert quote.option is PurchaseOption.RESERVED_3Y_ALL_UPFRONT
    assert load_price_file(path) == (offering,)


@pytest.mark.parametrize(("row", "message"), [
    ("aws,,,L4,,,2026-11-20,reserved,,,,0.45,", "term: option 'reserved' needs term 1y or 3y"),
    ("aws,,,L4,,,2026-11-20,reserved,1y,monthly,,0.45,", "payment: must be one of"),
    ("aws,,,L4,,,2026-11-20,on-demand,,,,0.45,", "option: a quote row takes 'reserved'"),
    ("aws,,,L4,,,2026-11-20,reserved-1y-no-upfront,1y,,,0.45,", "already says its term"),
    ("aws,,,L4,,,2026-11-20,reserved,1y,,,,", "not a price"),
    ("aws,,,L4,,,2026-11-20,reserved,1y,,,-1,", "must be a number >= 0"),
    ("aws,us-east-1,g6.xlarge,L4,1,0.8,2026-11-20,,1y,,,0.45,", "term: goes with option"),
])
def test_bad_quote_rows_name_line_and_column(tmp_path: Path, row: str, message: str) -> None:
    with pytest.raises(InputError, match=r"quotes\.csv:2:\d+: .*" + message.replace("(", r"\(")):
        load_price_file_entries(_write(tmp_path, row + "\n"))


def test_old_files_without_quote_columns_stay_valid(tmp_path: Path) -> None:
    header = "cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"\
             "effective_date\n"
    path = _write(tmp_path, "coreweave,us-east-04,gd-8xh100,H100,8,49.24,2026-06-01\n", header)
    offerings, quotes = load_price_file_entries(path)
    assert len(offerings) == 1
    assert quotes == ()


def test_a_quote_wins_over_the_table_estimate_and_is_flagged() -> None:
    shipped = PriceBook()
    offering = find_offering("aws", "us-east-1", "g6.xlarge", book=shipped)
    estimate = shipped.quote(offering, R1)
    assert estimate is not None
    assert estimate.estimate
    book = PriceBook(PriceOverrides(quoted_reservations=(_quote(),)))
    quoted = book.quote(offering, R1)
    assert quoted is not None
    assert quoted.price_usd_per_hour == pytest.approx(0.45)
    assert PriceFlag.QUOTED_RESERVATION in quoted.flags
    assert not quoted.estimate
    assert quoted.source == "quote: test quote"
    assert quoted.effective_date == "2026-11-20"
    terms = quoted.reservation
    assert terms is not None
    assert terms.total_obligation_usd == pytest.approx(0.45 * HOURS_PER_YEAR)
    assert terms.break_even_utilization == pytest.approx(0.45 / offering.on_demand_usd_per_hour)
    # other options and other instance sizes keep the table's rates
    assert book.quote(offering, PurchaseOption.RESERVED_3Y_NO_UPFRONT) == shipped.quote(
        offering, PurchaseOption.RESERVED_3Y_NO_UPFRONT)


def test_the_most_specific_quote_wins() -> None:
    book = PriceBook(PriceOverrides(quoted_reservations=(
        _quote(recurring_usd_per_hour=0.5),
        _quote(recurring_usd_per_hour=0.4, instance_type="g6.xlarge"),
        _quote(recurring_usd_per_hour=0.45, region="us-east-1"),
    )))
    xlarge = find_offering("aws", "us-east-1", "g6.xlarge", book=book)
    twoxl = find_offering("aws", "us-east-1", "g6.2xlarge", book=book)
    assert book.rate_usd_per_hour(xlarge, R1) == pytest.approx(0.4)
    assert book.rate_usd_per_hour(twoxl, R1) == pytest.approx(0.45)


def test_a_quote_makes_a_contract_only_reservation_a_quoted_price() -> None:
    """Tier-2 clouds sell commitments by contract: the quote replaces costsim's generic
    discount, and the reserved-by-contract estimate flag goes away."""
    shipped = PriceBook()
    offering = next(o for o in shipped.offerings(gpu="H100", cloud="hyperstack")
                    if o.gpus_per_instance == 8)
    before = shipped.quote(offering, R1)
    assert before is not None
    assert PriceFlag.RESERVED_BY_CONTRACT in before.flags
    book = PriceBook(PriceOverrides(quoted_reservations=(_quote(
        cloud="hyperstack", gpu="H100", recurring_usd_per_hour=11.0),)))
    after = book.quote(offering, R1)
    assert after is not None
    assert after.price_usd_per_hour == pytest.approx(11.0)
    assert PriceFlag.RESERVED_BY_CONTRACT not in after.flags
    selection = book.cheapest_offering("H100", 8, R1, cloud="hyperstack")
    assert selection.quote.price_usd_per_hour == pytest.approx(11.0)


def test_prices_command_shows_the_quoted_rate(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from costsim.cli.main import main

    path = _write(tmp_path, "aws,us-east-1,g6.xlarge,L4,,,2026-11-20,reserved,1y,,,0.45,\n")
    code = main(["prices", "--gpu", "L4", "--cloud", "aws", "--region", "us-east-1",
                 "--price-file", str(path)])
    out = capsys.readouterr().out
    assert code == 0
    row = next(line for line in out.splitlines() if " g6.xlarge " in line)
    assert "0.450q" in row
    assert "'q' = your quoted reservation" in out
