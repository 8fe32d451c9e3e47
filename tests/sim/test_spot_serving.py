"""Serving replicas on spot (issue 16 item 3): reclaimed at the pool's hazard, replaced after the
reacquire delay or at once on the on-demand fallback; SLO attainment and the ledger show it.

Capacities come through the simulator's one seam for them
(:func:`costsim.sim.serving_prep.replica_capacities`), fixed here at 1 request/s per L4 replica
so a fleet of 4 replicas at 4 requests/s is exactly full: every missing replica-second costs
1 request, and the closed forms below are exact in expectation.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date
from typing import Any

import numpy as np
import pytest

from costsim.catalog.sim_defaults import sim_assumptions
from costsim.domain.calendar import Calendar
from costsim.domain.gpu import GpuSpec
from costsim.domain.phases import LoadProfile, RequestBucket, ServingPhase
from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Fixed, Uncertainty
from costsim.sim.ledger import Category
from costsim.sim.montecarlo import simulate_block
from costsim.sim.prepare import PreparedPlan, ServingPrep, prepare_plan
from costsim.sim.results import Replication
from costsim.sim.serving_prep import ReplicaCapacities
from costsim.sim.spot_replicas import expected_reclaims, requests_lost, spot_reclaims
from costsim.units import SECONDS_PER_HOUR
from tests.domain.scenario_builders import lifecycle, llama_8b

REPLICAS = 4
RATE = 4.0  # requests/s: 4 replicas of 1 request/s, exactly full
HAZARD_SCALE = 200.0  # × the catalog's L4 hazard (7.5 % a month): ~2 % of replicas an hour
REPLICATIONS = 60


def one_request_per_s(arch: Any, gpu: GpuSpec, phase: Any, defaults: Any,
                      **_: Any) -> ReplicaCapacities:
    per_bucket = tuple(1.0 for _ in phase.requests)
    return ReplicaCapacities(gpus_per_replica=1, sizing_requests_per_s=per_bucket,
                             service_requests_per_s=per_bucket)


@pytest.fixture
def capacities(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("costsim.sim.serving_prep.replica_capacities", one_request_per_s)


def _prepared(entry: UseEntry) -> PreparedPlan:
    phase = ServingPhase(name="serve", duration_months=1, model="assistant",
                         load=LoadProfile(peak_requests_per_s=RATE, diurnal=False),
                         requests=(RequestBucket(share=1.0, prompt_tokens=500,
                                                 output_tokens=200),))
    plan = Plan(name="p", cloud="aws", region="us-east-1",
                uses=(PhaseUse(phase="serve", entries=(entry,)),))
    scenario = Scenario(
        name="spot", calendar=Calendar(start=date(2027, 1, 4), horizon_months=1),
        models=(llama_8b(),), phases=(phase,), plans=(plan,),
        uncertainty=Uncertainty(throughput_error=Fixed(value=1.0),
                                spot_hazard_scale=Fixed(value=HAZARD_SCALE)))
    prep = prepare_plan(scenario, plan)
    assert prep.feasible, prep.infeasible_reasons
    return prep


def _runs(prep: PreparedPlan, replications: int = REPLICATIONS) -> tuple[Replication, ...]:
    return simulate_block(prep, seed=7, replications=replications,
                          indices=range(replications))


def _hours(prep: PreparedPlan) -> float:
    """The phase's exact hours: a month is 730.5 h, the last half hour billed pro rata."""
    return prep.scenario.calendar.months_s(1) / SECONDS_PER_HOUR


def _hazard_per_replica_s(prep: PreparedPlan) -> float:
    serve = prep.phases["serve"]
    assert isinstance(serve, ServingPrep)
    pool = serve.entries[0].source.rental
    assert pool is not None
    assert pool.option is PurchaseOption.SPOT
    return pool.spot_hazard_per_s(serve.entries[0].gpus_per_replica, HAZARD_SCALE)


def _compute_hours(rep: Replication, option: PurchaseOption) -> float:
    return sum(line.gpu_hours for line in rep.ledger.lines
               if line.key.category is Category.COMPUTE and line.key.option == option.value)


SPOT = UseEntry(gpu="L4", option=PurchaseOption.SPOT)
SPOT_WITH_FALLBACK = UseEntry(gpu="L4", option=PurchaseOption.SPOT,
                              fallback=PurchaseOption.ON_DEMAND)


@pytest.mark.usefixtures("capacities")
def test_reclaims_match_hazard_times_spot_replica_hours() -> None:
    prep = _prepared(SPOT)
    reps = _runs(prep)
    hazard = _hazard_per_replica_s(prep)
    replica_hours = REPLICAS * _hours(prep)
    expected = expected_reclaims(replica_hours, hazard) * len(reps)
    counted = sum(s.preemptions for r in reps for s in r.serving)
    # Poisson: the count over all replications has sd √expected; 4 sd is a 1-in-15,000 miss
    assert expected > 1_000
    assert abs(counted - expected) <= 4 * math.sqrt(expected)


@pytest.mark.usefixtures("capacities")
def test_without_a_fallback_the_missing_replicas_cost_slo_attainment() -> None:
    prep = _prepared(SPOT)
    reps = _runs(prep)
    hazard = _hazard_per_replica_s(prep)
    reacquire_s = sim_assumptions().spot_reacquire_s
    attainment = [s.slo_attainment for r in reps for s in r.serving]
    # a full fleet loses c·D requests per reclaim: 1 − λ·D of the requests are served
    assert np.mean(attainment) == pytest.approx(1 - hazard * reacquire_s, rel=2e-3)
    assert max(attainment) < 1.0
    # the reclaimed replica is not billed while it is gone; nothing is billed on demand
    hours = _hours(prep)
    for rep in reps:
        (serving,) = rep.serving
        missing_h = REPLICAS * hours - _compute_hours(rep, PurchaseOption.SPOT)
        assert missing_h == pytest.approx(serving.preemptions * reacquire_s / SECONDS_PER_HOUR)
        assert _compute_hours(rep, PurchaseOption.ON_DEMAND) == 0.0
        assert not any(line.key.category is Category.SPOT_LOST_WORK for line in rep.ledger.lines)


@pytest.mark.usefixtures("capacities")
def test_the_fallback_stands_in_on_demand_for_the_gap_and_keeps_the_slo() -> None:
    prep = _prepared(SPOT_WITH_FALLBACK)
    reps = _runs(prep)
    reacquire_s = sim_assumptions().spot_reacquire_s
    hours = _hours(prep)
    for rep in reps:
        (serving,) = rep.serving
        assert serving.slo_attainment == pytest.approx(1.0)
        gap_h = serving.preemptions * reacquire_s / SECONDS_PER_HOUR
        assert _compute_hours(rep, PurchaseOption.ON_DEMAND) == pytest.approx(gap_h)
        assert _compute_hours(rep, PurchaseOption.SPOT) == pytest.approx(REPLICAS * hours - gap_h)
    # the fallback's hours are priced on demand, above the spot rate: the ledger shows the cost
    rep = reps[0]
    rates = {line.key.option: line.rate_usd_per_gpu_hour for line in rep.ledger.lines
             if line.key.category is Category.COMPUTE}
    assert rates[PurchaseOption.ON_DEMAND.value] > rates[PurchaseOption.SPOT.value]
    # the same futures (seed, names) draw the same reclaims with or without a fallback
    alone = _runs(_prepared(SPOT), replications=3)
    assert [s.preemptions for r in alone for s in r.serving] == [
        s.preemptions for r in reps[:3] for s in r.serving]


@pytest.mark.usefixtures("capacities")
def test_on_demand_replicas_are_never_reclaimed() -> None:
    prep = _prepared(UseEntry(gpu="L4"))
    for rep in _runs(prep, replications=3):
        (serving,) = rep.serving
        assert serving.preemptions == 0
        assert serving.slo_attainment == pytest.approx(1.0)


def test_spot_serving_draws_from_its_own_stream_only() -> None:
    """The other phases of a plan draw what they drew with the fleet on demand (DESIGN §7)."""
    base = lifecycle()
    (plan,) = base.plans
    uses = tuple(PhaseUse(phase="serve", entries=(replace(use.entries[0],
                                                          option=PurchaseOption.SPOT),))
                 if use.phase == "serve" else use for use in plan.uses)
    spot_plan = replace(plan, name="spot-serving", uses=uses)
    runs = {}
    for p in (plan, spot_plan):
        prep = prepare_plan(replace(base, plans=(p,)), p)
        (runs[p.name],) = simulate_block(prep, seed=3, replications=1, indices=[0])
    od, spot = runs[plan.name], runs[spot_plan.name]
    assert od.draws == spot.draws
    assert od.training == spot.training
    assert od.queue_waits == spot.queue_waits
    # the serving fleet's lines (a copy of the data to its cloud is a data-transfer line)
    assert {line.key.option for line in spot.ledger.lines if line.key.phase == "serve"
            and line.key.category is not Category.DATA_TRANSFER} == {PurchaseOption.SPOT.value}
    assert od.serving[0].preemptions == 0


# ------------------------------------------------------------------------- the pure rules
def test_the_reclaim_count_follows_its_closed_form_over_many_hours() -> None:
    replicas = np.full(200_000, 3.0)
    hazard = 0.01 / SECONDS_PER_HOUR  # per replica-second
    drawn = spot_reclaims(replicas, hazard, 1800.0, np.random.default_rng(1))
    expected = expected_reclaims(float(replicas.sum()), hazard)
    assert abs(int(drawn.reclaims.sum()) - expected) <= 4 * math.sqrt(expected)
    assert drawn.missing_replica_s.sum() == pytest.approx(drawn.reclaims.sum() * 1800.0)


def test_a_reacquire_delay_longer_than_an_hour_runs_on_into_the_next_hours() -> None:
    class OneReclaimFirst:
        """A generator stand-in: one reclaim in the first hour, none after."""

        def poisson(self, lam: np.ndarray) -> np.ndarray:
            out = np.zeros(lam.size, dtype=np.int64)
            out[0] = 1
            return out

    drawn = spot_reclaims(np.full(4, 2.0), 1e-6, 5400.0, OneReclaimFirst())  # type: ignore[arg-type]
    assert drawn.missing_replica_s.tolist() == [3600.0, 1800.0, 0.0, 0.0]


def test_a_missing_replica_costs_only_what_the_rest_cannot_serve() -> None:
    c = 2.0
    half = np.array([0.5])
    # full fleet (4 × 2/s = 8/s): half an hour without one replica loses 2/s × 1,800 s
    assert requests_lost(np.array([8.0]), np.array([4.0]), half, c)[0] == pytest.approx(3600.0)
    # slack of one replica: nothing lost
    assert requests_lost(np.array([6.0]), np.array([4.0]), half, c)[0] == 0.0
    # half a replica of slack: the last replica's 1/s for 1,800 s
    assert requests_lost(np.array([7.0]), np.array([4.0]), half, c)[0] == pytest.approx(1800.0)
    # 1.5 replicas missing on average: one all hour, a second half of it
    lost = requests_lost(np.array([8.0]), np.array([4.0]), np.array([1.5]), c)[0]
    assert lost == pytest.approx((2.0 + 0.5 * 2.0) * SECONDS_PER_HOUR)
