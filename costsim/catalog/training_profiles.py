"""Readers of measured training runs (DESIGN §12): the training CSV, Megatron-LM/NeMo and
torchtitan logs, HF Trainer ``trainer_state.json``. (Being written: issue 17.)"""

from __future__ import annotations

from pathlib import Path

from costsim.domain.measurements import TrainingPoint
from costsim.errors import InputError


def read_training_profile(path: Path) -> tuple[TrainingPoint, ...]:
    """Every measured point of ``path``."""
    raise InputError(str(path), "", "training runs cannot be read yet")
