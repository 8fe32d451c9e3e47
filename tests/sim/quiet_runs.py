"""A prepared plan whose training phase runs at the performance model's steady time exactly."""

from __future__ import annotations

from dataclasses import replace

from costsim.domain.uncertainty import Fixed
from costsim.sim.prepare import PreparedPlan, TrainingPrep


def without_interruptions(prep: PreparedPlan) -> PreparedPlan:
    """``prep`` with its ``train`` phase free of faults, checkpoints, evaluation and extra loss."""
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    quiet = replace(train, faults_per_gpu_hour=0.0, checkpoint_s=0.0, evaluation_fraction=0.0,
                    extra_loss=Fixed(value=0.0))
    return replace(prep, phases={**prep.phases, "train": quiet})
