"""Fixtures of the performance-model tests: the shipped defaults and test architectures."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.catalog.models import load_architecture_file
from costsim.catalog.perf_defaults import perf_defaults
from costsim.domain.architecture import Architecture
from costsim.domain.performance import PerfDefaults

ARCH_DIR = Path(__file__).parents[1] / "data" / "architectures"


@pytest.fixture(scope="session")
def defaults() -> PerfDefaults:
    """The shipped performance defaults (costsim/data/perf_*.csv)."""
    return perf_defaults()


def arch(name: str) -> Architecture:
    """A test architecture from tests/data/architectures/NAME.json."""
    return load_architecture_file(ARCH_DIR / f"{name}.json")
