"""``costsim prices --breakeven`` only formats the engine's result (costsim.catalog.breakeven).

The golden files in tests/data/golden/ are the command's output before the selection and the
curve moved from the CLI into the engines; the move must not change a byte. If the price book or
a server BOM changes on purpose, regenerate each file with ``costsim prices --breakeven ARGS >
tests/data/golden/FILE`` (ARGS and FILE as paired below) and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsim.catalog.breakeven import break_evens
from costsim.catalog.prices import price_book
from tests.cli.conftest import Cli

GOLDEN = Path(__file__).parents[1] / "data" / "golden"


@pytest.mark.parametrize(("argv", "golden"), [
    (("--gpu", "H100", "--cloud", "aws"), "prices_breakeven_h100_aws.txt"),
    (("--gpu", "H100", "--json"), "prices_breakeven_h100.json"),
])
def test_output_is_unchanged_byte_for_byte(argv: tuple[str, ...], golden: str, cli: Cli) -> None:
    code, out, err = cli("prices", "--breakeven", *argv)
    assert (code, err) == (0, "")
    assert out == (GOLDEN / golden).read_text(encoding="utf-8")


def test_json_is_the_engine_result(cli: Cli) -> None:
    """Every server's curve, rentals and break-evens in --json are the engine's, unrounded."""
    code, out, _ = cli("prices", "--breakeven", "--json")
    assert code == 0
    shown = json.loads(out)["breakeven"]
    results = break_evens(price_book())
    assert [r["server"] for r in shown] == [result.server.name for result in results]
    for row, result in zip(shown, results, strict=True):
        assert row["owned_cost_curve"] == [
            {"utilization": p.utilization,
             "cost_usd_per_delivered_gpu_hour": p.cost_usd_per_delivered_gpu_hour}
            for p in result.owned_curve]
        assert [(r["option"], r["cloud"], r["instance_type"], r["price_usd_per_gpu_hour"],
                 r["break_even_utilization"]) for r in row["rentals"]] == [
            (r.option.value, r.cloud, r.instance_type, r.price_usd_per_gpu_hour,
             result.owning_break_even_utilization(r)) for r in result.rentals]
