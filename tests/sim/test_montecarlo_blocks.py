"""simulate_block + plan_result: a run split into blocks, simulated in any order, summarizes to
run_plan's figures bit for bit (the sweep relies on it)."""

from __future__ import annotations

import random

import pytest

from costsim.sim.montecarlo import plan_result, run_plan, simulate_block
from costsim.sim.prepare import prepare_plan
from tests.domain.scenario_builders import lifecycle


@pytest.mark.parametrize("seed", [0, 11])
def test_blocks_in_any_order_give_run_plans_result(seed: int) -> None:
    scenario = lifecycle()
    prep = prepare_plan(scenario, scenario.plans[0])
    whole = run_plan(prep, seed=seed, replications=9)
    cut = [range(0, 4), range(4, 8), range(8, 9)]
    random.Random(seed).shuffle(cut)
    reps = [r for block in cut
            for r in simulate_block(prep, seed=seed, replications=9, indices=block)]
    assert plan_result(prep, reps) == whole


def test_a_repeated_or_missing_replication_is_refused() -> None:
    scenario = lifecycle()
    prep = prepare_plan(scenario, scenario.plans[0])
    reps = simulate_block(prep, seed=0, replications=4, indices=range(2))
    with pytest.raises(ValueError, match="distinct and non-empty"):
        plan_result(prep, [*reps, reps[0]])
    with pytest.raises(ValueError, match="distinct and non-empty"):
        plan_result(prep, [])
