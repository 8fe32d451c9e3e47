"""A one-phase training scenario built in code, for the budget-split tests."""

from __future__ import annotations

from datetime import date

from costsim.catalog.models import load_preset
from costsim.domain.calendar import Calendar
from costsim.domain.phases import TrainingPhase
from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.scenario import DataSizes, Scenario, ScenarioModel
from costsim.domain.workload import Task

SERVER = "hgx-h100-8"


def training_scenario(model: str, tokens: float, *, budget: float | None,
                      deadline_days: float | None, dataset_gb: float = 0.0,
                      seq_len: int = 4096) -> Scenario:
    """Pre-train preset ``model`` on ``tokens`` tokens (one rented plan, for validity)."""
    arch = load_preset(model).architecture
    phase = TrainingPhase(name="pretrain", model="m", task=Task.TRAIN, tokens=tokens,
                          seq_len=seq_len, deadline_days=deadline_days)
    plan = Plan(name="rent", uses=(PhaseUse(phase="pretrain",
                                            entries=(UseEntry(gpu="H100", count=16),)),))
    return Scenario(name="split", calendar=Calendar(start=date(2027, 1, 1), horizon_months=12),
                    models=(ScenarioModel(name="m", architecture=arch, reference=model),),
                    phases=(phase,), plans=(plan,), budget_usd=budget,
                    data=DataSizes(dataset_gb=dataset_gb, checkpoints_retained=2))


