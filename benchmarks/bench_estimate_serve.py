"""Time one `costsim estimate serve` call, as a user runs it (a fresh process), with and without
a measured profile (issue 16: it must stay ≤ 1 s a call).

Run: python benchmarks/bench_estimate_serve.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 7
ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "predicted": ["estimate", "serve", "--model", "llama-3-8b", "--rate", "20", "--json"],
    "with --profile": ["estimate", "serve", "--model", "llama-3-8b", "--gpu", "H100",
                       "--prompt-tokens", "1000", "--output-tokens", "200", "--rate", "20",
                       "--profile", str(ROOT / "docs" / "examples" / "serving_profile.csv"),
                       "--json"],
}


def main() -> None:
    """Print the median and worst wall time and the median CPU time of each call."""
    for label, args in COMMANDS.items():
        walls, cpus = [], []
        for _ in range(RUNS):
            start = time.perf_counter()
            cpu_before = _children_cpu()
            subprocess.run([sys.executable, "-m", "costsim", *args], check=True,
                           capture_output=True, cwd=ROOT)
            walls.append(time.perf_counter() - start)
            cpus.append(_children_cpu() - cpu_before)
        print(f"estimate serve ({label}): wall median {statistics.median(walls):.2f} s, "
              f"max {max(walls):.2f} s; CPU median {statistics.median(cpus):.2f} s "
              f"over {RUNS} runs")


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
