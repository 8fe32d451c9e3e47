"""Print every training and serving validation row: published vs predicted, % error, tolerance.

Run from the repository root: ``.venv/bin/python scripts/validation_table.py`` (``--csv`` for
machine-readable output). The figures come from the validation tests' own helpers
(tests/perf/test_validation*.py), so this table and the tests cannot disagree on how a row is
predicted; it is the before/after table of a change to the performance model.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from costsim.catalog.perf_defaults import perf_defaults
from costsim.domain.performance import PerfDefaults
from tests.perf import test_validation as base
from tests.perf import test_validation_extra as extra
from tests.perf import test_validation_frameworks as frameworks
from tests.perf import test_validation_llama3 as llama3
from tests.perf.conftest import row_tolerance


@dataclass(frozen=True, slots=True)
class Row:
    """One validation row's comparison."""

    table: str
    row_id: str
    basis: str
    published: float
    predicted: float
    tolerance: str
    within: bool

    @property
    def error(self) -> float:
        """Signed relative error of the prediction."""
        return self.predicted / self.published - 1.0


def _relative(table: str, row_id: str, basis: str, figures: tuple[float, float],
              tolerance: float) -> Row:
    predicted, published = figures
    within = abs(predicted / published - 1.0) <= tolerance
    return Row(table, row_id, basis, published, predicted, f"±{tolerance:.0%}", within)


def _training_basis(row_id: str) -> str:
    if row_id in base.MEGATRON or row_id in extra.MEGATRON:
        return "Megatron hw TFLOPS/GPU"
    if row_id in base.FOUNDRY or row_id in extra.FOUNDRY:
        return "tokens/s/GPU"
    return "all-in GPU-hours"


def _rows(defaults: PerfDefaults) -> Iterator[Row]:
    for row_id in [*base.MEGATRON, *base.FOUNDRY]:
        figures = base.predicted_andreported_figure(row_id, defaults)
        yield _relative("training_runs", row_id, _training_basis(row_id), figures,
                        base.TOLERANCE)
    yield _relative("training_runs_extra", "X1", "MFU", base.x1_mfu(defaults), base.TOLERANCE)
    for row_id in extra.ARCH_OF:
        figures = extra.predicted_andreported_figure(row_id, defaults)
        yield _relative("training_runs_extra", row_id, _training_basis(row_id), figures,
                        row_tolerance(extra.ROWS[row_id]))
    for row_id in sorted(frameworks.ROWS):
        figures = frameworks.predicted_and_reported(row_id, defaults)
        basis = f"{frameworks.ROWS[row_id]['basis']} ({frameworks.ROWS[row_id]['framework']})"
        yield _relative("training_runs_frameworks", row_id, basis, figures,
                        frameworks.tolerance(row_id))
    for row_id, predicted, published in llama3.table_rows(defaults):
        basis = "all-in GPU-hours" if row_id == "L4" else "model TFLOPS/GPU"
        yield _relative("training_runs_llama3", row_id, basis, (predicted, published),
                        row_tolerance(llama3.ROWS[row_id]))
    serving: list[tuple[str, str, Callable[[PerfDefaults], tuple[float, float]], float]] = [
        ("S1", "decode tokens/s", base.s1_decode_tokens_per_s, 0.20),
        ("S2", "decode tokens/s", base.s2_decode_tokens_per_s, 0.20),
        ("S3", "burst requests/s", base.s3_burst_requests_per_s, 0.25),
    ]
    for row_id, basis, predict, tolerance in serving:
        yield _relative("serving_cases", row_id, basis, predict(defaults), tolerance)
    share = base.s4_weights_share(defaults)
    # S4 publishes a range (weights take 55-70 % of an A100 40 GB): its midpoint is shown.
    yield Row("serving_cases", "S4", "weights share of GPU", 0.625, share, "0.55-0.70",
              0.55 <= share <= 0.70)
    for row_id in sorted(extra.SERVING_RUNS):
        figures = extra.serving_predicted_and_reported(row_id, defaults)
        yield _relative("serving_cases_extra", row_id, "output tokens/s", figures,
                        row_tolerance(extra.SERVING[row_id]))


def _figure(value: float) -> str:
    if abs(value) < 10:
        return f"{value:,.3f}"
    return f"{value:,.1f}" if abs(value) < 1000 else f"{value:,.0f}"


HELDOUT_DIR = Path(__file__).resolve().parents[1] / "validation" / "heldout"
HELDOUT_SERVING_CSV = HELDOUT_DIR / "serving.csv"
# Issue 18's goals, the same for the held-out set as for the check halves.
SERVING_GOAL = 0.80  # share of rows within their tolerance
TRAINING_GOAL = 0.80  # share of runs inside the simulated P10-P90
SPREAD_GOAL = 2.0  # median P90/P10


def heldout_serving(path: Path, defaults: PerfDefaults) -> tuple[list[tuple[str, ...]], str]:
    """The held-out serving rows of ``path`` (serving_published.csv's columns) against the
    model, by scripts/published_table.py's predictors: table lines and a summary."""
    from costsim.catalog.serving_datasets import read_serving_rows
    from scripts.published_table import (
        cheaper_agrees,
        check_serving,
        serving_cells,
    )

    checks = check_serving(read_serving_rows(path), defaults)
    rated = [c for c in checks if c.within is not None]
    within = sum(bool(c.within) for c in rated)
    ratios = [c for c in checks if cheaper_agrees(c) is not None]
    lines = [f"held-out serving: {within}/{len(rated)} within tolerance "
             f"({'met' if rated and within >= SERVING_GOAL * len(rated) else 'missed'}: goal "
             f">= {SERVING_GOAL:.0%})"]
    if ratios:
        lines.append(f"held-out card-ratio rows picking the cheaper card: "
                     f"{sum(bool(cheaper_agrees(c)) for c in ratios)}/{len(ratios)}")
    unrated = [c.row["id"] for c in checks if c.within is None]
    if unrated:
        lines.append("not rated: " + ", ".join(unrated))
    return serving_cells(checks), "\n".join(lines)


def print_heldout(folder: Path = HELDOUT_DIR) -> int:
    """The held-out check (issue 18 item 4) of ``folder`` (validation/heldout, or a later set such
    as validation/heldout2): its serving rows, then its training runs through the simulator
    (scripts/allin_check.py --heldout --heldout-dir). Run once, after every model change."""
    from scripts.allin_check import main as allin_main
    from scripts.published_table import SERVING_HEADER, _table

    cells, summary = heldout_serving(folder / HELDOUT_SERVING_CSV.name, perf_defaults())
    print(_table(SERVING_HEADER, cells))
    print()
    print(summary)
    print()
    allin_main(["--heldout", "--heldout-dir", str(folder), "--in-process"])
    return 0


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 if a row is outside its tolerance and not a known miss."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", action="store_true", help="write CSV instead of a table")
    parser.add_argument("--heldout", action="store_true",
                        help="the held-out check of validation/heldout/ instead (issue 18 item "
                             "4: reserved sources; run once, after every model change)")
    parser.add_argument("--heldout-dir", type=Path, default=None, metavar="DIR",
                        help="with --heldout: the held-out folder to rate (serving.csv, "
                             "training_runs.csv, architectures/; default validation/heldout, "
                             "e.g. validation/heldout2 for the second set)")
    parser.add_argument("--allin", action="store_true",
                        help="the all-in fit/check table of the 32 published runs instead "
                             "(scripts/allin_check.py through the simulator)")
    parser.add_argument("--published", action="store_true",
                        help="the published serving rows' fit/check table, before -> after, and "
                             "the published training runs instead (scripts/published_table.py)")
    parser.add_argument("--bands", action="store_true",
                        help="the models' out-of-sample error bands instead: the serving and "
                             "training model errors from the blind held-out sets, leave one "
                             "set out (scripts/serving_model_error.py, "
                             "scripts/training_model_error.py)")
    args = parser.parse_args(argv)
    if sum((args.heldout, args.allin, args.published, args.bands)) > 1:
        parser.error("choose one of --heldout, --allin, --published, --bands")
    if args.heldout_dir is not None and not args.heldout:
        parser.error("--heldout-dir needs --heldout")
    if args.heldout:
        folder = args.heldout_dir or HELDOUT_DIR
        missing = [name for name in (HELDOUT_SERVING_CSV.name, "training_runs.csv")
                   if not (folder / name).is_file()]
        if missing:
            parser.error(f"--heldout-dir {folder}: no {' or '.join(missing)} in that folder")
        return print_heldout(folder)
    if args.allin:
        from scripts.allin_check import main as allin_main

        # the 30 published runs' fit/check table through the simulator (in-process)
        return allin_main(["--in-process"])
    if args.published:
        from scripts.published_table import main as published_main

        return published_main(["--csv"] if args.csv else [])
    if args.bands:
        from scripts.serving_model_error import main as serving_error_main
        from scripts.training_model_error import main as training_error_main

        print("# The serving model's error out of sample\n")
        serving = serving_error_main([])
        print("\n# The training model's error out of sample\n")
        return max(serving, training_error_main([]))
    rows = list(_rows(perf_defaults()))
    header = ("table", "id", "basis", "published", "predicted", "error", "tolerance", "ok")
    # Strict xfails, explained in docs/performance.md §4.
    known = {*frameworks.KNOWN_MISSES, *llama3.KNOWN_MISSES, *extra.KNOWN_MISSES}

    def verdict(row: Row) -> str:
        if row.within:
            return "yes"
        return "NO (known)" if row.row_id in known else "NO"

    cells = [(r.table, r.row_id, r.basis, _figure(r.published), _figure(r.predicted),
              f"{r.error:+.1%}", r.tolerance, verdict(r)) for r in rows]
    if args.csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(header)
        writer.writerows(cells)
    else:
        widths = [max(len(str(c[i])) for c in [header, *cells]) for i in range(len(header))]
        for line in [header, *cells]:
            print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)))
        outside = [r.row_id for r in rows if not r.within]
        print(f"\n{len(rows)} rows, {len(rows) - len(outside)} within tolerance"
              + (f"; outside: {', '.join(outside)}" if outside else ""))
    return 1 if any(not r.within and r.row_id not in known for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
