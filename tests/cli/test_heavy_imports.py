"""Commands load the heavy libraries only where they use them (issue 20: a command's fixed
cost): a simulation that writes no report loads no plotting, spreadsheet, page or Dask code,
an estimate no simulator, and the sweep's report step no spreadsheet, page or matplotlib code."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
HEAVY = {"matplotlib", "openpyxl", "jinja2", "scipy", "dask", "distributed", "pyarrow"}
PROBE = """
import contextlib, io, sys
from costsim.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
assert code == 0, code
print(sorted({name.split('.')[0] for name in sys.modules}))
"""


def _top_modules_after(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return set(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def test_compare_simulates_without_report_libraries() -> None:
    loaded = _top_modules_after("compare", "scenarios/seed-three-jobs.yaml", "--replications",
                                "2", "--workers", "1", "--json")
    assert "simpy" in loaded  # it did simulate
    assert loaded & HEAVY == set()


def test_estimate_loads_no_simulator_or_report_library() -> None:
    loaded = _top_modules_after("estimate", "train", "--model", "llama-2-7b", "--gpus", "64",
                                "--tokens", "2e12", "--json")
    assert loaded & (HEAVY | {"simpy", "pydantic", "yaml"}) == set()


def test_the_sweep_report_step_loads_no_spreadsheet_or_page_code() -> None:
    """What ``costsim sweep`` imports to write its table, charts and JSON (sweep_cmd's
    ``_write_and_print``): costsim's own drawing (Pillow) for the charts, but not matplotlib,
    openpyxl or jinja2."""
    probe = ("import sys, costsim.cli.sweep_cmd as s, costsim.cli.sweep_table, "
             "costsim.report.sweep, costsim.report.files, costsim.report.chart_files, "
             "costsim.report.charts_sweep, costsim.report.plot.render, "
             "costsim.sweep.table_file; "
             "print(sorted({n.split('.')[0] for n in sys.modules}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    loaded = set(ast.literal_eval(done.stdout.strip()))
    assert "PIL" in loaded
    assert loaded & {"matplotlib", "openpyxl", "jinja2"} == set()
