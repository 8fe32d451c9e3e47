"""Wall time and simulator runs of ``costsim optimize`` (issue 11: at most 5 minutes per shipped
scenario on 2 cores), next to what an exhaustive search would simulate.

Runs the installed command as a user would (a fresh process: start-up, loading, the analytic
screen, the Monte Carlo of the finalists, the report folder and its charts), pinned to
``--cores`` CPU cores, into a temporary folder, and prints per scenario: wall time, candidates
screened, candidates simulated, simulator runs (candidates simulated × replications), and the
candidates and simulator runs of an exhaustive search.

Run: ``.venv/bin/python benchmarks/bench_optimize.py [--replications 200] [--cores 2]
[--scenario scenarios/lifecycle-assistant.yaml | --all] [--workers K]``.

Measured: see docs/optimizer.md "Command" (figures with the machine and the search they
measured).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 300.0  # issue 11 "Done when": every shipped scenario in at most 5 minutes on 2 cores


def optimize_once(scenario: Path, replications: int, cores: list[int],
                  workers: int | None) -> tuple[float, dict[str, Any]] | None:
    """(wall seconds, optimize --json document) of one run, or None when it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "costsim", "optimize", str(scenario), "--json",
                   "--replications", str(replications), "--out", str(Path(tmp) / "report")]
        if workers:
            command += ["--workers", str(workers)]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              preexec_fn=lambda: os.sched_setaffinity(0, cores))
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(f"{scenario.name}: exit {done.returncode}\n{done.stderr}")
        return None
    document: dict[str, Any] = json.loads(done.stdout)
    return wall, document


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--scenario", type=Path,
                       default=ROOT / "scenarios" / "lifecycle-assistant.yaml")
    which.add_argument("--all", action="store_true", help="every scenario in scenarios/")
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--cores", type=int, default=2, help="CPU cores it may use (0: all)")
    parser.add_argument("--workers", type=int, help="--workers of the run (default: its own)")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    if args.cores:
        cores = cores[: args.cores]
    scenarios = sorted((ROOT / "scenarios").glob("*.yaml")) if args.all else [args.scenario]
    print(f"costsim optimize --replications {args.replications} on {len(cores)} of "
          f"{os.cpu_count()} cores ({platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()})")
    print(f"{'scenario':<26} {'wall s':>7} {'screened':>9} {'simulated':>9} {'sim runs':>9} "
          f"{'exhaustive':>10} {'exh. runs':>10}  chosen plan")
    failed = slow = 0
    for scenario in scenarios:
        measured = optimize_once(scenario, args.replications, cores, args.workers)
        if measured is None:
            failed += 1
            continue
        wall, doc = measured
        slow += wall > TARGET_S
        best = doc["best"]["name"] if doc["best"] else "(none)"
        print(f"{scenario.stem:<26} {wall:7.1f} {doc['candidates_screened']:9,} "
              f"{doc['candidates_simulated']:9,} {doc['simulator_runs']:9,} "
              f"{doc['exhaustive_candidates']:10,} "
              f"{doc['exhaustive_candidates'] * args.replications:10,}  {best}")
    print(f"target: each at most {TARGET_S:.0f} s; {slow} over, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
