"""One rounding rule per kind of number in every text output; JSON is never rounded."""

from __future__ import annotations

import json

from costsim.catalog.gpus import get_gpu
from costsim.cli.numbers import gib, hours, usd_amount, usd_estimate, usd_rate
from tests.cli.conftest import Cli


def test_the_rules() -> None:
    assert usd_rate(0.1375) == "0.138"  # rates keep sub-cent differences between cheap GPUs
    assert usd_rate(1234.5) == "1,234.500"
    assert usd_amount(64116.314) == "$64,116.31"  # amounts to the cent
    assert usd_amount(-531517.114) == "-$531,517.11"  # a credit: the sign first
    assert usd_estimate(153969.14) == "$153,969"  # simulated costs to the dollar
    assert usd_estimate(-0.4) == "$0"
    assert gib(81559 * 2**20) == "79.65"
    assert hours(7.067) == "7.07"
    assert hours(30_840_000.4) == "30,840,000"


def test_a_price_reads_the_same_in_estimate_and_prices_and_json_keeps_it_whole(cli: Cli) -> None:
    code, out, _ = cli("estimate", "train", "--model", "gpt2", "--gpu", "H100", "--gpus", "8",
                       "--tokens", "1e10", "--cloud", "aws", "--json")
    assert code == 0
    estimate = json.loads(out)
    rate, cost = estimate["price_usd_per_gpu_hour"], estimate["cost_usd"]
    assert round(cost, 2) != cost  # JSON: full precision, not cents
    _, text, _ = cli("estimate", "train", "--model", "gpt2", "--gpu", "H100", "--gpus", "8",
                     "--tokens", "1e10", "--cloud", "aws")
    assert f"${usd_rate(rate)}/GPU-h" in text
    assert usd_amount(cost) in text
    assert hours(estimate["gpu_hours"]) in text
    _, table, _ = cli("prices", "--gpu", "H100", "--cloud", "aws", "--option", "on-demand",
                      "--count", "8")
    assert usd_rate(rate) in [cell.rstrip("!~") for cell in table.split()]


def test_a_capacity_reads_the_same_in_gpus_and_memory(cli: Cli) -> None:
    shown = gib(get_gpu("H100").capacity_bytes)
    _, gpus, _ = cli("gpus", "--gpu", "H100")
    _, memory, _ = cli("memory", "--model", "gpt2", "--gpu", "H100")
    assert f" {shown} " in gpus
    assert any(line.startswith("capacity ") and f" {shown} " in line
               for line in memory.splitlines())
    _, listed, _ = cli("gpus", "--gpu", "H100", "--json")
    assert json.loads(listed)["gpus"][0]["capacity_gib"] == get_gpu("H100").capacity_bytes / 2**30
