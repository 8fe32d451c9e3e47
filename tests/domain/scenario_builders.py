"""Small scenarios built in code (the YAML loader comes later), shared by domain and sim tests."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from functools import cache

from costsim.catalog.models import load_preset
from costsim.domain.calendar import Calendar
from costsim.domain.phases import (
    ExperimentsPhase,
    GenericJob,
    LoadProfile,
    RequestBucket,
    ServingPhase,
    Slo,
    TrainingPhase,
)
from costsim.domain.plans import Autoscale, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario, ScenarioModel
from costsim.domain.uncertainty import Fixed
from costsim.domain.workload import Task


@cache
def llama_8b() -> ScenarioModel:
    """The llama-3-8b preset as a scenario model."""
    return ScenarioModel(name="assistant", architecture=load_preset("llama-3-8b").architecture,
                         reference="preset:llama-3-8b")


def lifecycle(**changes: object) -> Scenario:
    """Prototype (generic 12 GiB jobs) → fine-tune → serve, with one all-on-demand plan."""
    phases = (
        ExperimentsPhase(name="prototype", duration_months=2, arrivals_per_day=12,
                         job=GenericJob(gpu_memory_gib=12, gpu_hours=Fixed(value=6))),
        TrainingPhase(name="train", after=("prototype",), model="assistant", task=Task.FINETUNE,
                      tokens=2e10, deadline_days=30),
        ServingPhase(name="serve", after=("train",), duration_months=12, model="assistant",
                     load=LoadProfile(peak_requests_per_s=40, growth_pct_per_month=5),
                     requests=(RequestBucket(share=1.0, prompt_tokens=800, output_tokens=250),),
                     slo=Slo(ttft_p95_s=2.0, tpot_p95_s=0.1)),
    )
    plan = Plan(name="all-on-demand", uses=(
        PhaseUse(phase="prototype", entries=(UseEntry(gpu="A10G"),)),
        PhaseUse(phase="train", entries=(UseEntry(gpu="H100", count=16),)),
        PhaseUse(phase="serve", entries=(UseEntry(
            gpu="L4", option=PurchaseOption.ON_DEMAND,
            autoscale=Autoscale(min_replicas=2, max_replicas=64)),)),
    ))
    base = Scenario(name="acme", calendar=Calendar(start=date(2027, 1, 1), horizon_months=18),
                    models=(llama_8b(),), phases=phases, plans=(plan,), budget_usd=1.5e6)
    return replace(base, **changes)  # type: ignore[arg-type]
