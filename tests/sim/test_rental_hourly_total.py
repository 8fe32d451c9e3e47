"""A rental pool's hourly booking given the caller's sum of the GPU-hours (a serving fleet
sums them for its used GPU-hours already) books what it books computing the sum itself, and
ignores that sum where the horizon cuts the hours off (issue 20)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import simpy

from costsim.cli.scenario_names import load_scenario_file
from costsim.sim.context import RunContext
from costsim.sim.engine import draw_uncertainty
from costsim.sim.ledger import LedgerBook
from costsim.sim.prepare import PreparedPlan, ServingPrep, prepare_plan
from costsim.sim.streams import replication_seeds

FLAGSHIP = Path(__file__).resolve().parents[2] / "scenarios" / "lifecycle-assistant.yaml"


def _prep() -> PreparedPlan:
    scenario = load_scenario_file(FLAGSHIP).scenario
    plan = next(p for p in scenario.plans if p.name == "all-on-demand")
    return prepare_plan(scenario, plan)


def _context(prep: PreparedPlan) -> RunContext:
    root = replication_seeds(7, 1)[0]
    return RunContext(env=simpy.Environment(), prep=prep, root=root,
                      book=LedgerBook(prep.scenario.calendar.month_labels()),
                      draws=draw_uncertainty(prep, root), keep_fleet=False)


def _booked(ctx: RunContext) -> tuple[object, ...]:
    ledger = ctx.book.close()
    return ctx.rental_gpu_hours, tuple(sorted(ctx.rental_paid.items())), ledger


def test_the_callers_sum_books_the_same_and_is_ignored_for_cut_hours() -> None:
    prep = _prep()
    serve = next(p for p in prep.phases.values() if isinstance(p, ServingPrep))
    pool = serve.entries[0].source.rental
    assert pool is not None
    rng = np.random.default_rng(3)
    gpus = np.ceil(rng.random(3000) * 9)
    gpus[0], gpus[-1] = 0.25, 0.75  # partial first and last hours
    plain, given = _context(prep), _context(prep)
    plain.book_rental_hourly("serve", pool, 100, gpus)
    given.book_rental_hourly("serve", pool, 100, gpus, total=float(gpus.sum()))
    assert _booked(plain) == _booked(given)
    # past the horizon's end: the hours booked are fewer than the caller summed
    cut_plain, cut_given = _context(prep), _context(prep)
    h0 = cut_plain.hours - 1000
    cut_plain.book_rental_hourly("serve", pool, h0, gpus)
    cut_given.book_rental_hourly("serve", pool, h0, gpus, total=float(gpus.sum()))
    assert _booked(cut_plain) == _booked(cut_given)
    assert cut_given.rental_gpu_hours == float(gpus[:1000].sum())
