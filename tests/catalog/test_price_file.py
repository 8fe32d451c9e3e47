"""Custom price files: good rows load; malformed ones name file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.catalog.price_file import load_price_file
from costsim.domain.pricing import PriceFlag
from costsim.errors import InputError

HEADER = "cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,effective_date\n"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text(text)
    return path


def test_good_file_loads_with_canonical_gpu_names(tmp_path: Path) -> None:
    """Aliases resolve; rows are flagged as user overrides with their source and date."""
    row_text = "coreweave,us-east-04,gd-8xh100,H100-SXM5,8,49.24,2026-06-01\n"
    path = _write(tmp_path, HEADER + row_text)
    (row,) = load_price_file(path)
    assert (row.gpu, row.gpus_per_instance, row.on_demand_usd_per_hour) == ("H100", 8, 49.24)
    assert row.flags == (PriceFlag.USER_OVERRIDE,)
    assert row.effective_date == "2026-06-01"
    assert "line 2" in row.source


def test_raw_catalog_format_is_accepted(tmp_path: Path) -> None:
    """The pricing/raw column names work too."""
    text = ("cloud,instance_type,accelerator,accelerator_count,vcpus,memory_gib,gpu_memory_gib,"
            "region,price_per_hour_usd,spot_price_per_hour_usd,effective_date\n"
            "aws,p5.48xlarge,H100,8,192,2048,80,us-east-1,40.0,,2026-06-01\n")
    (row,) = load_price_file(_write(tmp_path, text))
    assert row.on_demand_usd_per_hour == 40.0
    assert row.spot_usd_per_hour is None


@pytest.mark.parametrize(("body", "where", "message"), [
    ("aws,us-east-1,p5,H100,8,abc,2026-06-01\n", ":2:6", "expected a number"),
    ("aws,us-east-1,p5,H100,8,-3,2026-06-01\n", ":2:6", ">= 0"),
    ("aws,us-east-1,p5,H10,8,3,2026-06-01\n", ":2:4", "did you mean 'H100'"),
    ("aws,us-east-1,p5,H100,0.5,3,2026-06-01\n", ":2:5", "whole number"),
    ("aws,us-east-1,p5,H100,8,3,June\n", ":2:7", "YYYY-MM-DD"),
    ("aws,us-east-1,p5,H100,8,3\n", ":2:7", "expected 7 fields"),
    ("aws,us-east-1,p5,H100,8,3,2026-06-01\naws,us-east-1,p5,H100,8,4,2026-06-01\n", ":3:3",
     "duplicate of line 2"),
])
def test_malformed_rows_name_file_line_and_column(tmp_path: Path, body: str, where: str,
                                                  message: str) -> None:
    """Errors point at FILE:LINE:COLUMN (1-based) and say what is wrong."""
    path = _write(tmp_path, HEADER + body)
    with pytest.raises(InputError, match=message) as info:
        load_price_file(path)
    assert str(info.value).startswith(f"{path}{where}")


def test_bad_header_names_the_column(tmp_path: Path) -> None:
    """An unknown column gets "did you mean"; a missing required one is named."""
    path = _write(tmp_path, HEADER.replace("instance_type", "instance_typ") + "\n")
    with pytest.raises(InputError, match="did you mean 'instance_type'") as info:
        load_price_file(path)
    assert f"{path}:1:3" in str(info.value)
    path = _write(tmp_path, "cloud,region\n")
    with pytest.raises(InputError, match="missing required column"):
        load_price_file(path)
    with pytest.raises(InputError, match="cannot read"):
        load_price_file(tmp_path / "absent.csv")


def test_scenario_override_entries(tmp_path: Path) -> None:
    """Flat, per-cloud and price-file entries combine; unknown keys get "did you mean"."""
    from costsim.catalog.price_file import overrides_from_entries

    _write(tmp_path, HEADER + "coreweave,us-east-04,gd-8xh100,H100,8,49.24,2026-06-01\n")
    overrides = overrides_from_entries(
        [{"discount_pct": 5}, {"cloud": "AWS", "discount_pct": "12"},
         {"price_file": "prices.csv"}], base_dir=tmp_path)
    assert overrides.discount_fraction("gcp") == pytest.approx(0.05)
    assert overrides.discount_fraction("aws") == pytest.approx(0.12)
    assert [o.cloud for o in overrides.custom_offerings] == ["coreweave"]
    with pytest.raises(InputError, match=r"\[0\]\.discount_pc: unknown key; did you mean"):
        overrides_from_entries([{"discount_pc": 5}])
    with pytest.raises(InputError, match="expected a number"):
        overrides_from_entries([{"cloud": "aws", "discount_pct": "lots"}])


@pytest.mark.parametrize(("entries", "message"), [
    (["discount_pct"], r"prices.overrides: \[0\]: expected a mapping"),
    ([{"cloud": "nowhere", "discount_pct": 5}], r"prices.overrides\[0\].cloud: unknown cloud"),
    ([{"cloud": "awz", "discount_pct": 5}], "did you mean 'aws'"),
    ([{"cloud": "owned", "discount_pct": 5}], "unknown cloud 'owned'"),
    ([{"cloud": "aws", "discount_pct": 5}, {"cloud": "AWS", "discount_pct": 6}],
     r"\[1\].cloud: a second discount for aws"),
    ([{"discount_pct": 5}, {"discount_pct": 6}], r"\[1\].discount_pct: a second flat"),
    ([{"discount_pct": "nan"}], r"\[0, 100\)"),
])
def test_bad_scenario_override_entries(entries: list[object], message: str) -> None:
    """Each bad entry names its key path, the rule and the value."""
    from costsim.catalog.price_file import overrides_from_entries
    from costsim.errors import CostsimError

    with pytest.raises(CostsimError, match=message):
        overrides_from_entries(entries)  # type: ignore[arg-type]


# -- rows in the scenario's currency (DESIGN §13) ------------------------------------------------
CURRENCY_HEADER = ("cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"
                   "spot_usd_per_hour,option,term,upfront_usd,recurring_usd_per_hour,"
                   "effective_date,currency\n")


def test_rows_in_the_scenario_currency_are_converted_to_usd(tmp_path: Path) -> None:
    from costsim.catalog.price_file import load_price_file_entries
    from costsim.domain.currency import Currency

    eur = Currency(code="EUR", fx_rate_per_usd=0.92)
    path = _write(tmp_path, CURRENCY_HEADER
                  + "lambda,us-east-1,box-eur,A100-40GB,2,2.208,,,,,,2026-11-01,EUR\n"
                  + "lambda,us-east-1,box-usd,A100-40GB,2,2.40,,,,,,2026-11-01,usd\n"
                  + "lambda,us-east-1,box-none,A100-40GB,2,2.40,1.2,,,,,2026-11-01,\n"
                  + "aws,,,H100,,,,reserved,1y,920,18.4,2026-11-01,EUR\n")
    offerings, (quote,) = load_price_file_entries(path, eur)
    # hand-computed: €2.208 / 0.92 = $2.40; €920 / 0.92 = $1,000; €18.40 / 0.92 = $20
    assert [o.on_demand_usd_per_hour for o in offerings] == pytest.approx([2.40, 2.40, 2.40])
    assert offerings[2].spot_usd_per_hour == pytest.approx(1.2)
    assert quote.upfront_usd == pytest.approx(1000.0)
    assert quote.recurring_usd_per_hour == pytest.approx(20.0)


@pytest.mark.parametrize(("scenario_code", "row_code", "rule"), [
    ("EUR", "GBP", "must be USD or the scenario's currency EUR"),
    ("EUR", "EURO", "must be USD or the scenario's currency EUR"),
    ("USD", "EUR", "must be USD (a row in another currency needs a scenario"),
])
def test_a_row_in_another_currency_names_file_line_and_column(
        tmp_path: Path, scenario_code: str, row_code: str, rule: str) -> None:
    from costsim.catalog.price_file import load_price_file_entries
    from costsim.domain.currency import Currency

    currency = Currency(code=scenario_code, fx_rate_per_usd=0.92 if scenario_code != "USD"
                        else 1.0)
    path = _write(tmp_path, CURRENCY_HEADER
                  + "lambda,us-east-1,box,A100-40GB,2,2.40,,,,,,2026-11-01,USD\n"
                  + f"lambda,us-east-1,box2,A100-40GB,2,2.40,,,,,,2026-11-01,{row_code}\n")
    with pytest.raises(InputError) as caught:
        load_price_file_entries(path, currency)
    assert str(caught.value).startswith(f"{path}:3:13: currency: {rule}")
    assert repr(row_code) in str(caught.value)


def test_a_converted_price_keeps_its_bound_in_the_row_currency(tmp_path: Path) -> None:
    """The largest instance price is $72,000/h; in yen at 150 per USD that is ¥10,800,000."""
    from costsim.catalog.price_file import load_price_file_entries
    from costsim.domain.currency import Currency

    jpy = Currency(code="JPY", fx_rate_per_usd=150.0)
    path = _write(tmp_path, CURRENCY_HEADER
                  + "lambda,us-east-1,box,A100-40GB,2,10800000,,,,,,2026-11-01,JPY\n")
    (offering,), _ = load_price_file_entries(path, jpy)
    assert offering.on_demand_usd_per_hour == pytest.approx(72_000)
    _write(tmp_path, CURRENCY_HEADER
           + "lambda,us-east-1,box,A100-40GB,2,10800001,,,,,,2026-11-01,JPY\n")
    with pytest.raises(InputError, match="must be at most 10,800,000"):
        load_price_file_entries(path, jpy)
