"""Speed-up of ``costsim sweep`` on 2 local Dask workers over 1 (issue 12: the sweep big enough
that one worker takes at least 60 s, so start-up is small beside it; target efficiency >= 0.8
on 2 cores).

The sweep is the flagship what-if (sweeps/lifecycle-what-if.yaml: 18 variants of
scenarios/lifecycle-assistant.yaml, every plan) with ``--replications`` each. Each run starts
its own LocalCluster (start-up included in the wall time, as a user waits for it), runs every
task with no cache, and the rows of the two runs are checked to be identical. The process is
pinned to ``--cores`` cores.

Run: ``.venv/bin/python benchmarks/bench_sweep.py [--replications 100] [--cores 2]``.

Measured (2026-12-01, 2-core x86_64 VM shared with five other sessions, Python 3.11.7), after
the workers encode their own blocks; the load average is the bench's own reading:

| replications | tasks | 1 worker | 2 workers | speed-up | efficiency | load average |
|---|---|---|---|---|---|---|
| 100 | 180 | 78.4 s | 41.3 s | 1.90 | 0.95 | 0.2 → 1.6 (quiet) |
| 60 | 108 | 46.0 s | 25.0 s | 1.84 | 0.92 | 0.4 → 1.5 (quiet) |
| 80 | 144 | 53.9 s | 32.6 s | 1.65 | 0.83 | 1.5 → 1.8 |
| 100 | 180 | 98.5 s | 71.3 s | 1.38 | 0.69 | 1.1 → 3.3 (others' tests ran) |
| 100 | 180 | 71.2 s | 72.3 s | 0.98 | 0.49 | 1.8 → 3.2 (others' tests ran) |
| 60 | 108 | 67.0 s | 47.3 s | 1.41 | 0.71 | 3.5 → 5.7 |

With both cores free the target is met: 100 replications, one worker 78.4 s (over 60 s, so
start-up is small beside it), two 41.3 s, efficiency 0.95 (and 0.92, 0.83 at 60 and 80). Runs
while other sessions' tests held the cores gave 0.49-0.71. CPU accounting does not depend on
the load: with 2 workers the workers use no more CPU than with 1 (70.5 vs 77.9 s at 100
replications), and this process (Dask's scheduler and nannies, receiving results, the
summaries) ~12 % of the total — it shares the two cores with the workers. Before the workers
encoded their own blocks the busy machine gave 0.42-0.58.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costsim.sweep.results import SweepRow
    from costsim.sweep.tasks import SweepSettings, SweepVariant

ROOT = Path(__file__).resolve().parents[1]
TARGET_EFFICIENCY = 0.8
MIN_ONE_WORKER_S = 60.0


def _cpu_s() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _sweep(variants: Sequence[SweepVariant], settings: SweepSettings, workers: int
           ) -> tuple[float, float, tuple[SweepRow, ...], tuple[float, float]]:
    """(wall s incl. cluster start-up, wall s of the tasks alone, the rows, CPU s of this
    process — the Dask scheduler and client, the summaries — and of the worker processes)."""
    from costsim.sweep.engines import open_engine
    from costsim.sweep.run import run_sweep

    own_before, children_before = _cpu_s()
    start = time.perf_counter()
    engine, notice = open_engine("local", workers)
    if notice:
        raise SystemExit("bench_sweep needs the 'distributed' extra: " + notice)
    try:
        result = run_sweep(variants, settings, engine, clock=time.perf_counter)
    finally:
        engine.close()
    wall = time.perf_counter() - start
    own_after, children_after = _cpu_s()  # the workers have ended: their CPU time is counted
    return wall, result.wall_s, result.rows, (own_after - own_before,
                                              children_after - children_before)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", type=Path,
                        default=ROOT / "scenarios" / "lifecycle-assistant.yaml")
    parser.add_argument("--sweep-file", type=Path,
                        default=ROOT / "sweeps" / "lifecycle-what-if.yaml")
    parser.add_argument("--replications", type=int, default=100)
    parser.add_argument("--cores", type=int, default=2, help="CPU cores to use (0: all)")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    if args.cores:
        cores = cores[: args.cores]
    os.sched_setaffinity(0, cores)  # the cluster's worker processes inherit it

    from costsim import __version__
    from costsim.cli.sweep_variants import load_variants
    from costsim.sweep.tasks import SweepSettings, task_list

    _, variants = load_variants(args.scenario, [], args.sweep_file)
    settings = SweepSettings(seed=0, replications=args.replications,
                             costsim_version=__version__, price_book="bench")
    tasks = len(task_list(variants, settings))
    load = os.getloadavg()[0]
    one, one_tasks, rows_one, cpu_one = _sweep(variants, settings, 1)
    two, two_tasks, rows_two, cpu_two = _sweep(variants, settings, 2)
    assert rows_one == rows_two, "the rows differ between 1 and 2 workers"
    speedup = one / two
    efficiency = speedup / 2
    print(f"sweep {args.sweep_file.name}: {len(variants)} variants x every plan x "
          f"{args.replications} replications = {tasks} tasks (+ {len(variants)} preparations)")
    for label, wall, tasks_s, (own, workers) in (("1 worker ", one, one_tasks, cpu_one),
                                                   ("2 workers", two, two_tasks, cpu_two)):
        print(f"{label}: {wall:6.1f} s wall ({tasks_s:.1f} s after the cluster started); CPU "
              f"{workers:.1f} s in the workers, {own:.1f} s in this process (scheduler, "
              f"client, summaries)")
    print(f"speed-up {speedup:.2f}, efficiency {efficiency:.2f} (target >= "
          f"{TARGET_EFFICIENCY}: {'met' if efficiency >= TARGET_EFFICIENCY else 'MISSED'}); "
          f"one worker {'>=' if one >= MIN_ONE_WORKER_S else 'UNDER'} {MIN_ONE_WORKER_S:.0f} s")
    print(f"on {len(cores)} of {os.cpu_count()} cores ({platform.processor() or platform.machine()}"
          f", Python {platform.python_version()}), load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end (other processes share the cores when above "
          f"{len(cores)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
