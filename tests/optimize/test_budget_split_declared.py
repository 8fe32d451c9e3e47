"""A server the scenario declares (``servers:``) is a budget-split candidate and a row of the
run's break-even table, at its declared capex (issue 21 item 1: "usable wherever a shipped
server name is ... ``--budget-split`` candidates")."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from costsim.catalog.prices import price_book
from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.scenario import RiskLimits, Scenario
from costsim.errors import CatalogError
from costsim.optimize.budget_split import optimize_budget_split
from costsim.optimize.space import search_space
from costsim.report.html import breakeven_rows
from costsim.sim.run_result import plan_breakevens
from tests.optimize.split_scenarios import training_scenario

SEED = Path(__file__).parents[2] / "scenarios" / "seed-three-jobs.yaml"
BOX = "box-2xa100-40gb"
# seed-three-jobs.yaml's BOM: gpu 25,000 + cpu 3,400 + ram 400 + nvme 432 + nic 800
# + chassis 4,500
BOX_CAPEX_USD = 34_532.0


@cache
def seed() -> Scenario:
    return load_scenario_file(SEED).scenario


def _training(budget: float | None, deadline_days: float | None = None) -> Scenario:
    """GPT-2 small on 2e9 tokens (1,024-token sequences: its context) with the seed's
    declared servers."""
    return replace(training_scenario("gpt2", 2e9, budget=budget, deadline_days=deadline_days,
                                     seq_len=1024), servers=seed().servers)


def test_the_seed_declares_the_box_at_its_bom_total() -> None:
    (box,) = seed().servers
    assert box.name == BOX
    assert sum(line.amount_usd for line in box.bom) == BOX_CAPEX_USD


def test_a_declared_server_is_a_candidate_as_declared() -> None:
    result = optimize_budget_split(_training(60_000), servers=(BOX,))
    best = result.best
    # two boxes cost 69,064 > 60,000: one box, its GPUs, parts and capex as declared
    assert (best.server, best.servers, best.gpus_per_server) == (BOX, 1, 2)
    assert best.capex_usd == BOX_CAPEX_USD
    (box,) = seed().servers
    assert best.parts == box.parts
    assert sum(line.amount_usd for line in result.bom) == BOX_CAPEX_USD
    assert sum(share.usd for share in result.shares) == pytest.approx(BOX_CAPEX_USD)
    # its parts are fixed: the sensitivity varies only the count (and holds the one rung)
    assert {p.part for p in result.sensitivity if not p.chosen} == {"servers"}
    two = next(p for p in result.sensitivity if p.part == "servers" and p.amount == 2)
    assert two.capex_usd == 2 * BOX_CAPEX_USD
    assert not two.within_budget
    # the proposed plan owns it as declared: no part keys (the loader refuses them there)
    (purchase,) = result.plan.owned
    assert purchase.server == BOX
    assert (purchase.ram_gib, purchase.nvme_tb, purchase.cpu_cores, purchase.nic_gbps) == (
        None, None, None, None)


def test_by_default_the_declared_server_is_searched_beside_the_shipped_ones() -> None:
    # a $30,000 budget: the box (34,532) is weighed and skipped at its declared capex
    result = optimize_budget_split(_training(30_000))
    assert f"{BOX} x2: one server costs at least ${BOX_CAPEX_USD:,.0f}" in result.skipped
    # a misspelt candidate is refused with the declared name as the suggestion
    with pytest.raises(CatalogError, match=BOX):
        optimize_budget_split(_training(60_000), servers=("box-2xa100-40g",))


def test_the_run_report_has_a_break_even_row_for_the_declared_server() -> None:
    curves = plan_breakevens(seed(), seed().plans)
    box = [curve for curve in curves if curve.server.name == BOX]
    assert len(box) == 1
    assert box[0].server.capex_usd == BOX_CAPEX_USD
    assert box[0].rentals  # A100-40GB is rented in 2-GPU instances (the scenario's own host)
    rows = [row for row in breakeven_rows(curves) if row["server"].startswith(BOX)]
    assert len(rows) == len(box[0].rentals)
    assert all("capex $34,532.00" in row["server"] for row in rows)


def test_the_search_space_owns_the_declared_server_beside_the_shipped_one() -> None:
    """The optimizer's owned training choices: the first shipped server of each GPU rated on
    demand, and now each declared server of the GPU (the box: A100-40GB, 2 per server)."""
    scenario = _training(None)
    space = search_space(scenario, price_book(), RiskLimits())
    owned = {(c.owned[0].server, c.owned[0].count, c.use.entries[0].count)
             for c in space.choices("pretrain") if c.owned}
    boxes = {row for row in owned if row[0] == BOX}
    assert boxes
    # as many boxes as the count needs: ⌈count / 2⌉
    assert all(servers == -(-gpus // 2) for _, servers, gpus in boxes)
