"""The two functions a sweep's workers run: prepare a variant's plans, simulate a block.

Both take resolved, validated domain objects and return frozen results: a worker needs no file
of the user's, and the same arguments give the same result on any machine. Preparing a plan
(its layouts, serving capacity, prices) costs about as much as ten replications of it
(docs/sweep.md), so it runs once per variant and its result feeds every block of the variant.
"""

from __future__ import annotations

from collections.abc import Sequence

from costsim.domain.scenario import Scenario
from costsim.sim.montecarlo import simulate_block
from costsim.sim.prepare import PreparedPlan, prepare_plan
from costsim.sim.results import Replication
from costsim.sweep.cache import encode

# A block's replications, one tuple per prepared plan (empty for an infeasible plan).
BlockResult = tuple[tuple[Replication, ...], ...]
# ... as it travels and is cached: costsim.sweep.cache.encode's bytes
EncodedBlock = bytes


def chosen_plans(scenario: Scenario, plans: Sequence[str] | None) -> list[str]:
    """The names of the plans to simulate: those asked for, in the scenario's order (all when
    ``plans`` is None)."""
    return [p.name for p in scenario.plans if plans is None or p.name in plans]


def prepare_variant(scenario: Scenario, plans: tuple[str, ...] | None) -> tuple[PreparedPlan, ...]:
    """Each chosen plan of the scenario, prepared (everything that does not depend on the
    draw)."""
    wanted = set(chosen_plans(scenario, plans))
    return tuple(prepare_plan(scenario, plan) for plan in scenario.plans if plan.name in wanted)


def simulate_task(preps: tuple[PreparedPlan, ...], seed: int, replications: int,
                  indices: range) -> EncodedBlock:
    """Replications ``indices`` of every feasible prepared plan, encoded as a cache entry."""
    block: BlockResult = tuple(
        simulate_block(prep, seed=seed, replications=replications, indices=indices)
        if prep.feasible else () for prep in preps)
    return encode(block)

