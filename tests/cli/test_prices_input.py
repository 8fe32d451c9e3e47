"""``costsim prices``: estimate marks in the break-even table, one-line errors for bad input.

(The DESIGN.md §7 contract tests live in test_prices_cmd.py; ``cli`` comes from conftest.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli


def test_breakeven_marks_rates_that_rest_on_estimates(
        cli: Cli) -> None:
    """Tier-2 reserved rates behind a "never" carry '~', a footnote and JSON flags."""
    code, out, _ = cli("prices", "--breakeven", "--gpu", "H100")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if "hyperstack" in line}
    assert "~" in rows["reserved-1y-no-upfront"].split()[-2]
    assert "never" in rows["reserved-1y-no-upfront"]
    assert "~" not in rows["on-demand"]
    assert "only by negotiated" in out
    assert "contract" in out
    code, out, _ = cli("prices", "--breakeven", "--gpu", "H100", "--json")
    (result,) = [r for r in json.loads(out)["breakeven"] if r["server"] == "hgx-h100-8"]
    rentals = {r["option"]: r for r in result["rentals"]}
    reserved = rentals["reserved-3y-all-upfront"]
    assert reserved["estimate"] is True
    assert "reserved-by-contract" in reserved["flags"]
    assert "reserved-discount-estimate" in reserved["flags"]
    assert rentals["on-demand"]["estimate"] is False
    assert result["owned_cost_estimate"] is True


def test_price_rows_carry_the_estimate_flag(cli: Cli) -> None:
    """--json rows say whether the rate is an estimate; published discounts are not."""
    code, out, _ = cli("prices", "--cloud", "aws", "--region", "us-east-1", "--gpu", "A100",
                        "--count", "8", "--json")
    assert code == 0
    rows = {(r["instance_type"], r["option"]): r for r in json.loads(out)["rows"]}
    assert rows[("p4d.24xlarge", "reserved-1y-no-upfront")]["estimate"] is False
    assert rows[("p4d.24xlarge", "on-demand")]["estimate"] is False


def _assert_one_line_exit_2(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2, err
    assert out == ""
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)


@pytest.mark.parametrize(("argv", "needles"), [
    (["--count", "0"], ("--count", ">= 1", "got 0")),
    (["--count", "-1"], ("--count", ">= 1", "got -1")),
    (["--count", "abc"], ("--count", "invalid int value", "'abc'")),
    (["--breakeven", "--count", "0"], ("--count", ">= 1", "got 0")),
    (["--limit", "0"], ("--limit", ">= 1", "got 0")),
    (["--limit", "-1"], ("--limit", ">= 1", "got -1")),
    (["--discount-pct", "-5"], ("--discount-pct", "[0, 100)", "'-5'")),
    (["--discount-pct", "nan"], ("--discount-pct", "[0, 100)", "'nan'")),
    (["--discount-pct", "100"], ("--discount-pct", "[0, 100)", "'100'")),
    (["--discount-pct", "ten"], ("--discount-pct", "invalid float value", "'ten'")),
    (["--cloud-discount", "aws=abc"], ("--cloud-discount", "aws", "expected a number", "'abc'")),
    (["--cloud-discount", "aws="], ("--cloud-discount", "CLOUD=PCT", "'aws='")),
    (["--cloud-discount", "=5"], ("--cloud-discount", "CLOUD=PCT", "'=5'")),
    (["--cloud-discount", "aws=-5"], ("--cloud-discount aws", "[0, 100)", "'-5'")),
    (["--cloud-discount", "nowhere=10"], ("--cloud-discount", "unknown cloud 'nowhere'",
                                          "clouds: aws")),
    (["--cloud-discount", "awz=10"], ("--cloud-discount", "did you mean 'aws'",)),
    (["--cloud-discount", "owned=10"], ("--cloud-discount", "owned", "no negotiated discount")),
    (["--cloud-discount", "aws=10", "--cloud-discount", "AWS=20"],
     ("--cloud-discount", "aws", "given twice")),
    (["--option", "ondemand"], ("--option", "'ondemand'", "did you mean 'on-demand'")),
    (["--option", "on_demand"], ("--option", "'on_demand'", "did you mean 'on-demand'")),
    (["--option", "reserved"], ("--option", "'reserved'", "choose one of")),
    (["--option", "owned", "--cloud", "aws"], ("--option", "'owned'", "--cloud aws")),
    (["--option", "spot", "--cloud", "owned"], ("--cloud", "'owned'", "--option spot")),
    (["--breakeven", "--option", "owned"], ("--option", "--breakeven", "'owned'")),
    (["--breakeven", "--cloud", "owned"], ("--cloud", "--breakeven", "'owned'")),
    (["--breakeven", "--gpu", "T4"], ("--gpu T4", "no shipped owned server", "hgx-h100-8")),
    (["--breakeven", "--gpu", "H100", "--count", "3"],
     ("--count 3", "no shipped owned server")),
    (["--gpu", ""], ("--gpu", "unknown GPU ''")),
    (["--region", "us-east-1", "--cloud", "gcp"], ("--region", "us-east-1")),
])
def test_bad_flags_exit_2_with_one_line(argv: list[str], needles: tuple[str, ...],
                                        cli: Cli) -> None:
    """Each names the flag, the rule and the value; exit 2, one line, no traceback."""
    code, out, err = cli("prices", *argv)
    _assert_one_line_exit_2(code, out, err, *needles)


@pytest.mark.parametrize("text", ["ON-DEMAND", " on-demand ", "Reserved-1Y-No-Upfront"])
def test_option_is_case_insensitive(text: str, cli: Cli) -> None:
    """The exact DESIGN.md §5 strings, in any case and with stray blanks."""
    code, out, _ = cli("prices", "--gpu", "H100", "--cloud", "aws", "--region", "us-east-1",
                        "--count", "8", "--option", text, "--json")
    assert code == 0
    (row,) = json.loads(out)["rows"]
    assert row["option"] == text.strip().lower()


def test_limit_keeps_the_cheapest_rows(cli: Cli) -> None:
    """--limit 1 shows the single cheapest row of the sorted table."""
    code, out, _ = cli("prices", "--gpu", "L4", "--cloud", "gcp", "--option", "on-demand",
                        "--limit", "1", "--json")
    assert code == 0
    assert len(json.loads(out)["rows"]) == 1


HEADER = "cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,effective_date"
GOOD = "aws,us-east-1,p5,H100,8,3,2026-06-01"


@pytest.mark.parametrize(("content", "needles"), [
    (b"", (":1:1", "empty file")),
    (HEADER.encode() + b"\n", (":2:1", "no price rows")),
    (b"\n\n" + HEADER.encode() + b"\n" + GOOD.encode() + b"\n", (":1:1", "line 1 is empty")),
    (b"cloud,region\naws,x\n", (":1:1", "instance_type", "missing required column")),
    (HEADER.encode() + b",cloud\n" + GOOD.encode() + b",aws\n", (":1:8", "duplicate column")),
    (HEADER.encode() + b",\n" + GOOD.encode() + b",\n", (":1:8", "empty column name")),
    (HEADER.encode() + b"\n" + GOOD.replace(",3,", ",\xff,").encode("latin-1") + b"\n",
     (":2:25", "not UTF-8", "0xff")),
    (HEADER.encode() + b"\n" + GOOD.replace(",3,", ",cheap,").encode() + b"\n",
     (":2:6", "on_demand_usd_per_hour", "expected a number", "'cheap'")),
    (HEADER.encode() + b"\n" + GOOD.replace(",3,", ",1_000,").encode() + b"\n",
     (":2:6", "expected a number", "'1_000'")),
    (HEADER.encode() + b"\n" + GOOD.replace(",3,", ",nan,").encode() + b"\n",
     (":2:6", "expected a number", "'nan'")),
    (HEADER.encode() + b"\n" + GOOD.replace(",3,", ",1e999,").encode() + b"\n",
     (":2:6", "finite", "'1e999'")),
    (HEADER.encode() + b"\n" + GOOD.replace(",3,", ",0,").encode() + b"\n",
     (":2:6", "> 0", "'0'")),
    (HEADER.encode() + b"\n" + GOOD.replace(",8,", ",80,").encode() + b"\n",
     (":2:5", "gpus_per_instance", "1 to 72", "'80'")),
    (HEADER.encode() + b"\n" + GOOD.replace("2026-06-01", "20260601").encode() + b"\n",
     (":2:7", "effective_date", "YYYY-MM-DD", "'20260601'")),
    (HEADER.encode() + b"\n" + GOOD.replace("aws", "owned").encode() + b"\n",
     (":2:1", "cloud", "'owned'")),
    (HEADER.encode() + b",vcpus\n" + GOOD.encode() + b",1.5\n", (":2:8", "vcpus", "'1.5'")),
    (HEADER.encode() + b",source\n" + GOOD.encode() + b',"two\nlines"\n'
     + GOOD.replace("p5", "p6").replace(",3,", ",x,").encode() + b",ok\n",
     (":4:6", "expected a number", "'x'")),
])
def test_bad_price_file_exits_2_naming_file_line_and_column(
        tmp_path: Path, content: bytes, needles: tuple[str, ...],
        cli: Cli) -> None:
    """FILE:LINE:COLUMN, the column, the rule and the value; one line, exit 2."""
    path = tmp_path / "mine.csv"
    path.write_bytes(content)
    code, out, err = cli("prices", "--price-file", str(path), "--gpu", "H100")
    _assert_one_line_exit_2(code, out, err, str(path), *needles)


def test_price_file_with_a_byte_order_mark_and_crlf_loads(
        tmp_path: Path, cli: Cli) -> None:
    """Spreadsheet exports (UTF-8 BOM, CRLF line ends) are read as they stand."""
    path = tmp_path / "mine.csv"
    path.write_bytes(b"\xef\xbb\xbf" + f"{HEADER}\r\n{GOOD}\r\n".encode())
    code, out, _ = cli("prices", "--price-file", str(path), "--cloud", "aws", "--region",
                        "us-east-1", "--gpu", "H100", "--option", "on-demand", "--json")
    assert code == 0
    rows = {r["instance_type"]: r for r in json.loads(out)["rows"]}
    assert rows["p5"]["price_usd_per_hour"] == 3


def test_region_unspecified_is_shown_in_table_and_json(cli: Cli) -> None:
    """The region, a footnote in the table; the flag and a note in the JSON row."""
    code, out, _ = cli("prices", "--gpu", "H100", "--cloud", "seeweb", "--option",
                        "on-demand")
    assert code == 0
    assert "  unspecified  " in out
    assert "Region 'unspecified'" in out
    code, out, _ = cli("prices", "--gpu", "H100", "--cloud", "seeweb", "--region",
                        "unspecified", "--count", "1", "--option", "on-demand", "--json")
    (row,) = json.loads(out)["rows"]
    assert row["flags"] == ["region-unspecified"]
    assert "it-fr2" in row["note"]
    assert row["blocked_from_selection"] is False
