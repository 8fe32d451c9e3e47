"""Fit what real runs lose beyond hardware faults, and the steady-state model's error, on the
fit half of the published runs (A01-A32).

Every run of tests/data/published_runs_allin.csv and tests/data/training_runs_published.csv is
built as the one-phase scenario scripts/allin_check.py simulates, and estimated the way the
simulator prepares it (:func:`costsim.sim.prepare.training_estimate`: steady wall time, and the
goodput model's hardware all-in time). On the runs whose ``split`` is ``fit`` it fits, by maximum
likelihood (:func:`costsim.perf.allin_loss.fit_allin_loss`), the long-run median and log-sd of
the extra loss x and the log-sd σε of the steady-state model's error, with the onset D0 of the
loss taken as published (costsim/data/allin_loss.csv, ``extra_loss_onset_days``).

    python scripts/fit_allin_loss.py            # print each run's ratio and the fit
    python scripts/fit_allin_loss.py --write    # also rewrite costsim/data/allin_loss.csv
                                                # (the loss rows; σε: training_model_error.py)
    python scripts/fit_allin_loss.py --check    # exit 1 when the data file differs from the fit

Rerun with --write whenever the performance or goodput model changes (the steady estimates move,
so the ratios and the fit move with them): tests/perf/test_allin_calibration.py fails until the
shipped defaults equal what this script writes. Then check through the simulator with
scripts/allin_check.py.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from costsim.catalog.gpus import get_gpu
from costsim.catalog.perf_defaults import (
    allin_loss_defaults,
    framework_comparisons,
    perf_defaults,
)
from costsim.domain.performance import AllinLossAssumptions, PerfDefaults
from costsim.domain.workload import TrainingFramework
from costsim.perf.allin_loss import AllinLossFit, extra_loss_median, fit_allin_loss
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR
from scripts.allin_check import STEADY, figure_basis, published_runs, write_scenario
from scripts.defaults_file import with_rows, write_or_check
from scripts.published_table import CHECK, FIT

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS_CSV = ROOT / "costsim" / "data" / "allin_loss.csv"
# The rows this script writes. The training model's error σε is fitted here too (the same
# likelihood, in sample: "the fit-half value", printed), but since issue 18's fourth held-out
# set the shipped training_error_sigma is the out-of-sample value scripts/training_model_error.py
# estimates from the held-out runs, starting from the fit-half value.
FITTED_KEYS = ("extra_loss_median", "extra_loss_sigma")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRatio:
    """One published run against the simulator's preparation of it."""

    row: dict[str, str]
    gpus: int
    steady_wall_time_s: float
    hardware_allin_gpu_hours: float
    steady_mfu: float  # the training model's MFU at steady speed

    @property
    def published_gpu_hours(self) -> float:
        """The published all-in GPU-hours."""
        return float(self.row["published_gpu_hours"])

    @property
    def steady_days(self) -> float:
        """Steady wall time in days (D)."""
        return self.steady_wall_time_s / SECONDS_PER_DAY

    @property
    def loss_free(self) -> bool:
        """The published figure holds no loss beyond steady speed (FIGURE_BASIS_RULE)."""
        return figure_basis(self.row) == STEADY

    @property
    def ratio(self) -> float:
        """Published / hardware all-in: the loss beyond hardware faults and the model's error."""
        return self.published_gpu_hours / self.hardware_allin_gpu_hours


def run_ratios(rows: Sequence[dict[str, str]], defaults: PerfDefaults) -> list[RunRatio]:
    """Each run's steady wall time and hardware all-in GPU-hours as the simulator prepares its
    one-phase scenario (scripts/allin_check.py)."""
    from costsim.cli.scenario_names import load_scenario_file
    from costsim.sim.prepare import training_estimate

    ratios = []
    with tempfile.TemporaryDirectory() as folder:
        for row in rows:
            scenario = load_scenario_file(write_scenario(row, Path(folder))).scenario
            gpus = int(row["gpus"])
            est = training_estimate(scenario, scenario.phases[0], get_gpu(row["gpu"]), gpus,
                                    defaults)
            ratios.append(RunRatio(row=row, gpus=gpus,
                                   steady_wall_time_s=est.goodput.steady_wall_time_s,
                                   hardware_allin_gpu_hours=est.goodput.wall_time_s * gpus
                                   / SECONDS_PER_HOUR, steady_mfu=est.step.mfu))
    return ratios


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """The fit on the fit half and the loss assumptions it gives."""

    fit: AllinLossFit
    loss: AllinLossAssumptions
    runs: tuple[RunRatio, ...]

    @property
    def fit_ids(self) -> tuple[str, ...]:
        """The runs fitted on."""
        return tuple(r.row["id"] for r in self.runs if r.row["split"] == FIT)


def calibrate(runs: Sequence[RunRatio], onset_days: float,
              validation_error_sigma: float) -> Calibration:
    """Fit the loss and the training model's error on the fit half of ``runs``; the error is
    kept at or above ``validation_error_sigma`` (the model's error on its own validation rows:
    it is not more accurate on runs it was not calibrated on)."""
    fitted = [r for r in runs if r.row["split"] == FIT]
    fit = fit_allin_loss([r.ratio for r in fitted], [r.steady_wall_time_s for r in fitted],
                         onset_days=onset_days,
                         min_throughput_error_sigma=validation_error_sigma,
                         loss_free=[r.loss_free for r in fitted])
    loss = AllinLossAssumptions(extra_loss_median=fit.extra_loss_median,
                                extra_loss_sigma=fit.extra_loss_sigma,
                                throughput_error_sigma=validation_error_sigma,
                                extra_loss_onset_days=onset_days,
                                training_error_sigma=fit.throughput_error_sigma)
    return Calibration(fit=fit, loss=loss, runs=tuple(runs))


def _value(value: float) -> str:
    return f"{value:.4g}"


def defaults_text(calibration: Calibration, current: str) -> str:
    """``current`` (the data file's text) with the fitted rows' values and sources replaced."""
    fit = calibration.fit
    where = (f"on the fit half of the published runs ({', '.join(calibration.fit_ids)}; "
             f"tests/data/published_runs_allin.csv and training_runs_published.csv) with each "
             f"run's steady wall time and hardware all-in time as the simulator prepares its "
             f"one-phase scenario, and extra_loss_onset_days as published")
    sources = {
        "extra_loss_median": (
            f"fitted by scripts/fit_allin_loss.py (maximum likelihood of ln(published / hardware "
            f"all-in GPU-hours)) {where}: the median of x for a run of many onset periods "
            f"(docs/performance.md, What real runs lose)"),
        "extra_loss_sigma": (
            f"fitted by scripts/fit_allin_loss.py (same maximum likelihood) {where}: the spread "
            f"of x between runs"),
    }
    values = {"extra_loss_median": fit.extra_loss_median,
              "extra_loss_sigma": fit.extra_loss_sigma}
    return with_rows(current, {key: (values[key], sources[key]) for key in values})


def table(calibration: Calibration) -> str:
    """Each run: GPUs, steady days, ratio and the fitted median loss for its duration."""
    lines = ["| run | half | figure | GPUs | steady days | published | hardware all-in "
             "| ratio | median x |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for run in calibration.runs:
        median = 0.0 if run.loss_free else extra_loss_median(calibration.loss,
                                                             run.steady_wall_time_s)
        lines.append(f"| {run.row['id']} | {run.row['split']} | {figure_basis(run.row)} "
                     f"| {run.gpus:,} "
                     f"| {run.steady_days:.3g} | {run.published_gpu_hours:,.4g} "
                     f"| {run.hardware_allin_gpu_hours:,.4g} | {run.ratio:.2f} "
                     f"| {median:.3f} |")
    return "\n".join(lines)


def summary(calibration: Calibration) -> str:
    """The fitted values in words."""
    fit, loss = calibration.fit, calibration.loss
    return (f"extra loss x ~ lognormal, median {fit.extra_loss_median:.4f} x (1 - exp(-D / "
            f"{loss.extra_loss_onset_days:g} days)), log-sd {fit.extra_loss_sigma:.4f}; "
            f"training model's error log-sd {fit.throughput_error_sigma:.4f} (the fit-half "
            f"value, in sample; the shipped training_error_sigma is "
            f"scripts/training_model_error.py's, from the held-out runs) "
            f"(fitted on {fit.runs} runs, log-likelihood {fit.log_likelihood:.3f}; "
            f"{sum(r.row['split'] == CHECK for r in calibration.runs)} checking runs left for "
            f"scripts/allin_check.py)")


_CITED_RUN = re.compile(r"published run (A\d+)")


def held_out_factor_runs(runs: Sequence[RunRatio], defaults: PerfDefaults) -> list[RunRatio]:
    """``runs`` with every fit-half run that a framework factor is derived from re-estimated
    under that factor derived without it (leave-one-out).

    σε is the steady-state model's error on runs it was not calibrated on
    (costsim/data/allin_loss.csv). A framework factor derived from fit-half runs
    (``torch-compile``: the geometric mean of its runs' ratios, scripts/derive_compile_factor.py)
    is centred on those very runs, so their ratios under it understate the error a new run of
    that stack meets; under the factor of the other runs each is a run the model was not
    calibrated on, as for every other fit-half run."""
    cited: dict[str, tuple[TrainingFramework, float]] = {}
    for comparison in framework_comparisons():
        match = _CITED_RUN.search(comparison.run)
        if match:
            cited[match.group(1)] = (comparison.framework, comparison.ratio)
    out = []
    for run in runs:
        run_id = run.row["id"]
        if run.row["split"] != FIT or run_id not in cited:
            out.append(run)
            continue
        framework, _ = cited[run_id]
        others = [ratio for other, (kind, ratio) in cited.items()
                  if kind == framework and other != run_id]
        if not others:
            out.append(run)
            continue
        factor = math.exp(statistics.fmean(math.log(r) for r in others))
        efficiency = dict(defaults.training.framework_efficiency)
        efficiency[framework] = factor
        loo = replace(defaults, training=replace(defaults.training,
                                                 framework_efficiency=efficiency))
        out.append(run_ratios([run.row], loo)[0])
    return out


def current_calibration() -> Calibration:
    """The fit from today's models and data (what --write would ship): each fit-half run a
    framework factor rests on taken under the factor of the others (held_out_factor_runs)."""
    defaults = perf_defaults()
    runs = held_out_factor_runs(run_ratios(published_runs(), defaults), defaults)
    shipped = allin_loss_defaults()
    return calibrate(runs, shipped.extra_loss_onset_days, shipped.throughput_error_sigma)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="rewrite the fitted rows of costsim/data/allin_loss.csv")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when costsim/data/allin_loss.csv differs from the fit")
    args = parser.parse_args(argv)
    calibration = current_calibration()
    current = DEFAULTS_CSV.read_text(encoding="utf-8")
    text = defaults_text(calibration, current)
    print(table(calibration))
    print()
    print(summary(calibration))
    return write_or_check(DEFAULTS_CSV, current, text, "the fitted loss rows",
                          write=args.write, check=args.check, root=ROOT)


if __name__ == "__main__":
    raise SystemExit(main())
