"""What the preparation memoizes across plans (issue 20: replica capacities, training runs, model
jobs, keyed by value; the defaults by identity): a hit is the very object a cold computation
gave, equal to computing it anew; a phase and its probe copy (``after`` dropped) share it; a
different question or a distinct defaults object never gets another's answer."""

from __future__ import annotations

import gc
import weakref
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.catalog.perf_defaults import perf_defaults
from costsim.domain.phases import (
    ExperimentsPhase,
    ModelJob,
    RequestBucket,
    ServingPhase,
    Slo,
    TrainingPhase,
)
from costsim.domain.plans import PhaseUse, UseEntry
from costsim.domain.workload import Task, TrainingFramework
from costsim.errors import CostsimError
from costsim.sim import prepare as prepare_module
from costsim.sim import serving_prep
from costsim.sim.memo import Same
from costsim.sim.prepare import prepare_plan, training_estimate
from costsim.sim.serving_prep import ReplicaCapacities, replica_capacities, sizing_phase
from tests.domain.scenario_builders import lifecycle, llama_8b


def forget() -> None:
    for memo in (serving_prep._replica_capacities, prepare_module._training_estimate,
                 prepare_module._model_job_on):
        memo.cache_clear()


def _serve() -> ServingPhase:
    phase = lifecycle().phase("serve")
    assert isinstance(phase, ServingPhase)
    return phase


def _train() -> TrainingPhase:
    phase = lifecycle().phase("train")
    assert isinstance(phase, TrainingPhase)
    return phase


class _Box:
    """An object that can be referenced weakly."""


def test_same_is_equal_only_to_a_key_of_the_very_same_object() -> None:
    a, b = {"x": 1}, {"x": 1}
    assert Same(a) == Same(a)
    assert hash(Same(a)) == hash(Same(a))
    assert Same(a) != Same(b)  # equal values, distinct objects
    assert Same(a) != a
    box = _Box()
    held = weakref.ref(box)
    key = Same(box)
    del box
    gc.collect()
    assert held() is key.value  # the key keeps it alive: its id cannot be reused meanwhile


def test_a_replica_hit_is_the_cold_answer_and_the_probe_shares_it() -> None:
    forget()
    arch, gpu, defaults, phase = llama_8b().architecture, get_gpu("L4"), perf_defaults(), _serve()
    assert phase.after  # the scenario's phase comes after training; its probe copy does not
    first = replica_capacities(arch, gpu, phase, defaults)
    assert replica_capacities(arch, gpu, phase, defaults) is first
    assert replica_capacities(arch, gpu, replace(phase, after=()), defaults) is first
    cold = serving_prep._replica_capacities.__wrapped__(
        arch, gpu, sizing_phase(phase), Same(defaults), None, ())
    assert cold == first
    assert cold is not first
    # another utilization or SLO is another question
    other_u = replica_capacities(arch, gpu, phase, defaults, target_utilization=0.2)
    assert other_u != first
    tighter = replica_capacities(arch, gpu, replace(phase, slo=Slo(ttft_p95_s=0.5,
                                                                   tpot_p95_s=0.05)), defaults)
    assert tighter != first
    # an equal but distinct defaults object computes anew, to the same values
    copy = replace(defaults)
    again = replica_capacities(arch, gpu, phase, copy)
    assert again == first
    assert again is not first


@settings(max_examples=12, deadline=None)
@given(gpu=st.sampled_from(("L4", "A10G", "H100", "T4")),
       sizes=st.lists(st.tuples(st.sampled_from((64, 800, 4000)), st.sampled_from((32, 250))),
                      min_size=1, max_size=2),
       ttft=st.sampled_from((None, 0.4, 2.0)), utilization=st.sampled_from((None, 0.5)))
def test_replica_memo_answers_as_a_cold_computation(
        gpu: str, sizes: list[tuple[int, int]], ttft: float | None,
        utilization: float | None) -> None:
    phase = replace(_serve(), slo=Slo(ttft_p95_s=ttft),
                    requests=tuple(RequestBucket(share=1 / len(sizes), prompt_tokens=p,
                                                 output_tokens=o) for p, o in sizes))
    arch, spec, defaults = llama_8b().architecture, get_gpu(gpu), perf_defaults()

    def ask() -> ReplicaCapacities | str:
        try:
            return replica_capacities(arch, spec, phase, defaults,
                                      target_utilization=utilization)
        except CostsimError as error:
            return str(error)

    warm_first, warm_again = ask(), ask()
    forget()
    cold = ask()
    assert cold == warm_first == warm_again
    if isinstance(warm_first, ReplicaCapacities):
        assert warm_again is warm_first


def test_a_training_hit_is_the_cold_answer_and_the_probe_shares_it() -> None:
    forget()
    scenario, phase, gpu, defaults = lifecycle(), _train(), get_gpu("H100"), perf_defaults()
    first = training_estimate(scenario, phase, gpu, 16, defaults)
    assert training_estimate(scenario, phase, gpu, 16, defaults) is first
    assert training_estimate(scenario, replace(phase, after=()), gpu, 16, defaults) is first
    cold = prepare_module._training_estimate.__wrapped__(
        scenario.model(phase.model).architecture, replace(phase, after=()), gpu, 16,
        scenario.measurements.training, Same(defaults))
    assert cold == first
    assert cold is not first
    assert training_estimate(scenario, phase, gpu, 8, defaults) != first
    other = replace(phase, framework=next(f for f in TrainingFramework if f != phase.framework))
    assert training_estimate(scenario, other, gpu, 16, defaults) is not first


def test_a_failed_estimate_is_not_memoized() -> None:
    forget()
    scenario, defaults = lifecycle(), perf_defaults()
    huge = replace(_train(), tokens=1e12, task=Task.TRAIN, after=())
    for _ in range(2):
        with pytest.raises(CostsimError):
            training_estimate(scenario, huge, get_gpu("T4"), 1, defaults)
    assert prepare_module._training_estimate.cache_info().currsize == 0


def test_model_jobs_are_shared_by_every_plan_on_the_gpu() -> None:
    forget()
    job = ModelJob(model="assistant", task=Task.FINETUNE, tokens=2e8, lora_rank=16)
    scenario = lifecycle()
    phases = tuple(replace(p, job=job) if isinstance(p, ExperimentsPhase) else p
                   for p in scenario.phases)
    # a LoRA fine-tune of the 8B model on one 48 GB card
    base = scenario.plans[0]
    plan = replace(base, uses=tuple(
        PhaseUse(phase=u.phase, entries=(UseEntry(gpu="L40S"),)) if u.phase == "prototype" else u
        for u in base.uses))
    scenario = replace(scenario, phases=phases, plans=(plan,))
    warm = prepare_plan(scenario, plan)
    again = prepare_plan(scenario, plan)
    assert prepare_module._model_job_on.cache_info().hits >= 1
    assert again.phases["prototype"] == warm.phases["prototype"]
    forget()
    cold = prepare_plan(scenario, plan)
    assert cold.phases == warm.phases
    assert cold.infeasible_reasons == warm.infeasible_reasons == ()
