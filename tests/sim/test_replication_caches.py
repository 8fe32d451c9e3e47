"""What the simulator memoizes across replications and plans (issue 20: the calendar, stream
seeds, uncertainty draws, per-plan statics, bounded pools' capacity, load months, periods and
growth factors, ledger keys and their order, elastic experiment jobs on rentals, training runs,
rented intervals and a fleet's clock hours)
never changes a replication: it is the same replication whether simulated first, after other
plans warmed the caches, alone, or in any block of a split run."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from costsim.cli.scenario_names import load_scenario_file
from costsim.domain import calendar as calendar_module
from costsim.sim import context as context_module
from costsim.sim import draws as draws_module
from costsim.sim import elastic as elastic_module
from costsim.sim import engine as engine_module
from costsim.sim import ledger as ledger_module
from costsim.sim import load as load_module
from costsim.sim import occupancy as occupancy_module
from costsim.sim import results as results_module
from costsim.sim import streams as streams_module
from costsim.sim import training_run as training_run_module
from costsim.sim.montecarlo import run_plan, simulate_block
from costsim.sim.prepare import PreparedPlan, prepare_plan
from costsim.sim.results import Replication

FLAGSHIP = Path(__file__).resolve().parents[2] / "scenarios" / "lifecycle-assistant.yaml"
REPLICATIONS = 4


def forget_everything() -> None:
    for module in (calendar_module, streams_module, draws_module, context_module, load_module,
                   occupancy_module, ledger_module, elastic_module,
                   training_run_module, results_module):
        for value in vars(module).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()
    engine_module._STATICS.clear()
    engine_module._UNCERTAINTY.clear()
    engine_module._HISTOGRAMS.clear()
    ledger_module._SORT_KEYS.clear()
    load_module._GROWTH.clear()


@pytest.fixture(scope="module")
def preps() -> list[PreparedPlan]:
    scenario = load_scenario_file(FLAGSHIP).scenario
    chosen = [p for p in scenario.plans if p.name in ("spot-checkpoints", "buy-servers",
                                                       "reserved-base", "large-cards")]
    return [prepare_plan(scenario, plan) for plan in chosen]


def cold(prep: PreparedPlan, index: int) -> Replication:
    forget_everything()
    return simulate_block(prep, seed=5, replications=REPLICATIONS, indices=[index])[0]


def test_a_replication_is_the_same_cold_warm_alone_or_in_any_block(
        preps: list[PreparedPlan]) -> None:
    expected = {(k, i): cold(prep, i) for k, prep in enumerate(preps)
                for i in range(REPLICATIONS)}
    forget_everything()
    # every plan in one block each, the caches warmed by the plans before
    for k, prep in enumerate(preps):
        block = simulate_block(prep, seed=5, replications=REPLICATIONS,
                               indices=range(REPLICATIONS))
        assert [r.index for r in block] == list(range(REPLICATIONS))
        for rep in block:
            assert rep == expected[k, rep.index]
    # blocks in another order, interleaving plans, on warm caches
    for index in (3, 1, 2, 0):
        for k, prep in reversed(list(enumerate(preps))):
            (rep,) = simulate_block(prep, seed=5, replications=REPLICATIONS, indices=[index])
            assert rep == expected[k, index]


def test_a_plan_prepared_again_gets_the_same_results(preps: list[PreparedPlan]) -> None:
    first = run_plan(preps[0], seed=2, replications=3)
    again = prepare_plan(preps[0].scenario, preps[0].plan)  # another object, equal content
    assert again is not preps[0]
    assert run_plan(again, seed=2, replications=3) == first


def test_the_memoized_interval_books_what_booking_hour_by_hour_books(
        preps: list[PreparedPlan]) -> None:
    from costsim.sim.context import interval_booking
    from costsim.sim.occupancy import interval_gpus

    calendar = preps[0].scenario.calendar
    hours = math.ceil(calendar.horizon_s / 3600)
    for t0, t1, gpus, paid, billed in ((3_600.5, 90_000.25, 16, 16, 86_400.0),
                                       (0.0, 10.0, 1, 8, 60.0),
                                       (calendar.horizon_s - 100, calendar.horizon_s + 900, 4,
                                        4, 1_000.0)):
        booked = interval_booking(calendar, t0, t1, gpus, paid, billed)
        h0, demand = interval_gpus(hours, t0, t1, float(gpus))
        p0, profile = interval_gpus(hours, t0, t0 + billed, float(paid))
        assert (booked.demand_h0, booked.paid_h0) == (h0, p0)
        assert booked.demand.tobytes() == demand.tobytes()
        assert booked.paid.tobytes() == profile.tobytes()
        _, month_hours, month_of_hour = context_module.hour_grid(calendar)
        per_month = np.bincount(month_of_hour[p0:p0 + profile.size], weights=profile,
                                minlength=len(month_hours))
        assert booked.gpu_hours_by_month.tobytes() == per_month.tobytes()
        assert booked.paid_gpu_hours == float(profile.sum())
