"""Small runs of the simulator for the report tests: the lifecycle scenario with plans that
exercise every part of the report (reservations, owned servers, spot, an infeasible plan)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from functools import cache

from costsim.domain.plans import Autoscale, Commitment, OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.sim.run_result import RunResult, simulate_scenario
from tests.domain.scenario_builders import lifecycle

REPLICATIONS = 3
SCRIPT_NAME = "<script>alert(1)</script>"  # must stay text in the HTML
FORMULA_NAME = "=1+1"  # must stay text in the spreadsheet


def _serve(entry: UseEntry) -> PhaseUse:
    return PhaseUse(phase="serve", entries=(entry,))


def report_scenario(*extra_names: str, **changes: object) -> Scenario:
    """The lifecycle scenario with five plans (and copies of the first under ``extra_names``)."""
    base = lifecycle(discount_rate_pct_per_year=8.0)
    on_demand = base.plans[0]
    prototype, train, serve = on_demand.uses
    autoscale = Autoscale(min_replicas=2, max_replicas=64)
    reserve = Plan(
        name="reserve-serving",
        uses=(prototype, train, _serve(UseEntry(
            gpu="L4", option=PurchaseOption.RESERVED_1Y_NO_UPFRONT, count=8,
            spill=PurchaseOption.ON_DEMAND, autoscale=autoscale))),
        commitments=(Commitment(gpu="L4", count=8, term_years=1, payment=Payment.NO_UPFRONT,
                                start=date(2027, 4, 1)),))
    buy = Plan(
        name="buy-servers",
        uses=(prototype, PhaseUse(phase="train", entries=(UseEntry(
            gpu="H100", option=PurchaseOption.OWNED, count=16),)), serve),
        owned=(OwnedPurchase(server="hgx-h100-8", count=2, purchase=date(2027, 2, 1)),))
    spot = Plan(
        name="spot-train",
        uses=(prototype, PhaseUse(phase="train", entries=(UseEntry(
            gpu="H100", option=PurchaseOption.SPOT, count=16,
            fallback=PurchaseOption.ON_DEMAND),)), serve))
    too_small = Plan(
        name="one-small-card",
        uses=(prototype, PhaseUse(phase="train", entries=(UseEntry(gpu="T4", count=1),)),
              serve))
    copies = tuple(replace(on_demand, name=name) for name in extra_names)
    plans = (on_demand, reserve, buy, spot, too_small, *copies)
    return replace(base, plans=plans, **changes)  # type: ignore[arg-type]


@cache
def report_run(*extra_names: str, seed: int = 0) -> RunResult:
    """The scenario simulated (cached: the runs are values)."""
    return simulate_scenario(report_scenario(*extra_names), seed=seed,
                             replications=REPLICATIONS, scenario_sha256="ab" * 32,
                             costsim_version="0.1.0", price_book_date="2026-05-20")
