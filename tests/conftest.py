"""Shared fixtures: the test data folder and a seeded random generator."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

# CI draws the same examples on every run, so a landing never fails on an example drawn for the
# first time; local runs keep exploring new ones (and keep what they find in .hypothesis/).
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

DATA_DIR = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    """Folder of test data copied from the shared validation set (see data/SOURCES.md)."""
    return DATA_DIR


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator; engines take randomness as an argument."""
    return np.random.default_rng(0)
