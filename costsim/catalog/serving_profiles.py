"""Readers of measured serving profiles (DESIGN §12): the serving CSV, ``vllm bench serve
--save-result`` JSON, SGLang ``bench_serving`` JSON lines. (Being written: issue 16.)"""

from __future__ import annotations

from pathlib import Path

from costsim.domain.measurements import ServingPoint
from costsim.errors import InputError


def read_serving_profile(path: Path) -> tuple[ServingPoint, ...]:
    """Every measured point of ``path``."""
    raise InputError(str(path), "", "serving profiles cannot be read yet")
