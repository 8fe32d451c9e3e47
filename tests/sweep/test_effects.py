"""Which swept input moves cost most: main effects on a factorial of known costs."""

from __future__ import annotations

from costsim.sim.montecarlo import PlanResult
from costsim.sweep.effects import NAME_KEY, input_effects
from costsim.sweep.results import SweepRow
from tests.sweep.results_builders import factorial, plan_row, sweep_of


def test_the_input_with_the_largest_swing_comes_first() -> None:
    effects = input_effects(factorial())
    assert [(e.key, e.low_value, e.high_value, e.swing_usd) for e in effects] == [
        ("a", 1, 2, 50.0), ("b", "x", "y", 10.0)]
    assert effects[0].low_usd == 105.0  # the mean over b's values


def test_named_variants_are_one_more_input_and_single_values_none() -> None:
    rows = [plan_row(0, {"c": 1}, 100.0, name="small"), plan_row(1, {"c": 1}, 300.0, name="big")]
    effects = input_effects(sweep_of(rows))
    assert [(e.key, e.low_value, e.high_value) for e in effects] == [(NAME_KEY, "small", "big")]


def test_infeasible_plans_have_no_effect() -> None:
    infeasible = PlanResult(name="p", feasible=False, infeasible_reasons=("no",),
                            replications=0)
    rows = [SweepRow(variant=0, label="", overrides={"a": 1}, result=infeasible),
            plan_row(1, {"a": 2}, 5.0)]
    assert input_effects(sweep_of(rows)) == ()
