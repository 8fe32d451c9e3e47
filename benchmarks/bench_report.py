"""Report speed on the reference 18-month project (benchmarks/reference_project.py).

Simulates the four plans (few replications: the report's cost does not grow with them), then
times each step of the report: summary_json, drawing and rendering the charts, and
write_report as a whole (charts, CSV, XLSX, JSON and HTML, written atomically).

Run: ``.venv/bin/python benchmarks/bench_report.py [--replications 20] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

# run as a script, this folder is on sys.path
from reference_project import reference_scenario

from costsim.report import summary_json, write_report
from costsim.report.chart_files import draw
from costsim.report.charts import build_charts
from costsim.sim.run_result import simulate_scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replications", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    run = simulate_scenario(reference_scenario(), seed=0, replications=args.replications)
    summary_s, charts_s, write_s = [], [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        summary = summary_json(run, generated_at="")
        t1 = time.perf_counter()
        for chart in build_charts(run, run.breakevens):
            draw(chart)
        t2 = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            written = write_report(run, summary, Path(folder))
            t3 = time.perf_counter()
            size = sum(path.stat().st_size for path in written)
        summary_s.append(t1 - t0)
        charts_s.append(t2 - t1)
        write_s.append(t3 - t2)
    print(f"reference project, {len(run.plans)} plans, {args.replications} replications; "
          f"median of {args.runs} runs")
    print(f"summary_json  {statistics.median(summary_s) * 1000:7.0f} ms")
    print(f"charts        {statistics.median(charts_s):7.2f} s  (draw + PNG + SVG)")
    print(f"write_report  {statistics.median(write_s):7.2f} s  ({len(written)} files, "
          f"{size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
