"""Time `costsim --help`, the start-up cost of every command.

Run: python benchmarks/bench_cli_startup.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 10


def main() -> None:
    """Print the median and worst wall time of `python -m costsim --help`."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "costsim", "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    print(
        f"costsim --help: median {statistics.median(times) * 1000:.0f} ms, "
        f"max {max(times) * 1000:.0f} ms over {RUNS} runs"
    )


if __name__ == "__main__":
    main()
