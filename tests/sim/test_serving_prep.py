"""Routing a serving fleet: by the plan's traffic shares, or each size whole to the cheapest entry.

Capacities through the seam :func:`costsim.sim.serving_prep.replica_capacities`: an L40S
replica serves 3 requests/s of either size, an L4 replica 1 request/s of the short size and none
of the long one (as a card whose memory cannot hold the long context within the SLO).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from costsim.domain.calendar import Calendar
from costsim.domain.gpu import GpuSpec
from costsim.domain.phases import LoadProfile, RequestBucket, ServingPhase
from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.scenario import Scenario
from costsim.errors import ScenarioError
from costsim.sim.prepare import ServingPrep, prepare_plan
from costsim.sim.serving_prep import ReplicaCapacities
from tests.domain.scenario_builders import llama_8b

CAPACITY = {"L40S": (3.0, 3.0), "L4": (1.0, 0.0)}  # requests/s per bucket


def fixed_capacities(arch: Any, gpu: GpuSpec, phase: Any, defaults: Any,
                     **_: Any) -> ReplicaCapacities:
    return ReplicaCapacities(gpus_per_replica=1, sizing_requests_per_s=CAPACITY[gpu.name],
                             service_requests_per_s=CAPACITY[gpu.name])


@pytest.fixture(autouse=True)
def capacities(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("costsim.sim.serving_prep.replica_capacities", fixed_capacities)


PHASE = ServingPhase(name="serve", duration_months=1, model="assistant",
                     load=LoadProfile(peak_requests_per_s=10, diurnal=False),
                     requests=(RequestBucket(share=0.6, prompt_tokens=300, output_tokens=100),
                               RequestBucket(share=0.4, prompt_tokens=4000, output_tokens=500)))


def _prep(*entries: UseEntry) -> ServingPrep | tuple[str, ...]:
    plan = Plan(name="p", cloud="aws", region="us-east-1",
                uses=(PhaseUse(phase="serve", entries=entries),))
    scenario = Scenario(name="s", calendar=Calendar(start=date(2027, 1, 4), horizon_months=1),
                        models=(llama_8b(),), phases=(PHASE,), plans=(plan,))
    prepared = prepare_plan(scenario, plan)
    if not prepared.feasible:
        return prepared.infeasible_reasons
    serve = prepared.phases["serve"]
    assert isinstance(serve, ServingPrep)
    return serve


def test_traffic_shares_set_each_entrys_load_and_mix_capacity() -> None:
    prep = _prep(UseEntry(gpu="L40S", traffic=(0.5, 1.0)), UseEntry(gpu="L4", traffic=(0.5, 0.0)))
    assert isinstance(prep, ServingPrep)
    big, small = prep.entries
    # L40S: 0.6·0.5 + 0.4·1 = 0.7 of the requests; capacity 3/s on both sizes
    assert big.request_share == pytest.approx(0.7)
    assert big.sizing_capacity_s == pytest.approx(3.0)
    assert big.prompt_tokens == pytest.approx((0.3 * 300 + 0.4 * 4000) / 0.7)
    assert small.request_share == pytest.approx(0.3)
    assert small.sizing_capacity_s == pytest.approx(1.0)


def test_without_traffic_each_size_goes_whole_to_the_cheapest_entry() -> None:
    prep = _prep(UseEntry(gpu="L40S"), UseEntry(gpu="L4"))
    assert isinstance(prep, ServingPrep)
    shares = {e.source.gpu: e.request_share for e in prep.entries}
    assert shares.get("L40S", 0.0) + shares.get("L4", 0.0) == pytest.approx(1.0)
    assert shares["L40S"] >= 0.4  # the long size has only the L40S


def test_traffic_sent_to_an_entry_that_cannot_serve_the_size_makes_the_plan_infeasible() -> None:
    reasons = _prep(UseEntry(gpu="L40S", traffic=(0.5, 0.75)),
                    UseEntry(gpu="L4", traffic=(0.5, 0.25)))
    assert isinstance(reasons, tuple)
    assert any("L4 does not serve requests of 4000+500 tokens within the SLO, but its traffic "
               "sends it 0.25 of them" in r for r in reasons), reasons


def test_a_fleet_gives_traffic_on_every_entry_or_none() -> None:
    with pytest.raises(ScenarioError, match=r"fleet\.1: gives no traffic shares"):
        PhaseUse(phase="serve", entries=(UseEntry(gpu="L40S", traffic=(1.0, 1.0)),
                                         UseEntry(gpu="L4")))
    with pytest.raises(ScenarioError, match=r"requests\[1\] add up to 1.25"):
        PhaseUse(phase="serve", entries=(UseEntry(gpu="L40S", traffic=(1.0, 1.0)),
                                         UseEntry(gpu="L4", traffic=(0.0, 0.25))))
    use = PhaseUse(phase="serve", entries=(UseEntry(gpu="L40S", traffic=(1.0, 0.5 + 4e-7)),
                                           UseEntry(gpu="L4", traffic=(0.0, 0.5))))
    assert use.routed  # within the ±1e-6 tolerance
    plan = Plan(name="p", uses=(replace(use, entries=(UseEntry(gpu="L40S", traffic=(1.0,)),
                                                      UseEntry(gpu="L4", traffic=(0.0,)))),))
    with pytest.raises(ScenarioError, match=r"needs one share per request bucket of phase "
                                            r"'serve' \(2\), got 1"):
        Scenario(name="s", calendar=Calendar(start=date(2027, 1, 4), horizon_months=1),
                 models=(llama_8b(),), phases=(PHASE,), plans=(plan,))
