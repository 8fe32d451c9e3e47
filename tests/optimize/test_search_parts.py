"""The search's pure parts: combining screened choices into finalists, and the demand window a
reservation variant is sized on."""

from __future__ import annotations

import itertools
from datetime import date

import numpy as np

from costsim.domain.commitments import CapacityBlock, SavingsPlan
from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.pricing import Payment
from costsim.optimize.choice import PhaseChoice
from costsim.optimize.explain import buys
from costsim.optimize.reservation_round import demand_in
from costsim.optimize.screen import ChoiceEstimate, all_combinations, best_combinations
from costsim.sim.demand import DemandHistogram


def _estimates(phase: str, costs: list[float], meets: list[bool] | None = None
               ) -> list[ChoiceEstimate]:
    out = []
    for i, cost in enumerate(costs):
        choice = PhaseChoice(phase=phase, label=f"{phase} {i}", slug=f"{phase}{i}", prep=None,
                             use=PhaseUse(phase=phase, entries=(UseEntry(gpu="L4"),)))
        out.append(ChoiceEstimate(choice=choice, cost_usd=cost, duration_s=1.0,
                                  p_deadline_missed=None,
                                  meets_deadline=True if meets is None else meets[i]))
    return out


def test_finalists_hold_every_phase_runner_up_then_the_cheapest_sums() -> None:
    # serving dwarfs the rest: the cheapest sums alone would only vary the cheap phases
    screened = [("a", _estimates("a", [1, 2, 3, 4, 5])), ("b", _estimates("b", [10, 11, 12])),
                ("serve", _estimates("serve", [1000, 1010, 1020, 1030, 1040]))]
    finalists = best_combinations(screened, count=8)
    slugs = [c.slug for c in finalists]
    assert len(slugs) == 8 == len(set(slugs))
    assert slugs[0] == "a0.b0.serve0"
    for runner_up in ("serve1", "serve2", "serve3"):
        assert f"a0.b0.{runner_up}" in slugs
    costs = [c.cost_usd for c in finalists]
    assert costs == sorted(costs)
    # with room for all, the finalists are the cheapest sums of the whole product
    everything = all_combinations([e for _, e in screened])
    assert [c.slug for c in best_combinations(screened, count=len(everything))] == [
        c.slug for c in everything]


def test_finalists_skip_choices_that_miss_the_deadline_unless_all_do() -> None:
    screened = [("train", _estimates("train", [1, 2, 3], meets=[False, True, True]))]
    assert [c.slug for c in best_combinations(screened, count=5)] == ["train1", "train2"]
    none_meet = [("train", _estimates("train", [1, 2], meets=[False, False]))]
    assert [c.slug for c in best_combinations(none_meet, count=5)] == ["train0", "train1"]


def _brute_force_window(hourly: np.ndarray, start: int, end: int) -> DemandHistogram:
    return DemandHistogram.from_hourly("L4", hourly[:, start:end])


def test_demand_window_drops_idle_hours_outside_it_from_every_replication() -> None:
    rng = np.random.default_rng(4)
    hourly = np.zeros((3, 100))
    hourly[:, 20:80] = rng.uniform(0.5, 6.0, size=(3, 60))  # every replication busy 20–80
    pooled = DemandHistogram.from_hourly("L4", hourly)
    window = demand_in(pooled, tuple(hourly[0]), 20, 80)
    expected = _brute_force_window(hourly, 20, 80)
    assert window.hours_per_replication == 60
    assert window.levels == expected.levels
    assert window.hours == expected.hours
    np.testing.assert_allclose(window.gpu_hours, expected.gpu_hours)


def test_demand_window_falls_back_to_the_first_replication_when_others_used_the_gpu() -> None:
    hourly = np.zeros((2, 50))
    hourly[:, 0:5] = 2.0  # another phase used the type before the window
    hourly[:, 10:40] = np.array([[3.0], [5.0]])
    pooled = DemandHistogram.from_hourly("L4", hourly)
    window = demand_in(pooled, tuple(hourly[0]), 10, 40)
    assert window.replications == 1
    assert window.hours_per_replication == 30
    assert window.levels == (3,)
    assert demand_in(pooled, tuple(hourly[0]), 0, 50) is pooled


def test_combinations_are_the_product() -> None:
    per_phase = [_estimates("a", [1, 2]), _estimates("b", [3, 4, 5])]
    combos = all_combinations(per_phase)
    assert len(combos) == 6
    assert {c.slug for c in combos} == {f"a{i}.b{j}" for i, j in itertools.product(
        range(2), range(3))}


def test_a_plan_is_described_with_its_savings_plans_and_capacity_blocks() -> None:
    plan = Plan(name="p", uses=(PhaseUse(phase="train", entries=(UseEntry(gpu="H100",
                                                                          count=8),)),),
                savings_plans=(SavingsPlan(cloud="aws", usd_per_hour=12.5, term_years=1,
                                           payment=Payment.NO_UPFRONT,
                                           start=date(2027, 1, 1)),),
                capacity_blocks=(CapacityBlock(gpu="H100", count=8, cloud="aws",
                                               start=date(2027, 2, 1), days=14),))
    assert buys(plan) == ("runs train on 8×H100 on demand; a $12.50/h savings plan on any GPU "
                          "on aws for 1y (no-upfront) from 2027-01-01; a capacity block of 8 "
                          "H100 on aws for 14 days from 2027-02-01")
