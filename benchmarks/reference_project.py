"""The reference 18-month project of the simulator benchmark (issue 9), built in code.

Prototype 2 months at 12 jobs/day (generic 12 GiB, 6 GPU-hour jobs) -> LoRA fine-tune of
Llama-3-8B on 20B tokens (H100) -> a year of serving, diurnal, peaking at 40 requests/s with
mixed request sizes. Four plans: all on-demand, a reserved mix (serving base reserved for a
year, burst on demand), spot with checkpoints (on-demand fallback), and owned servers.
"""

from __future__ import annotations

from datetime import date

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
from costsim.domain.plans import Autoscale, Commitment, OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.scenario import DataSizes, Scenario, ScenarioModel
from costsim.domain.uncertainty import LogNormal, Normal, Uncertainty
from costsim.domain.workload import Task

OD, SPOT = PurchaseOption.ON_DEMAND, PurchaseOption.SPOT


def reference_scenario() -> Scenario:
    """The benchmark's project and its four plans."""
    model = ScenarioModel(name="assistant", architecture=load_preset("llama-3-8b").architecture,
                          reference="preset:llama-3-8b")
    phases = (
        ExperimentsPhase(name="prototype", duration_months=2, arrivals_per_day=12,
                         job=GenericJob(gpu_memory_gib=12, gpu_hours=LogNormal(sigma=0.5,
                                                                               median=6))),
        TrainingPhase(name="train", after=("prototype",), model="assistant",
                      task=Task.FINETUNE, lora_rank=16, tokens=2e10, deadline_days=30),
        ServingPhase(name="serve", after=("train",), duration_months=12, model="assistant",
                     load=LoadProfile(peak_requests_per_s=40, diurnal=True, weekly=True,
                                      growth_pct_per_month=3),
                     requests=(RequestBucket(share=0.7, prompt_tokens=400, output_tokens=150),
                               RequestBucket(share=0.3, prompt_tokens=2000, output_tokens=400)),
                     slo=Slo(ttft_p95_s=2.0, tpot_p95_s=0.1)),
    )

    def plan(name: str, train: UseEntry, serve: tuple[UseEntry, ...], proto: UseEntry,
             **extra: object) -> Plan:
        return Plan(name=name, uses=(PhaseUse(phase="prototype", entries=(proto,)),
                                     PhaseUse(phase="train", entries=(train,)),
                                     PhaseUse(phase="serve", entries=serve)),
                    **extra)  # type: ignore[arg-type]

    auto = Autoscale(min_replicas=2, max_replicas=200)
    plans = (
        plan("all-on-demand", UseEntry(gpu="H100", count=16),
             (UseEntry(gpu="L4", autoscale=auto),), UseEntry(gpu="A10G")),
        plan("reserved-mix", UseEntry(gpu="H100", count=16),
             (UseEntry(gpu="L4", option=PurchaseOption.RESERVED_1Y_NO_UPFRONT, count=24,
                       spill=OD, cloud="aws", autoscale=auto),), UseEntry(gpu="A10G"),
             commitments=(Commitment(gpu="L4", count=24, term_years=1,
                                     payment=Payment.NO_UPFRONT, start=date(2027, 3, 15),
                                     cloud="aws"),)),
        plan("spot-checkpoints", UseEntry(gpu="H100", count=16, option=SPOT, fallback=OD,
                                          cloud="aws"),
             (UseEntry(gpu="L4", autoscale=auto),), UseEntry(gpu="A10G", option=SPOT,
                                                              cloud="aws")),
        plan("buy-servers", UseEntry(gpu="H100", count=16, option=PurchaseOption.OWNED),
             (UseEntry(gpu="L40S", option=PurchaseOption.OWNED, spill=OD, autoscale=auto),),
             UseEntry(gpu="A10G"),
             owned=(OwnedPurchase(server="hgx-h100-8", count=2, purchase=date(2027, 1, 1)),
                    OwnedPurchase(server="l40s-4", count=4, purchase=date(2027, 1, 1)))),
    )
    return Scenario(
        name="reference 18-month project", calendar=Calendar(start=date(2027, 1, 1),
                                                             horizon_months=18),
        models=(model,), phases=phases, plans=plans, budget_usd=2_000_000,
        discount_rate_pct_per_year=8,
        data=DataSizes(dataset_gb=2000, checkpoints_retained=3, egress_gb_per_month=500),
        uncertainty=Uncertainty(throughput_error=LogNormal(sigma=0.1),
                                demand_growth_pct_per_month=Normal(mean=3, sd=2),
                                failure_rate_scale=LogNormal(sigma=0.3),
                                price_drift_pct_per_year=Normal(mean=-10, sd=8)))
