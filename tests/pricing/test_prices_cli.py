"""``costsim prices``: estimate marks in the break-even table, one-line errors for bad input.

(The DESIGN.md §7 contract tests live in tests/cli/test_prices_cmd.py.)
"""

from __future__ import annotations

import json

import pytest

from costsim.cli.main import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_breakeven_marks_rates_that_rest_on_estimates(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Tier-2 reserved rates behind a "never" carry '~', a footnote and JSON flags."""
    code, out, _ = run(["prices", "--breakeven", "--gpu", "H100"], capsys)
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if "hyperstack" in line}
    assert "~" in rows["reserved-1y-no-upfront"].split()[-2]
    assert "never" in rows["reserved-1y-no-upfront"]
    assert "~" not in rows["on-demand"]
    assert "only by negotiated" in out
    assert "contract" in out
    code, out, _ = run(["prices", "--breakeven", "--gpu", "H100", "--json"], capsys)
    (result,) = [r for r in json.loads(out)["breakeven"] if r["server"] == "hgx-h100-8"]
    rentals = {r["option"]: r for r in result["rentals"]}
    reserved = rentals["reserved-3y-all-upfront"]
    assert reserved["estimate"] is True
    assert "reserved-by-contract" in reserved["flags"]
    assert "reserved-discount-estimate" in reserved["flags"]
    assert rentals["on-demand"]["estimate"] is False
    assert result["owned_cost_estimate"] is True


def test_price_rows_carry_the_estimate_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """--json rows say whether the rate is an estimate; published discounts are not."""
    code, out, _ = run(["prices", "--cloud", "aws", "--region", "us-east-1", "--gpu", "A100",
                        "--count", "8", "--json"], capsys)
    assert code == 0
    rows = {(r["instance_type"], r["option"]): r for r in json.loads(out)["rows"]}
    assert rows[("p4d.24xlarge", "reserved-1y-no-upfront")]["estimate"] is False
    assert rows[("p4d.24xlarge", "on-demand")]["estimate"] is False
