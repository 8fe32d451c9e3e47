"""``costsim servers``: the shipped servers with capex and sources (DESIGN §13)."""

from __future__ import annotations

import json

from tests.cli.conftest import Cli

KEYS = {"name", "gpu", "gpu_count", "capex_usd", "power_kw", "life_years", "residual_pct",
        "source", "effective_date"}


def test_json_lists_every_shipped_server_with_its_bom_total(cli: Cli) -> None:
    from costsim.catalog.servers import server_names

    code, out, _ = cli("servers", "--json")
    assert code == 0
    rows = json.loads(out)["servers"]
    assert [r["name"] for r in rows] == list(server_names())
    for row in rows:
        assert set(row) >= KEYS
        assert row["source"]
        assert row["effective_date"]
        # capex is the sum of the BOM lines, each line quantity × unit price
        assert round(sum(line["amount_usd"] for line in row["bom"]), 2) == row["capex_usd"]
    rtx = next(r for r in rows if r["name"] == "rtx4090-4")
    # 4 × $1,417 + 1 × $3,400 + 192 × $3.84 + 3.84 × $112.5 + 1 × $800 + $4,000 + 4 × $500
    assert rtx["capex_usd"] == 5668 + 3400 + 737.28 + 432 + 800 + 4000 + 2000
    assert (rtx["gpu_count"], rtx["life_years"], rtx["residual_pct"]) == (4, 3.0, 20.0)


def test_text_table_names_each_server(cli: Cli) -> None:
    code, out, _ = cli("servers")
    assert code == 0
    assert "rtx4090-4" in out
    assert "$17,037.28~" in out
