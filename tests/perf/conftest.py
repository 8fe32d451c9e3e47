"""Fixtures of the performance-model tests: the shipped defaults and test architectures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from costsim.catalog.models import load_architecture_file
from costsim.catalog.perf_defaults import perf_defaults
from costsim.domain.architecture import Architecture
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Task, TrainingSetup
from costsim.perf.train_estimate import TrainingEstimate

ARCH_DIR = Path(__file__).parents[1] / "data" / "architectures"


@pytest.fixture(scope="session")
def defaults() -> PerfDefaults:
    """The shipped performance defaults (costsim/data/perf_*.csv)."""
    return perf_defaults()


# The training setup the layout-search tests start from: bf16, 4,096 tokens, the layout left to
# the search (tests/perf/test_train_estimate.py, test_train_memo.py).
SEARCH_SETUP = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout(),
                             seq_len=4096)


def arch(name: str) -> Architecture:
    """A test architecture from tests/data/architectures/NAME.json."""
    return load_architecture_file(ARCH_DIR / f"{name}.json")


def reported_figure(pattern: str, text: str) -> float:
    """The number ``pattern``'s first group finds in a row's ``reported`` text (commas dropped)."""
    match = re.search(pattern, text)
    assert match, f"no {pattern!r} in {text!r}"
    return float(match.group(1).replace(",", ""))


def row_tolerance(row: dict[str, str]) -> float:
    """A row's ``tolerance`` column ("+-20%") as a fraction."""
    match = re.fullmatch(r"\+-(\d+)%", row["tolerance"])
    assert match, row["tolerance"]
    return int(match.group(1)) / 100


def megatron_tflops_per_gpu(est: TrainingEstimate, model: Architecture) -> float:
    """Megatron's FLOP basis: 96·B·s·l·h²·(1 + s/6h + V/16lh) per iteration (full recompute,
    attention and logits included; Narayanan et al. 2021, Shoeybi et al. 2019)."""
    s, layers, h, v = est.setup.seq_len, model.num_layers, model.hidden_size, model.vocab_size
    per_token = 96 * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h))
    return per_token * est.step.tokens_per_s / est.gpus / 1e12
