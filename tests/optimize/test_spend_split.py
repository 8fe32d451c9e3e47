"""The spend split of simulated plans: the groups add up to the plan's cost to the cent, owned
BOM lines keep their part, rented instance-hours follow the equivalent server's BOM."""

from __future__ import annotations

from datetime import date

import pytest

from costsim.catalog.servers import server_bom
from costsim.domain.plans import OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.errors import InputError
from costsim.optimize.budget_split_result import SpendGroup
from costsim.optimize.spend_split import instance_shares, spend_split
from costsim.sim.ledger import Component, cents_sum
from costsim.sim.montecarlo import PlanResult
from costsim.sim.run_result import simulate_scenario
from tests.domain.scenario_builders import lifecycle


def _owned_plan() -> Plan:
    base = lifecycle().plans[0]
    prototype, _, serve = base.uses
    return Plan(name="own-train", uses=(prototype, PhaseUse(phase="train", entries=(
        UseEntry(gpu="H100", option=PurchaseOption.OWNED, count=16),)), serve),
        owned=(OwnedPurchase(server="hgx-h100-8", count=2, purchase=date(2027, 1, 1),
                             ram_gib=512, cpu_cores=64),))


def test_the_groups_add_up_to_the_plan_cost_to_the_cent() -> None:
    scenario = lifecycle(plans=(lifecycle().plans[0], _owned_plan()))
    run = simulate_scenario(scenario, seed=3, replications=2)
    for plan in run.plans:
        assert plan.ledger is not None
        split = spend_split(plan)
        assert cents_sum(s.usd for s in split.shares) == plan.ledger.cost_usd
        assert split.total_usd == plan.ledger.cost_usd
    rented = spend_split(run.plans[0])
    assert any("H100" in n and "split" in n for n in rented.notes)
    assert any("A10G" in n and "L4" in n and "whole" in n for n in rented.notes)


def test_rented_hours_follow_the_equivalent_servers_bom() -> None:
    run = simulate_scenario(lifecycle(), seed=3, replications=2)
    plan = run.plans[0]
    assert plan.ledger is not None
    h100 = sum(line.amount_usd for line in plan.ledger.lines
               if line.key.component is Component.GPU_INSTANCE and line.key.gpu == "H100")
    others = sum(line.amount_usd for line in plan.ledger.lines
                 if line.key.component is Component.GPU_INSTANCE and line.key.gpu != "H100")
    hgx = server_bom("hgx-h100-8")
    gpu_share = sum(line.amount_usd for line in hgx.bom if line.kind == "gpu") / hgx.capex_usd
    assert dict(instance_shares("H100") or ())[SpendGroup.GPU] == pytest.approx(gpu_share)
    gpu = next(s for s in spend_split(plan).shares if s.group is SpendGroup.GPU)
    assert gpu.usd == pytest.approx(h100 * gpu_share + others, abs=0.05)
    assert instance_shares("A10G") is None


def test_an_infeasible_plan_has_nothing_to_split() -> None:
    with pytest.raises(InputError, match="infeasible"):
        spend_split(PlanResult(name="x", feasible=False, infeasible_reasons=("no",),
                               replications=0))
