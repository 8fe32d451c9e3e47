"""GPU quotas (issue 21 item 4, DESIGN §13): a fixed count over a quota makes the plan
infeasible with the reason; an elastic fleet is capped at it and the shortfall shows.

Oracles are hand-computed: a 64-GPU run under a 32-GPU quota; a serving fleet that needs 4
one-GPU replicas (4 requests/s at 1 request/s each, capacities fixed through the simulator's
one seam for them) under a 3-GPU quota serves 3 ÷ 4 = 0.75 of the requests within the SLO;
elastic jobs under a quota queue first come, first served.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np
import pytest

from costsim.domain.calendar import Calendar
from costsim.domain.gpu import GpuSpec
from costsim.domain.phases import LoadProfile, RequestBucket, ServingPhase, TrainingPhase
from costsim.domain.plans import Commitment, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.quotas import Quota
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Fixed, Uncertainty
from costsim.domain.workload import Task
from costsim.errors import ScenarioError
from costsim.sim.montecarlo import simulate_block
from costsim.sim.prepare import ServingPrep, prepare_plan
from costsim.sim.quotas import queued_starts
from costsim.sim.serving_prep import ReplicaCapacities
from costsim.sim.waits import WaitHistogram
from tests.domain.scenario_builders import llama_8b

EXACT = Uncertainty(throughput_error=Fixed(value=1.0))


def _training(entry: UseEntry, quotas: tuple[Quota, ...],
              commitments: tuple[Commitment, ...] = ()) -> Scenario:
    phase = TrainingPhase(name="train", model="assistant", task=Task.FINETUNE, tokens=5e9,
                          lora_rank=16)
    plan = Plan(name="x", cloud="aws", region="us-east-1", commitments=commitments,
                uses=(PhaseUse(phase="train", entries=(entry,)),))
    return Scenario(name="q", calendar=Calendar(start=date(2027, 1, 1), horizon_months=12),
                    models=(llama_8b(),), phases=(phase,), plans=(plan,), uncertainty=EXACT,
                    quotas=quotas)


def _reasons(scenario: Scenario) -> tuple[str, ...]:
    return prepare_plan(scenario, scenario.plans[0]).infeasible_reasons


def test_a_training_count_over_the_quota_makes_the_plan_infeasible_with_the_reason() -> None:
    quota = Quota(cloud="aws", region="us-east-1", gpu="H100", option="on-demand", max_gpus=32)
    scenario = _training(UseEntry(gpu="H100", count=64), (quota,))
    assert _reasons(scenario) == ("plan 'x', phase 'train': 64 H100 on aws us-east-1 on-demand "
                                  "exceeds the quota of 32 GPUs (quotas[0])",)
    # at the quota it fits; a quota of another option, region, cloud or GPU does not apply
    assert _reasons(_training(UseEntry(gpu="H100", count=32), (quota,))) == ()
    for other in (Quota(cloud="aws", gpu="H100", option="spot", max_gpus=8),
                  Quota(cloud="aws", region="us-west-2", gpu="H100", max_gpus=8),
                  Quota(cloud="gcp", gpu="H100", max_gpus=8),
                  Quota(cloud="aws", gpu="A100-80GB", max_gpus=8)):
        assert _reasons(_training(UseEntry(gpu="H100", count=64), (other,))) == ()


def test_the_smallest_applying_quota_binds_and_a_cloud_wide_one_applies_to_every_region() -> None:
    quotas = (Quota(cloud="aws", gpu="H100", max_gpus=48, index=0),
              Quota(cloud="aws", gpu="H100", option="on-demand", max_gpus=16, index=1))
    (reason,) = _reasons(_training(UseEntry(gpu="H100", count=32), quotas))
    assert reason.endswith("32 H100 on aws us-east-1 on-demand exceeds the quota of 16 GPUs "
                           "(quotas[1])")


def test_reservations_over_the_quota_are_infeasible() -> None:
    reserved = Quota(cloud="aws", gpu="H100", option="reserved", max_gpus=8)
    implied = UseEntry(gpu="H100", count=16, option=PurchaseOption.RESERVED_1Y_NO_UPFRONT)
    (reason,) = _reasons(_training(implied, (reserved,)))
    assert reason == ("plan 'x', phase 'train': 16 H100 on aws us-east-1 reserved exceeds the "
                      "quota of 8 GPUs (quotas[0])")
    commitment = Commitment(gpu="H100", count=16, term_years=1, payment=Payment.NO_UPFRONT,
                            start=date(2027, 1, 1))
    on_it = UseEntry(gpu="H100", count=16, option=PurchaseOption.RESERVED_1Y_NO_UPFRONT)
    reasons = _reasons(_training(on_it, (reserved,), (commitment,)))
    assert ("plan 'x', commitment of H100 from 2027-01-01: 16 H100 on aws us-east-1 reserved "
            "exceeds the quota of 8 GPUs (quotas[0])") in reasons


def test_a_quota_checks_its_own_ranges() -> None:
    with pytest.raises(ScenarioError, match="max_gpus"):
        Quota(cloud="aws", gpu="H100", max_gpus=-1)
    with pytest.raises(ScenarioError, match="option"):
        Quota(cloud="aws", gpu="H100", option="owned", max_gpus=1)


def one_request_per_s(arch: Any, gpu: GpuSpec, phase: Any, defaults: Any,
                      **_: Any) -> ReplicaCapacities:
    per_bucket = tuple(1.0 for _ in phase.requests)
    return ReplicaCapacities(gpus_per_replica=1, sizing_requests_per_s=per_bucket,
                             service_requests_per_s=per_bucket)


def _serving(quotas: tuple[Quota, ...]) -> Scenario:
    phase = ServingPhase(name="serve", duration_months=1, model="assistant",
                         load=LoadProfile(peak_requests_per_s=4.0, diurnal=False),
                         requests=(RequestBucket(share=1.0, prompt_tokens=500,
                                                 output_tokens=200),))
    plan = Plan(name="x", cloud="aws", region="us-east-1",
                uses=(PhaseUse(phase="serve", entries=(UseEntry(gpu="L4"),)),))
    return Scenario(name="q", calendar=Calendar(start=date(2027, 1, 4), horizon_months=1),
                    models=(llama_8b(),), phases=(phase,), plans=(plan,), uncertainty=EXACT,
                    quotas=quotas)


def _attainment(scenario: Scenario) -> tuple[float, int | None]:
    prep = prepare_plan(scenario, scenario.plans[0])
    assert prep.feasible, prep.infeasible_reasons
    serve = prep.phases["serve"]
    assert isinstance(serve, ServingPrep)
    (rep,) = simulate_block(prep, seed=3, replications=1, indices=range(1))
    (record,) = rep.serving
    return record.served_within_slo / record.requests, serve.entries[0].max_replicas


def test_a_quota_caps_a_serving_fleet_and_slo_attainment_is_capacity_over_demand(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("costsim.sim.serving_prep.replica_capacities", one_request_per_s)
    free, cap = _attainment(_serving(()))
    assert (free, cap) == (pytest.approx(1.0), None)
    prep = prepare_plan(_serving(()), _serving(()).plans[0])
    serve = prep.phases["serve"]
    assert isinstance(serve, ServingPrep)
    pool = serve.entries[0].source.rental
    assert pool is not None
    assert pool.gpus_per_instance == 1  # one L4 per g6 instance
    # 4 replicas needed at 4 requests/s; the quota allows 3 GPUs = 3 replicas: 3/4 served
    capped, cap = _attainment(_serving((Quota(cloud="aws", gpu="L4", max_gpus=3),)))
    assert cap == 3
    assert capped == pytest.approx(3 / 4)


def test_a_quota_below_one_replica_makes_the_serving_plan_infeasible(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("costsim.sim.serving_prep.replica_capacities", one_request_per_s)
    scenario = _serving((Quota(cloud="aws", gpu="L4", max_gpus=0),))
    (reason,) = _reasons(scenario)
    assert reason == ("plan 'x', phase 'serve': the quota of 0 GPUs (quotas[0]) is smaller "
                      "than one replica of 1 L4 (whole instances)")


def test_capped_elastic_jobs_queue_first_come_first_served() -> None:
    # two slots; three jobs of 10 s arriving at 0, 1, 2: the third waits for the first (t=10)
    starts = queued_starts(np.array([0.0, 1.0, 2.0]), np.array([10.0, 10.0, 10.0]), 2)
    assert starts.tolist() == [0.0, 1.0, 10.0]
    # a job arriving after a slot frees starts on arrival
    starts = queued_starts(np.array([0.0, 5.0, 20.0]), np.array([10.0, 10.0, 1.0]), 1)
    assert starts.tolist() == [0.0, 10.0, 20.0]


def test_elastic_jobs_under_a_quota_wait_and_without_one_never_do() -> None:
    from costsim.domain.phases import ExperimentsPhase, GenericJob
    from costsim.sim.engine import simulate_replication
    from costsim.sim.prepare import ExperimentsPrep
    from costsim.sim.streams import replication_seeds

    busy = ExperimentsPhase(name="proto", duration_months=0.5, arrivals_per_day=40,
                            job=GenericJob(gpu_memory_gib=12, gpu_hours=Fixed(value=8)))
    plan = Plan(name="p", cloud="aws", region="us-east-1",
                uses=(PhaseUse(phase="proto", entries=(UseEntry(gpu="L4"),)),))

    def waits(quotas: tuple[Quota, ...]) -> tuple[int | None, WaitHistogram]:
        scenario = Scenario(name="q", calendar=Calendar(start=date(2027, 1, 1),
                                                        horizon_months=2),
                            models=(), phases=(busy,), plans=(plan,), quotas=quotas)
        prep = prepare_plan(scenario, plan)
        proto = prep.phases["proto"]
        assert isinstance(proto, ExperimentsPrep)
        rep = simulate_replication(prep, replication_seeds(0, 1)[0], 0)
        return proto.max_concurrent_jobs, rep.queue_waits

    slots, free = waits(())
    assert slots is None
    assert free.jobs > 0
    assert free.waited == 0
    # 40 jobs of 8 h a day keep ~13 busy on average; 4 at once cannot keep up: they queue
    slots, capped = waits((Quota(cloud="aws", gpu="L4", option="on-demand", max_gpus=4),))
    assert slots == 4
    assert capped.jobs == free.jobs
    assert capped.waited > 0
