"""``costsim prices``: JSON contract of DESIGN.md §7, filters, break-even, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

DESIGN_KEYS = {"cloud", "region", "instance_type", "gpu", "provider_gpu_name",
               "gpus_per_instance", "vcpus", "host_ram_gib", "option", "price_usd_per_hour",
               "price_usd_per_gpu_hour", "upfront_usd", "source", "effective_date", "flags"}


def test_json_row_matches_design_example(cli: Cli) -> None:
    """The DESIGN.md §7 example row, key for key."""
    code, out, _ = cli(*["prices", "--cloud", "aws", "--region", "us-east-1", "--gpu", "H100",
                        "--count", "8", "--option", "on-demand", "--json"])
    assert code == 0
    (row,) = json.loads(out)["rows"]
    assert set(row) >= DESIGN_KEYS
    assert {k: row[k] for k in DESIGN_KEYS} == {
        "cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge", "gpu": "H100",
        "provider_gpu_name": "H100", "gpus_per_instance": 8, "vcpus": 192, "host_ram_gib": 2048,
        "option": "on-demand", "price_usd_per_hour": 55.04, "price_usd_per_gpu_hour": 6.88,
        "upfront_usd": 0, "source": "SkyPilot catalog v9 aws/vms.csv",
        "effective_date": "2026-05-20", "flags": []}


def test_json_has_a_row_per_option(cli: Cli) -> None:
    """Without --option: every option the offering is sold with, reservations with terms."""
    code, out, _ = cli(*["prices", "--cloud", "aws", "--region", "us-east-1", "--gpu", "H100",
                        "--count", "8", "--json"])
    assert code == 0
    rows = {row["option"]: row for row in json.loads(out)["rows"]}
    assert set(rows) == {"on-demand", "spot", "reserved-1y-no-upfront",
                         "reserved-1y-partial-upfront", "reserved-1y-all-upfront",
                         "reserved-3y-no-upfront", "reserved-3y-partial-upfront",
                         "reserved-3y-all-upfront"}
    assert rows["reserved-3y-all-upfront"]["upfront_usd"] > 0
    assert 0 < rows["reserved-1y-no-upfront"]["break_even_utilization"] < 1
    assert rows["spot"]["notice_s"] == 120


def test_table_is_sorted_by_price_and_points_to_sources(cli: Cli) -> None:
    """The cheapest row comes first; the footer says where sources and dates are."""
    code, out, _ = cli(*["prices", "--gpu", "L4", "--cloud", "gcp", "--option", "on-demand"])
    assert code == 0
    lines = out.splitlines()
    assert "sources, dates" in " ".join(lines)
    assert "--json" in lines[-1]
    prices = [float(line.split()[5].rstrip("!~")) for line in lines[2:] if line.startswith("gcp")]
    assert prices == sorted(prices)
    assert prices


def test_breakeven_json(cli: Cli) -> None:
    """Owned cost curve falls with utilization; AWS on-demand break-even is a utilization."""
    code, out, _ = cli(*["prices", "--breakeven", "--gpu", "H100", "--cloud", "aws",
                        "--option", "on-demand", "--json"])
    assert code == 0
    (result,) = json.loads(out)["breakeven"]
    curve = [p["cost_usd_per_delivered_gpu_hour"] for p in result["owned_cost_curve"]]
    assert curve == sorted(curve, reverse=True)
    (rental,) = result["rentals"]
    assert rental["instance_type"] == "p5.48xlarge"
    assert 0 < rental["break_even_utilization"] < 1


@pytest.mark.parametrize(("argv", "message"), [
    (["prices", "--gpu", "H10"], "did you mean 'H100'"),
    (["prices", "--cloud", "awz"], "did you mean 'aws'"),
    (["prices", "--cloud", "aws", "--region", "us-east1"], "did you mean 'us-east-1'"),
    (["prices", "--option", "reserved"], "choose one of on-demand, spot, reserved-1y-no"),
    (["prices", "--option", "reserved-1y-noupfront"], "did you mean 'reserved-1y-no-upfront'"),
    (["prices", "--cloud-discount", "aws"], "CLOUD=PCT"),
    (["prices", "--discount-pct", "120"], "[0, 100)"),
])
def test_bad_input_exits_2_with_one_line(argv: list[str], message: str,
                                         cli: Cli) -> None:
    """One error line, exit code 2, no traceback."""
    code, out, err = cli(*argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert out == ""


def test_malformed_price_file_exit_2_names_line_and_column(
        tmp_path: Path, cli: Cli) -> None:
    """A bad custom price file: file:line:column in the message, exit 2."""
    path = tmp_path / "mine.csv"
    path.write_text("cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"
                    "effective_date\naws,us-east-1,p5.48xlarge,H100,8,cheap,2026-06-01\n")
    code, _, err = cli(*["prices", "--price-file", str(path), "--gpu", "H100"])
    assert code == 2
    assert f"{path}:2:6" in err
    assert "expected a number" in err
    assert "Traceback" not in err


def test_price_file_and_discount_apply(tmp_path: Path,
                                       cli: Cli) -> None:
    """A custom row replaces the shipped one; a per-cloud discount scales shipped rows."""
    path = tmp_path / "mine.csv"
    path.write_text("cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"
                    "effective_date,source\n"
                    "aws,us-east-1,p5.48xlarge,H100,8,40,2026-06-01,EDP quote\n")
    code, out, _ = cli(*["prices", "--price-file", str(path), "--cloud", "aws", "--region",
                        "us-east-1", "--gpu", "H100", "--option", "on-demand", "--json",
                        "--cloud-discount", "aws=50"])
    assert code == 0
    rows = {r["instance_type"]: r for r in json.loads(out)["rows"]}
    assert rows["p5.48xlarge"]["price_usd_per_gpu_hour"] == 5.0
    assert rows["p5.48xlarge"]["flags"] == ["user-override"]
    assert rows["p5.4xlarge"]["price_usd_per_hour"] == pytest.approx(6.88 * 0.5, abs=0.01)


def test_table_fits_120_columns_with_instance_price_and_marketplace_mark(cli: Cli) -> None:
    """Issue 8 item 9: the whole book fits a 120-column terminal, shows the per-instance price
    and marks marketplace rows; no region starts with a comma (Vast's blank state)."""
    code, out, _ = cli("prices")
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 120
    assert lines[0].split()[:6] == ["cloud", "region", "instance", "gpus", "inst", "$/h"]
    rows = [line for line in lines[2:] if line and not line.startswith(" ")]
    assert not any(line.split("  ")[1].strip().startswith(",") for line in rows if "  " in line)
    _, listed, _ = cli("prices", "--json", "--option", "on-demand")
    json_rows = json.loads(listed)["rows"]
    marketplace = {r["cloud"]: r["marketplace"] for r in json_rows}
    assert any(marketplace.values())
    for line in rows:
        cloud = line.split()[0]
        assert cloud.endswith("*") == marketplace.get(cloud.rstrip("*"), False), line
    assert not any(r["region"].startswith(",") for r in json_rows)


def test_instance_price_is_the_gpu_price_times_the_gpus(cli: Cli) -> None:
    code, out, _ = cli("prices", "--gpu", "H100", "--cloud", "aws", "--region", "us-east-1",
                       "--option", "on-demand")
    assert code == 0
    (line,) = [line for line in out.splitlines() if "p5.48xlarge" in line]
    cells = line.split()
    assert cells[3] == "8xH100"
    assert float(cells[4]) == pytest.approx(8 * float(cells[5].rstrip("!~")), abs=0.01)


def test_footer_counts_offerings_without_a_price_but_not_those_cut_by_limit(cli: Cli) -> None:
    _, out, _ = cli("prices", "--limit", "3")
    assert "\n3 offerings (1 with no price" in out  # aws p5e.48xlarge eu-west-2: no price at all
    _, out, _ = cli("prices", "--gpu", "L4", "--cloud", "gcp", "--limit", "2")
    assert "\n2 offerings. " in out
