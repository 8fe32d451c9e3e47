"""Wall time of ``costsim run`` on the flagship scenario, report included (issue 10: at most
120 s for 1,000 replications on 2 cores).

Runs the installed command as a user would (a fresh process: start-up, loading, simulation,
report files and charts), pinned to ``--cores`` CPU cores, into a temporary report folder, and
prints the figure with the machine it ran on.

Run: ``.venv/bin/python benchmarks/bench_run.py [--replications 1000] [--cores 2]
[--scenario scenarios/lifecycle-assistant.yaml] [--workers K]``.

Measured (2026-12-01, 2-core AMD EPYC VM, Python 3.11.7): 19.1 s with the default workers (2),
26.3 s with --workers 1; 45 s while the machine was also running another test suite. The
default 200 replications take 9.4 s on a fresh clone (first run, .pyc compiled then).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 120.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", type=Path,
                        default=ROOT / "scenarios" / "lifecycle-assistant.yaml")
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--cores", type=int, default=2,
                        help="CPU cores the run may use (0: all)")
    parser.add_argument("--workers", type=int, help="--workers of the run (default: its own)")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    if args.cores:
        cores = cores[: args.cores]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report"
        command = [sys.executable, "-m", "costsim", "run", str(args.scenario),
                   "--replications", str(args.replications), "--out", str(out)]
        if args.workers:
            command += ["--workers", str(args.workers)]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              preexec_fn=lambda: os.sched_setaffinity(0, cores))
        wall = time.perf_counter() - start
        files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        return done.returncode
    print(done.stdout.rstrip())
    print(f"\n{' '.join(command[2:4])} {args.scenario.name} --replications "
          f"{args.replications}: {wall:.1f} s wall, report of {len(files)} files included, "
          f"on {len(cores)} of {os.cpu_count()} cores ({platform.processor() or platform.machine()}"
          f", Python {platform.python_version()}); target <= {TARGET_S:.0f} s: "
          f"{'met' if wall <= TARGET_S else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
