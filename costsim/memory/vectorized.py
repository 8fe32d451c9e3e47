"""Vectorized evaluation of many configurations: one numpy pass per column, optionally split
over threads (numpy releases the GIL inside its array loops).

Build the columns with :func:`costsim.memory.estimate.encode_training` /
:func:`~costsim.memory.estimate.encode_inference` and :func:`~costsim.memory.estimate.stack_rows`,
or fill the arrays directly (see :data:`~costsim.memory.core.TRAIN_COLUMNS`). The equations are
the ones the scalar path runs (:mod:`costsim.memory.core`), so both agree exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields

import numpy as np

from costsim.memory.core import (
    ComponentArrays,
    FloatArray,
    inference_components,
    training_components,
)
from costsim.memory.runtime import DEFAULT_POLICY, HeadroomPolicy

MIN_ROWS_PER_WORKER = 20_000


def _split(columns: Mapping[str, FloatArray], parts: int) -> list[dict[str, FloatArray]]:
    rows = len(next(iter(columns.values())))
    bounds = np.linspace(0, rows, parts + 1).astype(int)
    return [{name: values[lo:hi] for name, values in columns.items()}
            for lo, hi in itertools.pairwise(bounds)]


def _join(pieces: list[ComponentArrays]) -> ComponentArrays:
    return ComponentArrays(**{f.name: np.concatenate([getattr(p, f.name) for p in pieces])
                              for f in fields(ComponentArrays)})


def _evaluate(function: Callable[[Mapping[str, FloatArray], HeadroomPolicy], ComponentArrays],
              columns: Mapping[str, FloatArray], policy: HeadroomPolicy,
              workers: int) -> ComponentArrays:
    rows = len(next(iter(columns.values())))
    parts = max(1, min(workers, rows // MIN_ROWS_PER_WORKER))
    if parts == 1:
        return function(columns, policy)
    chunks = _split(columns, parts)
    with ThreadPoolExecutor(max_workers=parts) as pool:
        pieces = list(pool.map(lambda chunk: function(chunk, policy), chunks))
    return _join(pieces)


def evaluate_training(columns: Mapping[str, FloatArray], policy: HeadroomPolicy = DEFAULT_POLICY,
                      workers: int = 1) -> ComponentArrays:
    """Training / fine-tuning memory of every row (``workers`` threads for large inputs)."""
    return _evaluate(training_components, columns, policy, workers)


def evaluate_inference(columns: Mapping[str, FloatArray], policy: HeadroomPolicy = DEFAULT_POLICY,
                       workers: int = 1) -> ComponentArrays:
    """Inference memory of every row (``workers`` threads for large inputs)."""
    return _evaluate(inference_components, columns, policy, workers)
