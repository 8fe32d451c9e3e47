"""The budget split of a simulated plan's spend: its ledger (``sim/ledger.py``) by part group.

Owned servers are booked by BOM line (GPU, CPU, memory, NVMe, NIC, fabric, chassis), so their
capex and residual value fall into the groups as they are. A rented instance-hour buys a whole
GPU server's time with its CPU, RAM, NVMe and network bundled in the price: it is split by the
capex shares of the equivalent owned server — the shipped server with the same GPU
(``costsim/data/servers.csv``, as shipped) — on the view that a cloud prices an instance from
what it paid for it. A GPU with no equivalent server (A10G, L4, T4, ...) goes to the GPU group
whole, and the result's notes say so. Storage and CPU-only lines go to memory + storage and
CPU; power, facility, maintenance and staff to operations; data transfer and the rest to
network + other.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

from costsim.catalog.servers import server_bom, server_names, server_row
from costsim.errors import InputError
from costsim.optimize.budget_split_parts import shares_of
from costsim.optimize.budget_split_result import BOM_KIND_GROUP, SpendGroup, SpendSplit
from costsim.sim.ledger import Component, cents_sum
from costsim.sim.montecarlo import PlanResult

COMPONENT_GROUP: dict[Component, SpendGroup] = {
    Component.GPU: SpendGroup.GPU,
    Component.MEMORY: SpendGroup.MEMORY_STORAGE,
    Component.STORAGE: SpendGroup.MEMORY_STORAGE,
    Component.CPU: SpendGroup.CPU,
    Component.CPU_INSTANCE: SpendGroup.CPU,
    Component.NETWORK: SpendGroup.NETWORK_OTHER,
    Component.CHASSIS: SpendGroup.NETWORK_OTHER,
    Component.POWER_FACILITY: SpendGroup.OPERATIONS,
    Component.STAFF: SpendGroup.OPERATIONS,
}


@cache
def instance_shares(gpu: str) -> tuple[tuple[SpendGroup, float], ...] | None:
    """The part-group shares of the shipped server with GPU ``gpu`` (None: no such server)."""
    for name in server_names():
        if server_row(name)["gpu"] == gpu:
            server = server_bom(name, source="spend split")
            amounts: dict[SpendGroup, float] = defaultdict(float)
            for line in server.bom:
                amounts[BOM_KIND_GROUP.get(line.kind, SpendGroup.NETWORK_OTHER)] += (
                    line.amount_usd)
            return tuple((group, amounts[group] / server.capex_usd) for group in SpendGroup)
    return None


def spend_split(result: PlanResult) -> SpendSplit:
    """The plan's mean economic cost by part group; the groups add up to ``cost_usd.mean`` to
    the cent (the rounding residue goes to the largest group).

    Raises:
        InputError: the plan was not simulated (infeasible: no ledger).
    """
    ledger = result.ledger
    if ledger is None:
        raise InputError("spend split", f"plans.{result.name}",
                         "the plan is infeasible and has no ledger to split")
    amounts: dict[SpendGroup, float] = defaultdict(float)
    whole: set[str] = set()
    split: set[str] = set()
    for line in ledger.lines:
        component = line.key.component
        if component is Component.GPU_INSTANCE:
            shares = instance_shares(line.key.gpu)
            if shares is None:
                whole.add(line.key.gpu)
                amounts[SpendGroup.GPU] += line.amount_usd
                continue
            split.add(line.key.gpu)
            for group, share in shares:
                amounts[group] += line.amount_usd * share
        else:
            amounts[COMPONENT_GROUP.get(component, SpendGroup.NETWORK_OTHER)] += line.amount_usd
    total = ledger.cost_usd
    rounded = {g: round(amounts.get(g, 0.0), 2) for g in SpendGroup}
    largest = max(rounded, key=lambda g: abs(rounded[g]))
    rounded[largest] = round(rounded[largest] + total - cents_sum(rounded.values()), 2)
    notes = []
    if split:
        notes.append("rented instance-hours of " + ", ".join(sorted(split)) + " split by the "
                     "capex shares of the owned server with the same GPU (servers.csv)")
    if whole:
        notes.append("rented instance-hours of " + ", ".join(sorted(whole)) + " counted as GPU "
                     "spend whole: no shipped server has that GPU")
    return SpendSplit(plan=result.name, total_usd=total, shares=shares_of(rounded),
                      notes=tuple(notes))
