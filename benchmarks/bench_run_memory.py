"""Peak memory of a simulation by replication count (issue 20 item 4: 100,000 flagship
replications within 1 GB).

Plain script (not a test): ``python benchmarks/bench_run_memory.py [SCENARIO] [--replications
N ...] [--plan P]``. Each count runs in a fresh process (``simulate_scenario`` on one worker,
every plan or ``--plan``'s, no report), which prints its peak resident set (``ru_maxrss``) and
CPU seconds; the script then fits peak = fixed + per-replication × N over the counts (least
squares) and extrapolates to 100,000. Run it with ``PYTHONPATH`` at another tree to measure
that tree the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

CHILD = """
import json, resource, sys, time
from pathlib import Path
from costsim.cli.scenario_names import load_scenario_file
from costsim.sim.run_result import simulate_scenario
scenario = load_scenario_file(Path(sys.argv[1])).scenario
n = int(sys.argv[2])
plans = sys.argv[3:] or None
cpu = time.process_time()
result = simulate_scenario(scenario, seed=0, replications=n, plans=plans)
cpu = time.process_time() - cpu
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"replications": n, "peak_mib": peak_kib / 1024, "cpu_s": cpu,
                  "plans": len(result.plans)}))
"""


def measure(scenario: str, replications: int, plans: list[str]) -> dict[str, float]:
    # run from the root directory: ``python -c`` puts the working directory first on the path,
    # ahead of PYTHONPATH, so the tree measured is PYTHONPATH's, not the one the script is in
    out = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(scenario),
                          str(replications), *plans],
                         check=True, capture_output=True, text=True, env=os.environ.copy(),
                         cwd=os.sep)
    row: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default="scenarios/lifecycle-assistant.yaml")
    parser.add_argument("--replications", type=int, nargs="+", default=[200, 2000, 10000])
    parser.add_argument("--plan", action="append", default=[],
                        help="simulate only this plan (repeatable; default: every plan)")
    args = parser.parse_args()
    rows = [measure(args.scenario, n, args.plan) for n in args.replications]
    print(f"{'replications':>12} {'peak MiB':>9} {'CPU s':>8}")
    for row in rows:
        print(f"{row['replications']:>12,} {row['peak_mib']:>9.0f} {row['cpu_s']:>8.1f}")
    if len(rows) >= 2:
        n = np.array([r["replications"] for r in rows], dtype=float)
        peak = np.array([r["peak_mib"] for r in rows])
        slope, fixed = np.polyfit(n, peak, 1)
        print(f"fit: {fixed:.0f} MiB + {slope * 1024:.2f} KiB per replication "
              f"-> {fixed + slope * 100_000:.0f} MiB at 100,000 replications")


if __name__ == "__main__":
    main()
