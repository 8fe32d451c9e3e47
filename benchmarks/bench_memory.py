"""Benchmark of the vectorized memory engine and of ``costsim memory --grid``.

Plain script (not a test): ``python benchmarks/bench_memory.py [--rows N] [--grid-rows N …]
[--compare] [--no-engine]``. Prints configurations per second for the engine alone (training and
inference equations over numpy arrays) and rows per second for the whole ``costsim memory
--grid`` process (interpreter start-up, imports, CSV parsing, validation, encoding, evaluation,
writing), timed from outside as a user would see it.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.cli.memory_grid import run_grid
from costsim.domain.precision import Dtype
from costsim.domain.workload import InferenceSetup, ParallelLayout, Task, TrainingSetup
from costsim.memory.core import INFER_COLUMNS, TRAIN_COLUMNS
from costsim.memory.estimate import encode_inference, encode_training, stack_rows
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.memory.vectorized import evaluate_inference, evaluate_training

MODELS = ("llama-2-7b", "llama-3-8b", "llama-2-70b", "mixtral-8x7b", "qwen2.5-72b", "mistral-7b")


def random_columns(rows: int, infer: bool, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random but valid configurations: model rows from presets, knobs drawn per row."""
    gpu = get_gpu("H100")
    base = []
    for name in MODELS:
        arch = load_preset(name).architecture
        if infer:
            base.append(encode_inference(arch, gpu, InferenceSetup(
                precision=Dtype.BF16, layout=ParallelLayout())))
        else:
            base.append(encode_training(arch, gpu, TrainingSetup(
                task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout())))
    columns = INFER_COLUMNS if infer else TRAIN_COLUMNS
    table = stack_rows(base, columns)
    pick = rng.integers(0, len(base), rows)
    cols = {name: values[pick] for name, values in table.items()}
    pow2 = np.array([1.0, 2.0, 4.0, 8.0])
    cols["tp"] = rng.choice(pow2, rows)
    cols["pp"] = rng.choice(pow2, rows)
    if infer:
        cols["batch"] = rng.integers(1, 257, rows).astype(np.float64)
        cols["context"] = rng.integers(128, 4097, rows).astype(np.float64)
    else:
        cols["dp"] = rng.choice(np.array([1.0, 2.0, 8.0, 64.0, 512.0]), rows)
        cols["zero"] = rng.integers(0, 4, rows).astype(np.float64)
        cols["sp"] = rng.integers(0, 2, rows).astype(np.float64)
        cols["micro_batch"] = rng.integers(1, 17, rows).astype(np.float64)
        cols["seq_len"] = rng.choice(np.array([512.0, 1024.0, 2048.0, 4096.0]), rows)
        cols["grad_accum"] = rng.integers(1, 33, rows).astype(np.float64)
        cols["recompute"] = rng.integers(0, 3, rows).astype(np.float64)
    return cols


def bench_engine(rows: int, repeats: int, workers: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    train = random_columns(rows, False, rng)
    infer = random_columns(rows, True, rng)
    best_train = best_infer = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        evaluate_training(train, DEFAULT_POLICY, workers)
        best_train = min(best_train, time.perf_counter() - start)
        start = time.perf_counter()
        evaluate_inference(infer, DEFAULT_POLICY, workers)
        best_infer = min(best_infer, time.perf_counter() - start)
    return rows / best_train, rows / best_infer


def write_grid(path: Path, rows: int) -> None:
    """The benchmark grid: training rows over six models, two GPUs and random layouts."""
    rng = np.random.default_rng(1)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "task", "tp", "pp", "dp", "zero", "micro_batch",
                         "seq_len", "recompute", "gpu"])
        for _ in range(rows):
            writer.writerow([
                rng.choice(MODELS), "train", rng.choice([1, 2, 4, 8]),
                rng.choice([1, 2, 4]), rng.choice([1, 2, 8, 64]), rng.integers(0, 4),
                rng.integers(1, 9), rng.choice([512, 1024, 2048]),
                rng.choice(["none", "selective", "full"]), rng.choice(["H100", "A100-80GB"]),
            ])


def bench_grid(rows: int, repeats: int, compare: bool) -> tuple[float, float, float | None]:
    """Rows per second of the whole ``costsim memory --grid`` process (start-up, imports, CSV
    in, evaluation, CSV out; the best of ``repeats`` runs) by wall-clock time and by the CPU
    time (user + system) of the process, which a busy machine disturbs less; and with
    ``compare`` of the one-by-one reference path in-process too (whose output must be
    byte-identical)."""
    with tempfile.TemporaryDirectory() as tmp:
        grid = Path(tmp) / "grid.csv"
        write_grid(grid, rows)
        out = Path(tmp) / "out.csv"
        best = best_cpu = float("inf")
        for _ in range(repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "costsim", "memory", "--grid", str(grid),
                            "--out", str(out), "--force"], check=True)
            best = min(best, time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            best_cpu = min(best_cpu, after.ru_utime - before.ru_utime
                           + after.ru_stime - before.ru_stime)
        if not compare:
            return rows / best, rows / best_cpu, None
        reference = Path(tmp) / "reference.csv"
        start = time.perf_counter()
        run_grid(grid, reference, reference=True)
        elapsed_reference = time.perf_counter() - start
        assert out.read_bytes() == reference.read_bytes(), "fast and reference paths differ"
    return rows / best, rows / best_cpu, rows / elapsed_reference


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000, help="engine configurations")
    parser.add_argument("--grid-rows", type=int, nargs="+", default=[100_000, 200_000],
                        help="grid CSV rows (one whole-process run per size)")
    parser.add_argument("--no-engine", action="store_true", help="time the grid command only")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compare", action="store_true",
                        help="also time the one-by-one reference grid path (and check that "
                             "both write the same bytes)")
    args = parser.parse_args()
    for workers in () if args.no_engine else (1, 2):
        train_rate, infer_rate = bench_engine(args.rows, args.repeats, workers)
        print(f"engine, {workers} thread(s), training:  {args.rows:,} configs, "
              f"{train_rate:,.0f} configs/s")
        print(f"engine, {workers} thread(s), inference: {args.rows:,} configs, "
              f"{infer_rate:,.0f} configs/s")
    print(f"machine: {os.cpu_count()} CPUs")
    for rows in args.grid_rows:
        grid_rate, cpu_rate, reference_rate = bench_grid(rows, args.repeats, args.compare)
        print(f"costsim memory --grid, whole process (CSV in → CSV out): {rows:,} rows, "
              f"{grid_rate:,.0f} rows/s wall, {cpu_rate:,.0f} rows/s of CPU time "
              f"(best of {args.repeats}; load average {os.getloadavg()[0]:.1f})")
        if reference_rate is not None:
            print(f"  one-by-one reference path in-process (same bytes): "
                  f"{reference_rate:,.0f} rows/s, {grid_rate / reference_rate:.1f}× slower "
                  "than the grid command")


if __name__ == "__main__":
    run()
