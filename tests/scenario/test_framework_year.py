"""A training phase's optional ``framework_year``: it reaches the setup and sets the stack's era."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.catalog.perf_defaults import perf_defaults
from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.phases import TrainingPhase
from costsim.errors import ScenarioError
from costsim.sim.phase_setup import phase_setup


def _scenario(tmp_path: Path, year: int | None) -> Path:
    phase: dict[str, object] = {"name": "train", "kind": "training", "model": "m",
                                "tokens": 1e9, "precision": "bf16"}
    if year is not None:
        phase["framework_year"] = year
    doc = {"name": "fy", "start": "2027-01-01", "horizon_months": 1,
           "models": {"m": {"preset": "gpt2"}}, "phases": [phase],
           "plans": [{"name": "od", "use": {"train": {"gpu": "A100", "count": 8}}}]}
    path = tmp_path / f"fy-{year}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _phase(path: Path) -> TrainingPhase:
    phase = load_scenario_file(path).scenario.phases[0]
    assert isinstance(phase, TrainingPhase)
    return phase


def test_the_year_reaches_the_training_setup_and_sets_the_era(tmp_path: Path) -> None:
    gpu = get_gpu("A100")
    arch = load_preset("gpt2").architecture
    stack = perf_defaults().training.stack
    eras = {}
    for year in (None, 2021, 2024):
        phase = _phase(_scenario(tmp_path, year))
        assert phase.framework_year == year
        setup, _ = phase_setup(arch, phase, gpu)
        assert setup.framework_year == year
        eras[year] = stack.era(gpu.generation, setup.precision, setup.framework_year)
    # bf16 on A100 is inferred current; a 2021 stack is legacy whatever the precision.
    assert eras[None] == eras[2024] != eras[2021]


@pytest.mark.parametrize("year", [2014, 2101])
def test_a_year_outside_its_range_names_the_key(tmp_path: Path, year: int) -> None:
    with pytest.raises(ScenarioError, match=r"phases\[0\]\.framework_year"):
        load_scenario_file(_scenario(tmp_path, year))
