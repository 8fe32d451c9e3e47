"""Owned servers that arrive too late: a phase whose owned GPUs are not delivered before the
horizon ends can never run its work, so the plan is infeasible, not free.

Owned servers are usable from their purchase date plus the server's lead time
(:func:`costsim.sim.pools.owned_pool`). A phase that runs on owned GPUs alone (no ``spill``)
waits for them; when fewer than it needs are delivered inside the horizon its work never starts,
the servers' economic cost inside the horizon is zero (capex less the book value, which is the
capex until delivery) and the plan would rank as costing nothing. Such a plan is reported
infeasible with the dates; one whose servers arrive inside the horizon but too late to finish
is simulated, cut at the horizon like any unfinished run (the ``horizon_cuts`` warning).
"""

from __future__ import annotations

from collections.abc import Callable

from costsim.domain.phases import TrainingPhase
from costsim.domain.plans import Plan
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.sim.pools import OwnedPool
from costsim.units import SECONDS_PER_DAY


def undelivered(scenario: Scenario, plan: Plan, owned: tuple[OwnedPool, ...],
                canonical: Callable[[str], str]) -> list[str]:
    """A reason for each phase of ``plan`` whose owned GPUs (without a spill pool) are not
    delivered in the number it needs before the horizon ends: a training run needs all its
    GPUs at once, a serving or experiments phase at least one. ``canonical`` names a GPU as
    the owned pools do."""
    calendar = scenario.calendar
    horizon_s = calendar.horizon_s
    reasons = []
    for phase in scenario.phase_order():
        for entry in plan.use_of(phase.name).entries:
            if entry.option is not PurchaseOption.OWNED or entry.spill is not None:
                continue
            gpu = canonical(entry.gpu)
            pools = [p for p in owned if p.gpu == gpu]
            if not pools:
                continue  # no servers of the GPU at all: capacity.entry_source says so
            if isinstance(phase, TrainingPhase):
                need = entry.count or (phase.layout.gpus if phase.layout else None) or 1
            else:
                need = 1
            in_time = sum(p.gpus for p in pools if p.available_s < horizon_s)
            if in_time >= need:
                continue
            arrivals = "; ".join(
                f"{p.count} × {p.server.name} bought {calendar.date_at(p.purchase_s)} "
                f"arrive {calendar.date_at(p.available_s)} ({_weeks(p)} weeks' lead time)"
                for p in pools)
            reasons.append(
                f"plan '{plan.name}', phase '{phase.name}': needs {need} owned {gpu} GPU(s) "
                f"but {in_time} are delivered before the horizon ends ({calendar.end}) — "
                f"{arrivals}: its work would never run inside the horizon (buy earlier, "
                f"choose a server with a shorter lead time, or lengthen horizon_months)")
    return reasons


def _weeks(pool: OwnedPool) -> str:
    weeks = (pool.available_s - pool.purchase_s) / (7 * SECONDS_PER_DAY)
    return f"{weeks:g}"
