"""Check the all-in loss through the simulator: each published run as a one-phase scenario.

Every run of tests/data/published_runs_allin.csv and tests/data/training_runs_published.csv
(A01-A32) becomes a scenario with one training phase — the run's model, GPU type and count,
tokens, sequence length, global batch and precision, its published layout where the source
gives the whole of it (tensor, pipeline and ZeRO degrees; otherwise the simulator searches the
fastest layout as for any user) — and one on-demand plan. ``costsim run`` simulates it, and the
run's published all-in GPU-hours are set beside the simulated P10/P50/P90 of the training
phase's GPU-hours (``training_gpu_hours`` of the run's summary: the run's own wall time × GPUs,
the rented instances' boot excluded as the published figures exclude it).

    python scripts/allin_check.py                  # table and summary, via `costsim run`
    python scripts/allin_check.py --in-process     # the same simulation without report folders
    python scripts/allin_check.py --csv            # machine-readable rows
    python scripts/allin_check.py --training-error-sigma 0.3   # the band with another σε

Nothing is fitted here: the split column of each data file was written by the rules in
scripts/published_table.py before any prediction was looked at; scripts/fit_allin_loss.py fits
the loss on the fit half (docs/performance.md, "What real runs lose").
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.published_table import (
    ALLIN_CSV,
    ARCH_DIR,
    CHECK,
    FIT,
    TRAINING_CSV,
    PublishedBand,
    read_rows,
    scale_class,
)

ROOT = Path(__file__).resolve().parents[1]
# Monte Carlo per run: P10/P90 from 400 replications move by ~5 % between seeds (100, the
# tests' count, by ~10 %), well inside the band's own width (about x1.9 to x2.1).
REPLICATIONS = 400
SEED = 20261201
# Long enough for the slowest replication of the longest run (Llama 3.1 405B's ~90 steady days
# with a heavy loss tail); the calendar only needs to hold the run.
MAX_HORIZON_MONTHS = 60
FIX_LAYOUTS = True
# Give each run's scenario its stated stack (STACK_HINT_RULE); False: every run as megatron-lm
# with its era inferred, as before issue 18's second round (the "before" of docs/performance.md).
STACK_HINTS = True
# Compare each figure with what it measures (FIGURE_BASIS_RULE); False: every figure as all-in,
# as before issue 18's third round (the "before" column of docs/performance.md).
FIGURE_BASES = True


# What a user would state about each run's training code, read off the row's own ``framework``
# and ``source_date`` columns (written before any prediction) by one fixed rule: the first
# keyword found, case-insensitive, names the ``framework`` of the run's scenario, and the year of
# the source date is its ``framework_year`` (the code's era). Fixed 2026-12-01 for issue 18
# item 2 before the check was rerun; tests/perf/test_allin_check.py checks every row's outcome.
STACK_HINT_RULE = (
    "framework: 'torch.compile' -> torch-compile; 'Trainer' -> hf-trainer; 'FSDP' without "
    "'llm-foundry' -> pytorch-fsdp; 'DeepSpeed' -> deepspeed; anything else (Megatron, "
    "llm-foundry, nanotron, Gigatron, not published) -> megatron-lm, the default; "
    "framework_year: the year of source_date")
_HINTS = (("torch.compile", "torch-compile"), ("trainer", "hf-trainer"),
          ("fsdp", "pytorch-fsdp"), ("deepspeed", "deepspeed"))


def stack_hint(row: dict[str, str]) -> tuple[str, int]:
    """(framework, framework_year) of a run by STACK_HINT_RULE."""
    text = row["framework"].lower()
    framework = "megatron-lm"
    for keyword, name in _HINTS:
        if keyword in text and not (name == "pytorch-fsdp" and "llm-foundry" in text):
            framework = name
            break
    return framework, int(row["source_date"][:4])


# What each published figure measures, written into the data files' ``figure_basis`` column
# before the comparison by one rule on the row's own ``published_figure`` and ``includes`` text
# (issue 18 items 3-4, third round; tests/perf/test_allin_check.py checks every row's value):
# a figure that its source derives from a stated steady throughput or states as a schedule
# before the run, or that a training-loop timer measured (stopped outside the training steps),
# cannot hold what real runs lose beyond steady speed, so it is set beside the simulated band
# with the extra loss x held at 0 (the goodput model's hardware share and the model's error ε
# stay); every other figure (wall time, calendar span, accounting total, "took about N days")
# is all-in and carries the calibrated x. A row without the column counts as all-in.
FIGURE_BASIS_RULE = (
    "steady: derived by its source from a stated steady throughput (tokens/s/GPU x GPUs x "
    "days), a schedule stated before the run, or a training-loop timer (stopped outside the "
    "training steps); all-in: every other figure (wall time, calendar span, accounting total, "
    "rounded 'took N days')")
STEADY, ALL_IN = "steady", "all-in"


def figure_basis(row: dict[str, str]) -> str:
    """The row's ``figure_basis`` (FIGURE_BASIS_RULE); all-in where the column is absent."""
    basis = row.get("figure_basis", "").strip() or ALL_IN
    if basis not in (STEADY, ALL_IN):
        raise ValueError(f"{row['id']}: figure_basis must be {STEADY} or {ALL_IN} "
                         f"(got {basis!r})")
    return basis


# The held-out runs (issue 18 item 4): reserved sources, kept outside costsim/data and tests/data;
# checked once, at the end, with the same thresholds (``--heldout``).
HELDOUT_DIR = Path(__file__).resolve().parents[1] / "validation" / "heldout"
HELDOUT_CSV = HELDOUT_DIR / "training_runs.csv"
HELDOUT = "heldout"
# Key added to a held-out row by heldout_runs(): the folder its architecture files are read from
# (each held-out set keeps its own configs next to its runs).
ARCH_FOLDER = "architecture_folder"


def heldout_runs(folder: Path = HELDOUT_DIR) -> list[dict[str, str]]:
    """The held-out runs of ``folder``'s training_runs.csv (H01- in validation/heldout), with
    their scale class and the folder whose ``architectures/`` holds their configs, in file
    order."""
    rows = []
    for row in read_rows(folder / HELDOUT_CSV.name):
        days = float(row["published_gpu_hours"]) / int(row["gpus"]) / 24
        row["scale_class"] = scale_class(int(row["gpus"]), days)
        row[ARCH_FOLDER] = str(folder / "architectures")
        rows.append(row)
    return rows


def published_runs() -> list[dict[str, str]]:
    """The published runs (A01-A32) with their scale class, in id order."""
    rows = []
    for row in read_rows(ALLIN_CSV):
        days = float(row["published_gpu_hours"]) / int(row["gpus"]) / 24
        row["scale_class"] = scale_class(int(row["gpus"]), days)
        rows.append(row)
    rows.extend(read_rows(TRAINING_CSV))
    return rows


def _int(text: str) -> int | None:
    return int(text) if text.strip() else None


def _arch_path(row: dict[str, str], spec: str) -> Path:
    if ARCH_FOLDER in row:
        folder = Path(row[ARCH_FOLDER])
    else:
        folder = HELDOUT_DIR / "architectures" if row["split"] == HELDOUT else ARCH_DIR
    return (folder / spec).resolve()


def error_uncertainty(training_error_sigma: float) -> dict[str, object]:
    """The scenario ``uncertainty`` under which a one-phase run's throughput error has log-sd
    ``training_error_sigma`` (σε) instead of the shipped default's.

    With the defaults a predicted training phase draws the shared throughput error (log-sd
    σ = throughput_error_sigma) times a training-only factor of log-sd √(σε² − σ²): a lognormal
    of log-sd σε, median 1 (costsim/sim/prepare.py). A scenario's own
    ``uncertainty.throughput_error`` replaces both factors; for a scenario of one training phase
    a lognormal of log-sd σε there is the same distribution, so the band of any σε is the
    simulator's own without a change to its defaults (scripts/training_model_error.py)."""
    return {"throughput_error": {"dist": "lognormal", "sigma": training_error_sigma}}


def scenario_mapping(row: dict[str, str], *, horizon_months: int,
                     training_error_sigma: float | None = None) -> dict[str, object]:
    """The one-phase scenario of a published run (a YAML mapping); with
    ``training_error_sigma``, the training model's error drawn with that log-sd
    (:func:`error_uncertainty`) instead of the shipped default."""
    spec = row["architecture"]
    model: dict[str, str] = ({"preset": spec.removeprefix("preset:")}
                             if spec.startswith("preset:")
                             else {"arch": str(_arch_path(row, spec))})
    gpus = int(row["gpus"])
    phase: dict[str, object] = {
        "name": "train", "kind": "training", "model": "model", "task": "train",
        "tokens": float(row["tokens"]), "seq_len": int(row["seq_len"]),
        "precision": row["precision"]}
    if STACK_HINTS:
        phase["framework"], phase["framework_year"] = stack_hint(row)
    if FIGURE_BASES and figure_basis(row) == STEADY:
        phase["allin_extra_loss"] = 0.0  # a steady figure holds no loss beyond steady speed
    batch = _int(row["global_batch_seqs"])
    if batch is not None:
        phase["global_batch_tokens"] = batch * int(row["seq_len"])
    tp, pp, zero = _int(row["tp"]), _int(row["pp"]), _int(row["zero"])
    if FIX_LAYOUTS and tp is not None and pp is not None and zero is not None \
            and gpus % (tp * pp) == 0:
        phase["layout"] = {"tp": tp, "pp": pp, "dp": gpus // (tp * pp), "zero": zero}
    mapping: dict[str, object] = {
        "name": f"{row['id']} {row['model']}",
        "start": "2027-01-01",
        "horizon_months": horizon_months,
        "models": {"model": model},
        "phases": [phase],
        "plans": [{"name": "on-demand", "use": {"train": {"gpu": row["gpu"], "count": gpus}}}],
    }
    if training_error_sigma is not None:
        mapping["uncertainty"] = error_uncertainty(training_error_sigma)
    return mapping


def horizon_for(row: dict[str, str]) -> int:
    """Months enough for a run of up to ~6x its published wall time (at least one)."""
    days = float(row["published_gpu_hours"]) / int(row["gpus"]) / 24
    return max(1, min(MAX_HORIZON_MONTHS, math.ceil(days * 6 / 30)))


def write_scenario(row: dict[str, str], folder: Path,
                   training_error_sigma: float | None = None) -> Path:
    """The run's scenario as a YAML file in ``folder`` (``training_error_sigma``: see
    :func:`scenario_mapping`)."""
    import yaml

    path = folder / f"{row['id']}.yaml"
    mapping = scenario_mapping(row, horizon_months=horizon_for(row),
                               training_error_sigma=training_error_sigma)
    path.write_text(yaml.safe_dump(mapping, sort_keys=False), encoding="utf-8")
    return path


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedRun(PublishedBand):
    """One run's published GPU-hours against the simulator's training GPU-hours."""

    @property
    def spread(self) -> float | None:
        """P90 / P10."""
        if self.p10 is None or self.p90 is None or self.p10 <= 0:
            return None
        return self.p90 / self.p10


Runner = Callable[[Path, int, int], dict[str, object]]


def run_cli(path: Path, replications: int, seed: int) -> dict[str, object]:
    """``costsim run SCENARIO --json`` in this process (a throw-away report folder); the
    on-demand plan's summary."""
    from costsim.cli.main import main

    with tempfile.TemporaryDirectory() as out:
        buffer, errors = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(errors):
            code = main(["run", str(path), "--replications", str(replications), "--seed",
                         str(seed), "--workers", "1", "--json", "--out",
                         str(Path(out) / "report"), "--force"])
        if code != 0:
            raise RuntimeError(errors.getvalue().strip() or f"costsim run exited {code}")
        summary = json.loads(buffer.getvalue())
    plan: dict[str, object] = summary["plans"][0]
    return plan


def run_in_process(path: Path, replications: int, seed: int) -> dict[str, object]:
    """What ``costsim run`` simulates (the same loader and ``simulate_scenario``), without
    writing the report folder; the on-demand plan's summary in the JSON's shape."""
    from costsim.cli.scenario_names import load_scenario_file
    from costsim.sim.run_result import simulate_scenario

    loaded = load_scenario_file(path)
    result = simulate_scenario(loaded.scenario, seed=seed, replications=replications)
    plan = result.plans[0]
    if not plan.feasible:
        raise RuntimeError("; ".join(plan.infeasible_reasons))
    stats = plan.training_gpu_hours
    band = None if stats is None else {"p10": stats.p10, "p50": stats.p50, "p90": stats.p90}
    return {"feasible": True, "training_gpu_hours": band}


def simulate_runs(rows: Sequence[dict[str, str]], runner: Runner, *,
                  replications: int = REPLICATIONS, seed: int = SEED,
                  training_error_sigma: float | None = None) -> list[SimulatedRun]:
    """Every run through ``runner`` (kept, with the reason, when the simulator refuses it);
    ``training_error_sigma``: each run's training error drawn with that log-sd instead of the
    shipped default (:func:`error_uncertainty`)."""
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for row in rows:
            published = float(row["published_gpu_hours"])
            path = write_scenario(row, Path(folder), training_error_sigma)
            try:
                plan = runner(path, replications, seed)
            except Exception as error:
                results.append(SimulatedRun(row=row, published=published, p10=None, p50=None,
                                            p90=None, reason=str(error).splitlines()[0]))
                continue
            band = plan.get("training_gpu_hours")
            if not isinstance(band, dict):
                results.append(SimulatedRun(row=row, published=published, p10=None, p50=None,
                                            p90=None, reason="infeasible"))
                continue
            results.append(SimulatedRun(row=row, published=published, p10=float(band["p10"]),
                                        p50=float(band["p50"]), p90=float(band["p90"])))
    return results


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0 or abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


# The band of every run before issue 18's third round (main at 8c31d1a: stack hints, every
# figure as all-in; 400 replications, seed 20261201), printed beside today's as before -> after.
BEFORE_CSV = ROOT / "tests" / "data" / "allin_check_before.csv"


@dataclass(frozen=True, slots=True, kw_only=True)
class Before:
    """One run's band as recorded before this round."""

    p10: float
    p50: float
    p90: float
    inside: bool


def before_bands(path: Path = BEFORE_CSV) -> dict[str, Before]:
    """Run id -> its recorded band (empty when the file is absent)."""
    if not path.exists():
        return {}
    return {row["id"]: Before(p10=float(row["p10"]), p50=float(row["p50"]),
                              p90=float(row["p90"]), inside=row["inside"] == "yes")
            for row in read_rows(path)}


HEADER = ("id", "model", "scale", "GPUs", "days", "split", "figure", "published_gpuh", "P10",
          "P50", "P90", "P90/P10", "pub/P50", "inside", "before P10-P90", "before pub/P50",
          "before inside")


def cells(results: Sequence[SimulatedRun],
          before: dict[str, Before] | None = None) -> list[tuple[str, ...]]:
    """One table line per run (with its band before this round where recorded)."""
    lines = []
    for r in results:
        row = r.row
        days = float(row["published_gpu_hours"]) / int(row["gpus"]) / 24
        inside = "-" if r.inside is None else ("yes" if r.inside else "NO")
        old = (before or {}).get(row["id"])
        was = (("-", "-", "-") if old is None else
               (f"{_num(old.p10)}-{_num(old.p90)}", f"{r.published / old.p50:.2f}",
                "yes" if old.inside else "NO"))
        lines.append((row["id"], row["model"][:28], row["scale_class"], row["gpus"],
                      f"{days:.3g}", row["split"], figure_basis(row), _num(r.published),
                      _num(r.p10), _num(r.p50), _num(r.p90),
                      "-" if r.spread is None else f"{r.spread:.2f}",
                      "-" if not r.p50 else f"{r.published / r.p50:.2f}",
                      inside if not r.reason else f"no: {r.reason}", *was))
    return lines


def summary(results: Sequence[SimulatedRun], before: dict[str, Before] | None = None) -> str:
    """Coverage per half and per scale class, median P90/P10 and the misses (before -> after
    where the runs' earlier bands are recorded)."""
    old = before or {}

    def was(rated: Sequence[SimulatedRun]) -> str:
        # the runs with a recorded band (runs added since have none: the counts differ)
        known = [old[r.row["id"]] for r in rated if r.row["id"] in old]
        if not known:
            return ""
        return f"{sum(b.inside for b in known)}/{len(known)} -> "

    lines = []
    halves = (CHECK, FIT, HELDOUT)
    later = sorted({r.row["split"] for r in results} - set(halves))  # e.g. heldout2
    for half in (*halves, *later):
        rated = [r for r in results if r.row["split"] == half]
        if not rated:
            continue
        lines.append(f"{half} half: {was(rated)}{sum(bool(r.inside) for r in rated)}"
                     f"/{len(rated)} inside P10-P90")
    for scale in ("small", "large"):
        rated = [r for r in results if r.row["scale_class"] == scale]
        lines.append(f"{scale} runs: {was(rated)}{sum(bool(r.inside) for r in rated)}"
                     f"/{len(rated)} inside")
    spreads = [r.spread for r in results if r.spread is not None]
    if spreads:
        known = [old[r.row["id"]] for r in results if r.row["id"] in old]
        prior = (f"{statistics.median(b.p90 / b.p10 for b in known):.2f} -> "
                 if known else "")
        lines.append(f"median P90/P10: {prior}{statistics.median(spreads):.2f}")
    misses = [r.row["id"] for r in results if not r.inside]
    lines.append("outside: " + (", ".join(misses) if misses else "none"))
    return "\n".join(lines)


def _table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> str:
    rows = [list(header), *[list(line) for line in lines]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
                     for r in rows)


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replications", type=int, default=REPLICATIONS,
                        help=f"replications per run (default {REPLICATIONS})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"seed (default {SEED})")
    parser.add_argument("--in-process", action="store_true",
                        help="simulate without writing report folders (same simulation)")
    parser.add_argument("--only", action="append", default=[],
                        help="simulate only this run id (repeatable)")
    parser.add_argument("--csv", action="store_true", help="write CSV rows instead of a table")
    parser.add_argument("--heldout", action="store_true",
                        help="the held-out runs of validation/heldout/training_runs.csv instead "
                             "(run once, after every model change is committed)")
    parser.add_argument("--heldout-dir", type=Path, default=None, metavar="DIR",
                        help="with --heldout: the held-out folder to read (its "
                             "training_runs.csv and architectures/; default "
                             f"{HELDOUT_DIR.relative_to(ROOT)})")
    parser.add_argument("--training-error-sigma", type=float, default=None, metavar="SIGMA",
                        help="draw each run's training model error with this log-sd (a "
                             "scenario uncertainty.throughput_error) instead of the shipped "
                             "training_error_sigma (default: the shipped one)")
    args = parser.parse_args(argv)
    sigma = args.training_error_sigma
    if sigma is not None and not 0 <= sigma <= 3:
        parser.error(f"--training-error-sigma must be in [0, 3] (got {sigma})")
    if args.heldout_dir is not None and not args.heldout:
        parser.error("--heldout-dir needs --heldout")
    if args.heldout and not (args.heldout_dir or HELDOUT_DIR).joinpath(HELDOUT_CSV.name).is_file():
        parser.error(f"--heldout-dir {args.heldout_dir}: no {HELDOUT_CSV.name} in that folder")
    every = (heldout_runs(args.heldout_dir or HELDOUT_DIR) if args.heldout
             else published_runs())
    rows = [r for r in every if not args.only or r["id"] in args.only]
    runner: Runner = run_in_process if args.in_process else run_cli
    results = simulate_runs(rows, runner, replications=args.replications, seed=args.seed,
                            training_error_sigma=sigma)
    before = {} if args.heldout else before_bands()
    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows(cells(results, before))
        return 0
    out(_table(HEADER, cells(results, before)))
    out("")
    out(summary(results, before))
    if args.heldout:
        spreads = [r.spread for r in results if r.spread is not None]
        inside = sum(bool(r.inside) for r in results)
        out(f"held-out goals (issue 18): >= 80 % inside P10-P90: {inside}/{len(results)} "
            f"({'met' if inside >= 0.8 * len(results) else 'missed'}); median P90/P10 <= 2: "
            f"{statistics.median(spreads):.2f} "
            f"({'met' if statistics.median(spreads) <= 2 else 'missed'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
