"""``costsim servers``: the shipped server configurations with their capex and sources."""

from __future__ import annotations

import argparse
from typing import Any

from costsim.cli.common import EXIT_OK, add_json_flag, examples, format_table, print_json


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``costsim servers``."""
    servers = commands.add_parser(
        "servers",
        help="the shipped servers a plan may own, with BOM capex and sources",
        description="List the shipped server configurations (costsim/data/servers.csv) at "
        "their default parts: GPUs, capex (the sum of the BOM lines, each with its own source "
        "in server_components.csv), nameplate power, useful life and residual value. A "
        "scenario's own servers go in its servers: block (scenarios/README.md).",
        epilog=examples("costsim servers", "costsim servers --json"),
    )
    add_json_flag(servers)
    servers.set_defaults(handler=_servers)


def _row(name: str) -> dict[str, Any]:
    from costsim.catalog.servers import default_parts, server_bom

    server = server_bom(name, source="costsim servers")
    parts = default_parts(name)
    return {
        "name": server.name, "gpu": server.gpu, "gpu_count": server.gpu_count,
        "capex_usd": server.capex_usd, "power_kw": round(server.power_kw, 3),
        "life_years": server.useful_life_years,
        "residual_pct": round(server.residual_fraction * 100, 2),
        "lead_time_weeks": server.lead_time_weeks, "cpu_cores": parts.cpu_cores,
        "ram_gib": parts.ram_gib, "nvme_tb": parts.nvme_tb, "nic_gbps": parts.nic_gbps,
        "estimate": any(line.estimate for line in server.bom),
        "source": server.source, "effective_date": server.effective_date,
        "bom": [{"kind": line.kind, "component": line.component, "quantity": line.quantity,
                 "unit": line.unit, "unit_price_usd": line.unit_price_usd,
                 "amount_usd": line.amount_usd, "source": line.source,
                 "effective_date": line.effective_date, "estimate": line.estimate}
                for line in server.bom],
    }


def _servers(args: argparse.Namespace) -> int:
    from costsim.catalog.servers import server_names
    from costsim.cli.numbers import kilowatts, usd_amount

    rows = [_row(name) for name in server_names()]
    if args.json:
        print_json({"servers": rows})
        return EXIT_OK
    table = [(r["name"], r["gpu"], r["gpu_count"],
              usd_amount(r["capex_usd"]) + ("~" if r["estimate"] else ""),
              kilowatts(r["power_kw"]), f"{r['life_years']:g}", f"{r['residual_pct']:g}",
              r["effective_date"], r["source"]) for r in rows]
    header = ("server", "gpu", "gpus", "capex_usd", "power_kw", "life_y", "residual_%",
              "date", "source")
    print(format_table(table, header, right_align=(2, 3, 4, 5, 6), max_width=160,
                       shrink=(8,)))
    print("~ = the BOM holds estimated lines (costsim servers --json lists each line's source)")
    return EXIT_OK
