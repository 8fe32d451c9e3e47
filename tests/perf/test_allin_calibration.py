"""What real runs lose: the shipped loss defaults (costsim/data/allin_loss.csv) are what
scripts/fit_allin_loss.py fits on the fit half of the published runs A01-A32 today (the
training model's error fitted with them is the fit-half value; the shipped one is estimated out
of sample from it by scripts/training_model_error.py).

When the performance or goodput model moves, the steady estimates move and these tests fail
until ``python scripts/fit_allin_loss.py --write`` is rerun (docs/performance.md "What real runs
lose"); the check of the fitted model on the other half runs through the simulator
(tests/perf/test_allin_check.py, scripts/allin_check.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from costsim.catalog.perf_defaults import allin_loss_defaults
from costsim.perf.allin_loss import extra_loss_median
from scripts.fit_allin_loss import (
    DEFAULTS_CSV,
    Calibration,
    current_calibration,
    defaults_text,
)
from scripts.published_table import CHECK, FIT
from scripts.training_model_error import FIT_HALF_SIGMA


@pytest.fixture(scope="module")
def calibration() -> Calibration:
    return current_calibration()


def test_the_data_file_is_what_the_fit_script_writes(calibration: Calibration) -> None:
    """Byte for byte: values to 4 significant digits, and each fitted row's source naming the
    runs it was fitted on."""
    current = DEFAULTS_CSV.read_text(encoding="utf-8")
    assert defaults_text(calibration, current) == current
    shipped = allin_loss_defaults()
    assert shipped.extra_loss_median == pytest.approx(calibration.fit.extra_loss_median,
                                                      rel=1e-3)
    assert shipped.extra_loss_sigma == pytest.approx(calibration.fit.extra_loss_sigma, rel=1e-3)
    # σε fitted here is the fit-half value, the grid start of the shipped out-of-sample value
    # (scripts/training_model_error.py, tests/perf/test_training_model_error.py)
    assert calibration.fit.throughput_error_sigma == pytest.approx(FIT_HALF_SIGMA, rel=1e-3)
    assert shipped.training_error_sigma >= FIT_HALF_SIGMA


def test_fitted_on_the_fit_half_only(calibration: Calibration) -> None:
    """17 of the 32 runs, the split written in the data files before any comparison."""
    assert len(calibration.runs) == 32
    assert calibration.fit.runs == 17
    assert calibration.fit_ids == ("A01", "A03", "A04", "A06", "A08", "A10", "A12", "A14", "A15",
                                   "A17", "A20", "A22", "A24", "A26", "A28", "A30", "A32")
    assert sum(run.row["split"] == CHECK for run in calibration.runs) == 15
    assert "A01, A03, A04" in allin_loss_defaults().sources["extra_loss_median"]
    assert all(run.row["split"] in (FIT, CHECK) for run in calibration.runs)


def test_the_onset_is_published_not_fitted() -> None:
    """D0 comes from incident records (OPT-175B, Llama 3), and the script reads it."""
    loss = allin_loss_defaults()
    assert loss.extra_loss_onset_days == 1.5
    assert "not fitted" in loss.sources["extra_loss_onset_days"]
    assert "OPT-175B" in loss.sources["extra_loss_onset_days"]


def test_the_model_error_is_no_smaller_than_on_its_validation_rows(
        calibration: Calibration) -> None:
    shipped = allin_loss_defaults()
    assert shipped.throughput_error_sigma == pytest.approx(0.111)  # ln(1.2)/1.645
    assert calibration.fit.throughput_error_sigma >= shipped.throughput_error_sigma * (1 - 1e-9)
    assert shipped.training_sigma == shipped.training_error_sigma


def test_short_runs_lose_about_nothing_and_long_runs_the_full_median(
        calibration: Calibration) -> None:
    """The issue's requirement on the shipped loss: a run of under 5 hours (the nanoGPT
    speedruns, the nanochat runs, Alpaca) carries under 13 % of the long-run median (1 −
    e^(−0.2/1.5)), a run of over a week more than 99 %."""
    loss = calibration.loss
    for run in calibration.runs:
        median = extra_loss_median(loss, run.steady_wall_time_s)
        if run.steady_days < 0.2:
            assert median < 0.13 * loss.extra_loss_median, run.row["id"]
        if run.steady_days > 7:
            assert median > 0.99 * loss.extra_loss_median, run.row["id"]


def test_every_run_is_estimated_on_its_own_cluster(calibration: Calibration) -> None:
    """Each run is prepared on its published GPU count, and no ratio is off by the order of
    magnitude a wrong cluster (or a unit slip) gives; how far the model misses a run is
    scripts/allin_check.py's table (docs/performance.md: A18 Alpaca, ×5.5, a steady-state
    miss of a padded HF Trainer fine-tune)."""
    for run in calibration.runs:
        assert run.gpus == int(run.row["gpus"]), run.row["id"]
        assert run.steady_wall_time_s > 0
        assert 0.2 < run.ratio < 10.0, (run.row["id"], run.ratio)


def test_a_run_a_framework_factor_rests_on_is_fitted_under_the_others() -> None:
    """σε is the error on runs the model was not calibrated on: each fit-half run the
    torch-compile factor is derived from enters the fit under the geometric mean of the other
    runs' ratios (leave-one-out), every other run as estimated with the shipped defaults."""
    from dataclasses import replace

    from costsim.catalog.perf_defaults import framework_comparisons, perf_defaults
    from costsim.domain.workload import TrainingFramework
    from scripts.allin_check import published_runs
    from scripts.fit_allin_loss import held_out_factor_runs, run_ratios

    defaults = perf_defaults()
    rows = [r for r in published_runs() if r["id"] in ("A20", "A32", "A30")]
    plain = run_ratios(rows, defaults)
    held = {r.row["id"]: r for r in held_out_factor_runs(plain, defaults)}
    compile_rows = [c for c in framework_comparisons()
                    if c.framework is TrainingFramework.TORCH_COMPILE]
    others = [c.ratio for c in compile_rows if "published run A32" not in c.run]
    assert len(others) == len(compile_rows) - 1
    factor = float(np.exp(np.mean(np.log(others))))
    efficiency = {**defaults.training.framework_efficiency,
                  TrainingFramework.TORCH_COMPILE: factor}
    loo = replace(defaults, training=replace(defaults.training, framework_efficiency=efficiency))
    expected = run_ratios([r for r in rows if r["id"] == "A32"], loo)[0]
    assert held["A32"].hardware_allin_gpu_hours == pytest.approx(
        expected.hardware_allin_gpu_hours, rel=1e-9)
    assert held["A32"].ratio != pytest.approx(plain[2].ratio, rel=1e-3)  # the factor moved
    assert held["A30"] == plain[1]  # a Megatron-class run: untouched
