"""Shared fixtures: the test data folder and a seeded random generator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

DATA_DIR = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    """Folder of test data copied from the shared validation set (see data/SOURCES.md)."""
    return DATA_DIR


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator; engines take randomness as an argument."""
    return np.random.default_rng(0)
