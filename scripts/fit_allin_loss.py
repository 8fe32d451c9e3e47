"""Fit what real runs lose beyond hardware faults, and check it on the other half.

Reads tests/data/published_runs_allin.csv (published training runs with their cluster and
all-in GPU-hours), predicts each run's steady-state time with the performance model and its
hardware all-in time with the goodput model, fits the lognormal extra loss on the fit half
(costsim.perf.allin_loss.fit_extra_loss) and reports each run's published GPU-hours against the
Monte Carlo P10/P50/P90 (costsim.perf.allin_loss.simulate_allin).

    python scripts/fit_allin_loss.py            # print the table (Markdown) and the fit
    python scripts/fit_allin_loss.py --write    # also rewrite costsim/data/allin_loss.csv

Rerun with --write whenever the performance or goodput model changes: the steady-state
estimates move, so the ratios and the fit move with them (tests/perf/test_allin_calibration.py
fails until the shipped default matches its derivation again).
"""

from __future__ import annotations

import argparse
import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_architecture_file, load_preset
from costsim.catalog.perf_defaults import allin_loss_defaults, perf_defaults
from costsim.domain.architecture import Architecture
from costsim.domain.performance import AllinLossAssumptions, PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Recompute, Task, TrainingSetup
from costsim.perf.allin_loss import ExtraLossFit, fit_extra_loss, simulate_allin
from costsim.perf.train_estimate import LayoutConstraints, TrainingEstimate, estimate_training_run
from costsim.units import SECONDS_PER_HOUR

ROOT = Path(__file__).resolve().parents[1]
RUNS_CSV = ROOT / "tests" / "data" / "published_runs_allin.csv"
ARCH_DIR = ROOT / "tests" / "data" / "architectures"
DEFAULTS_CSV = ROOT / "costsim" / "data" / "allin_loss.csv"
# Monte Carlo of each run's band: a fixed seed (row i draws from default_rng([SEED, i])) and
# enough replications that P10/P90 move < 0.5 % between seeds.
SEED = 20261201
REPLICATIONS = 20_000
FIT, CHECK = "fit", "check"


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishedRun:
    """One row of tests/data/published_runs_allin.csv."""

    id: str
    model: str
    architecture: str
    operator_kind: str
    source_date: str
    gpu: str
    gpus: int
    tokens: float
    seq_len: int
    global_batch_seqs: int
    tp: int | None
    pp: int | None
    zero: int | None
    recompute: Recompute | None
    precision: Dtype
    published_gpu_hours: float
    split: str


def _int_or_none(text: str) -> int | None:
    return int(text) if text.strip() else None


def load_runs(path: Path = RUNS_CSV) -> list[PublishedRun]:
    """The published runs, in file order."""
    with path.open(encoding="utf-8") as handle:
        return [
            PublishedRun(
                id=row["id"], model=row["model"], architecture=row["architecture"],
                operator_kind=row["operator_kind"], source_date=row["source_date"],
                gpu=row["gpu"], gpus=int(row["gpus"]), tokens=float(row["tokens"]),
                seq_len=int(row["seq_len"]), global_batch_seqs=int(row["global_batch_seqs"]),
                tp=_int_or_none(row["tp"]), pp=_int_or_none(row["pp"]),
                zero=_int_or_none(row["zero"]),
                recompute=Recompute(row["recompute"]) if row["recompute"] else None,
                precision=Dtype(row["precision"]),
                published_gpu_hours=float(row["published_gpu_hours"]), split=row["split"])
            for row in csv.DictReader(handle)
        ]


def split_by_rule(runs: Sequence[PublishedRun]) -> dict[str, str]:
    """The fixed split, decided before any result was seen: within each operator kind, runs
    sorted by source date (then id) alternate fit, check, fit, ... starting with fit. Every
    kind of operator lands on both sides, and neither side gets all the recent runs."""
    split: dict[str, str] = {}
    for kind in sorted({run.operator_kind for run in runs}):
        ordered = sorted((r for r in runs if r.operator_kind == kind),
                         key=lambda r: (r.source_date, r.id))
        for position, run in enumerate(ordered):
            split[run.id] = FIT if position % 2 == 0 else CHECK
    return split


def architecture_of(run: PublishedRun) -> Architecture:
    """The run's architecture: a shipped preset (``preset:NAME``) or a test config file."""
    if run.architecture.startswith("preset:"):
        return load_preset(run.architecture.removeprefix("preset:")).architecture
    return load_architecture_file(ARCH_DIR / run.architecture)


def estimate_run(run: PublishedRun, defaults: PerfDefaults) -> TrainingEstimate:
    """Today's estimate of the run on its own cluster, with its published layout degrees and
    global batch fixed and the rest searched like any user's."""
    fixed = LayoutConstraints(tp=run.tp, pp=run.pp, zero=run.zero, recompute=run.recompute,
                              global_batch_seqs=run.global_batch_seqs)
    base = TrainingSetup(task=Task.TRAIN, precision=run.precision, layout=ParallelLayout(),
                         seq_len=run.seq_len)
    return estimate_training_run(architecture_of(run), get_gpu(run.gpu), run.gpus, run.tokens,
                                 base, fixed, defaults=defaults, price_usd_per_gpu_hour=1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCheck:
    """One run's published GPU-hours against today's estimates and the predicted band."""

    run: PublishedRun
    steady_gpu_hours: float
    hardware_allin_gpu_hours: float
    p10: float
    p50: float
    p90: float

    @property
    def ratio(self) -> float:
        """Published / hardware all-in: what the run lost beyond hardware faults (and the
        steady-state model's error)."""
        return self.run.published_gpu_hours / self.hardware_allin_gpu_hours

    @property
    def inside(self) -> bool:
        """Whether the published figure lies within the P10–P90 band."""
        return self.p10 <= self.run.published_gpu_hours <= self.p90


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """The fit on the fit half and every run's check against the fitted model."""

    fit: ExtraLossFit
    loss: AllinLossAssumptions
    rows: tuple[RunCheck, ...]

    def coverage(self, split: str = CHECK) -> tuple[int, int]:
        """(runs inside their P10–P90 band, runs) of one half."""
        rows = [row for row in self.rows if row.run.split == split]
        return sum(row.inside for row in rows), len(rows)


def calibrate(runs: Sequence[PublishedRun], defaults: PerfDefaults,
              throughput_error_sigma: float, *, replications: int = REPLICATIONS,
              seed: int = SEED) -> Calibration:
    """Fit the extra loss on the fit half of ``runs`` and band every run with it."""
    estimates = [estimate_run(run, defaults) for run in runs]
    fit_ratios = [run.published_gpu_hours / est.gpu_hours
                  for run, est in zip(runs, estimates, strict=True) if run.split == FIT]
    fit = fit_extra_loss(fit_ratios, throughput_error_sigma)
    loss = AllinLossAssumptions(extra_loss_median=fit.extra_loss_median,
                                extra_loss_sigma=fit.extra_loss_sigma,
                                throughput_error_sigma=throughput_error_sigma)
    rows = []
    for index, (run, est) in enumerate(zip(runs, estimates, strict=True)):
        sample = simulate_allin(est.goodput.steady_wall_time_s, est.gpus, est.params_total,
                                gpus_per_node=defaults.networks[est.network].gpus_per_node,
                                goodput=defaults.goodput, loss=loss,
                                rng=np.random.default_rng([seed, index]),
                                replications=replications)
        p10, p50, p90 = sample.gpu_hours_band()
        rows.append(RunCheck(run=run, steady_gpu_hours=est.goodput.steady_wall_time_s
                             * est.gpus / SECONDS_PER_HOUR,
                             hardware_allin_gpu_hours=est.gpu_hours, p10=p10, p50=p50, p90=p90))
    return Calibration(fit=fit, loss=loss, rows=tuple(rows))


def _k(gpu_hours: float) -> str:
    return f"{gpu_hours / 1e3:,.0f}k"


def markdown_table(calibration: Calibration) -> str:
    """The calibration table of docs/performance.md (GPU-hours in thousands)."""
    lines = ["| run | kind | GPUs | half | published | steady | hardware all-in | ratio "
             "| P10 | P50 | P90 | inside |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in calibration.rows:
        run = row.run
        lines.append(
            f"| {run.id} {run.model} | {run.operator_kind} | {run.gpus:,} x {run.gpu} "
            f"| {run.split} | {_k(run.published_gpu_hours)} | {_k(row.steady_gpu_hours)} "
            f"| {_k(row.hardware_allin_gpu_hours)} | {row.ratio:.2f} | {_k(row.p10)} "
            f"| {_k(row.p50)} | {_k(row.p90)} | {'yes' if row.inside else 'no'} |")
    return "\n".join(lines)


def summary(calibration: Calibration) -> str:
    """The fitted values and both halves' coverage, in words."""
    fit = calibration.fit
    inside_check, check = calibration.coverage(CHECK)
    inside_fit, fitted = calibration.coverage(FIT)
    return (f"extra loss x ~ lognormal: median {fit.extra_loss_median:.4f}, log-sd "
            f"{fit.extra_loss_sigma:.4f} (fitted on {fit.runs} runs; mean ln ratio "
            f"{fit.log_ratio_mean:.4f}, variance {fit.log_ratio_variance:.4f}); throughput "
            f"error log-sd {calibration.loss.throughput_error_sigma:.4f}\n"
            f"P10-P90 coverage: check half {inside_check}/{check}, fit half "
            f"{inside_fit}/{fitted}")


def write_defaults(calibration: Calibration, path: Path = DEFAULTS_CSV) -> None:
    """Rewrite the fitted rows of ``costsim/data/allin_loss.csv`` (other rows kept)."""
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    fit_ids = ", ".join(row.run.id for row in calibration.rows if row.run.split == FIT)
    inside, check = calibration.coverage(CHECK)
    source = (f"fitted by scripts/fit_allin_loss.py (method of moments of ln(published / "
              f"hardware all-in GPU-hours)) on runs {fit_ids} of "
              f"tests/data/published_runs_allin.csv; its P10-P90 band holds {inside} of the "
              f"{check} checking runs (docs/performance.md, What real runs lose)")
    values = {"extra_loss_median": calibration.fit.extra_loss_median,
              "extra_loss_sigma": calibration.fit.extra_loss_sigma}
    for row in rows:
        if row["key"] in values:
            row["value"] = f"{values[row['key']]:.4g}"
            row["source"] = source
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true",
                        help="rewrite the fitted rows of costsim/data/allin_loss.csv")
    args = parser.parse_args(argv)
    runs = load_runs()
    calibration = calibrate(runs, perf_defaults(), allin_loss_defaults().throughput_error_sigma)
    print(markdown_table(calibration))
    print()
    print(summary(calibration))
    if args.write:
        write_defaults(calibration)
        print(f"wrote {DEFAULTS_CSV.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
