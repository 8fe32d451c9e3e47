"""What real runs lose: the published runs (tests/data/published_runs_allin.csv), the fixed
fit/check split, the shipped default's derivation and its coverage on the checking half.

The default in costsim/data/allin_loss.csv must equal what scripts/fit_allin_loss.py computes
from the data today: when the performance model moves, rerun it with --write (docs/performance.md
"What real runs lose").
"""

from __future__ import annotations

import math

import pytest

from costsim.catalog.perf_defaults import allin_loss_defaults
from costsim.domain.performance import PerfDefaults
from scripts.fit_allin_loss import (
    CHECK,
    FIT,
    Calibration,
    PublishedRun,
    calibrate,
    load_runs,
    split_by_rule,
)

RUNS = load_runs()


@pytest.fixture(scope="module")
def calibration(defaults: PerfDefaults) -> Calibration:
    return calibrate(RUNS, defaults, allin_loss_defaults().throughput_error_sigma)


def test_enough_runs_from_different_operators_and_cluster_sizes() -> None:
    kinds = {run.operator_kind for run in RUNS}
    assert len(RUNS) >= 8
    assert kinds == {"hyperscaler", "lab", "startup_enterprise"}
    sizes = sorted(run.gpus for run in RUNS)
    assert sizes[0] <= 256  # a few hundred GPUs ...
    assert sizes[-1] >= 10_000  # ... to a hyperscale fleet


def test_split_column_is_the_documented_rule() -> None:
    """Within each operator kind, by source date: fit, check, fit, ... (fixed before fitting)."""
    rule = split_by_rule(RUNS)
    assert {run.id: run.split for run in RUNS} == rule
    assert sorted(i for i, half in rule.items() if half == FIT) == [
        "A01", "A03", "A04", "A06", "A08", "A10", "A12"]
    for kind in {run.operator_kind for run in RUNS}:
        halves = {run.split for run in RUNS if run.operator_kind == kind}
        assert halves == {FIT, CHECK}, kind


def test_shipped_default_is_the_fit_of_the_fit_half(calibration: Calibration) -> None:
    """The default can't drift from its derivation (values are written to 4 digits)."""
    shipped = allin_loss_defaults()
    assert shipped.extra_loss_median == pytest.approx(calibration.fit.extra_loss_median,
                                                      rel=1e-3)
    assert shipped.extra_loss_sigma == pytest.approx(calibration.fit.extra_loss_sigma,
                                                     rel=1e-3)
    assert calibration.fit.runs == sum(run.split == FIT for run in RUNS)
    assert "A01, A03, A04, A06, A08, A10, A12" in shipped.sources["extra_loss_median"]


def test_check_half_coverage_of_the_p10_p90_band(calibration: Calibration) -> None:
    """Measured: 5 of the 6 checking runs lie within their P10–P90 band (Falcon-180B, whose
    ~7M GPU-hours sit below today's steady-state estimate, does not). A regression to 3 of 6
    fails, and so does a band made so wide that it would hold anything."""
    inside, checked = calibration.coverage(CHECK)
    assert checked == 6
    assert inside >= 4
    for row in calibration.rows:
        assert row.p10 < row.p50 < row.p90
        assert row.p90 / row.p10 < 2.0, row.run.id  # measured 1.8


def test_lab_and_startup_runs_lose_more_than_hyperscalers(calibration: Calibration) -> None:
    """The issue's observation, on the data: the hyperscaler median ratio is below that of
    labs and start-ups, and the fitted extra loss has a mean of at least 15 %."""
    def median_ratio(kind: str) -> float:
        ratios = sorted(row.ratio for row in calibration.rows if row.run.operator_kind == kind)
        return ratios[len(ratios) // 2]

    assert median_ratio("hyperscaler") < min(median_ratio("lab"),
                                             median_ratio("startup_enterprise"))
    loss = calibration.loss
    mean_extra_loss = loss.extra_loss_median * math.exp(loss.extra_loss_sigma**2 / 2)
    assert mean_extra_loss >= 0.15


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run.id)
def test_every_run_is_estimated_on_its_own_cluster(run: PublishedRun,
                                                   calibration: Calibration) -> None:
    row = next(row for row in calibration.rows if row.run.id == run.id)
    assert 0 < row.steady_gpu_hours < row.hardware_allin_gpu_hours
    assert 0.5 < row.ratio < 2.5, (run.id, row.ratio)
