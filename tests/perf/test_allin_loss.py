"""The extra-loss model (costsim/perf/allin_loss.py): hand-checkable worlds, properties, fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain.performance import AllinLossAssumptions, GoodputAssumptions, PerfDefaults
from costsim.perf.allin_loss import (
    extra_loss_median,
    fit_allin_loss,
    sample_extra_loss,
    sample_hardware_wall_s,
    simulate_allin,
)
from costsim.perf.goodput import estimate_goodput
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

NO_LOSS = AllinLossAssumptions(extra_loss_median=0.0, extra_loss_sigma=0.0,
                               throughput_error_sigma=0.0)
STEADY_S = 30 * 86_400.0  # a 30-day steady-state run
PARAMS_70B = 70_000_000_000


def _run(goodput: GoodputAssumptions, loss: AllinLossAssumptions, *, gpus: int = 4096,
         seed: int = 7, replications: int = 4000) -> np.ndarray:
    sample = simulate_allin(STEADY_S, gpus, PARAMS_70B, gpus_per_node=8, goodput=goodput,
                            loss=loss, rng=np.random.default_rng(seed),
                            replications=replications)
    return sample.wall_s


def test_without_failures_or_loss_the_run_takes_steady_time_over_evaluation_share(
        defaults: PerfDefaults) -> None:
    """No interruptions: no checkpoints are needed, so wall = steady / (1 − e) exactly."""
    calm = GoodputAssumptions(
        interruptions_per_gpu_hour=0.0, restart_s=defaults.goodput.restart_s,
        checkpoint_write_gb_per_s_per_node=1.0, checkpoint_bytes_per_param=14,
        checkpoint_fixed_s=10, evaluation_fraction=0.02)
    wall = _run(calm, NO_LOSS, replications=50)
    np.testing.assert_allclose(wall, STEADY_S / 0.98, rtol=1e-12)


def test_mean_hardware_loss_matches_the_goodput_formula(defaults: PerfDefaults) -> None:
    """With failures and no extra loss, the Monte Carlo mean wall time equals the goodput
    model's steady / goodput within three standard errors."""
    wall = _run(defaults.goodput, NO_LOSS, gpus=16_384, replications=20_000)
    analytic = estimate_goodput(STEADY_S, 16_384, PARAMS_70B, gpus_per_node=8,
                                assumptions=defaults.goodput).wall_time_s
    standard_error = wall.std(ddof=1) / np.sqrt(wall.size)
    assert wall.std() > 0  # interruptions really are random
    assert abs(wall.mean() - analytic) < 3 * standard_error


def test_interruption_count_is_poisson_with_the_renewal_mean() -> None:
    """K ~ Poisson(work / (MTBF − R − τ/2)): mean and variance of (wall − work)/(R + τ/2)."""
    work, mtbf, interval, restart = 1.0e6, 10_000.0, 2_000.0, 600.0
    wall = sample_hardware_wall_s(np.full(40_000, work), mtbf, interval, restart,
                                  np.random.default_rng(3))
    counts = (wall - work) / (restart + interval / 2)
    expected = work / (mtbf - restart - interval / 2)
    assert counts.mean() == pytest.approx(expected, rel=0.01)
    assert counts.var() == pytest.approx(expected, rel=0.05)


def test_extra_loss_stretches_every_replication_by_its_own_factor(
        defaults: PerfDefaults) -> None:
    loss = AllinLossAssumptions(extra_loss_median=0.1, extra_loss_sigma=1.0,
                                throughput_error_sigma=0.0)
    sample = simulate_allin(STEADY_S, 512, PARAMS_70B, gpus_per_node=8,
                            goodput=defaults.goodput, loss=loss,
                            rng=np.random.default_rng(1), replications=1000)
    np.testing.assert_allclose(sample.wall_s, sample.hardware_wall_s * (1 + sample.extra_loss))
    np.testing.assert_allclose(sample.gpu_hours, sample.wall_s * 512 / SECONDS_PER_HOUR)
    assert np.median(sample.extra_loss) == pytest.approx(0.1, rel=0.1)


losses = st.builds(
    AllinLossAssumptions,
    extra_loss_median=st.floats(0.0, 3.0),
    extra_loss_sigma=st.floats(0.0, 3.0),
    throughput_error_sigma=st.floats(0.0, 0.5),
)


@settings(max_examples=40, deadline=None)
@given(loss=losses, seed=st.integers(0, 2**32 - 1))
def test_extra_loss_is_never_negative(loss: AllinLossAssumptions, seed: int) -> None:
    assert np.all(sample_extra_loss(loss, np.random.default_rng(seed), 500,
                                    steady_wall_time_s=STEADY_S) >= 0)


@settings(max_examples=40, deadline=None)
@given(loss=losses, more=st.floats(0.0, 2.0), seed=st.integers(0, 2**32 - 1))
def test_more_loss_never_fewer_gpu_hours(defaults: PerfDefaults, loss: AllinLossAssumptions,
                                          more: float, seed: int) -> None:
    """Same seed, a larger median loss: no replication gets cheaper."""
    larger = AllinLossAssumptions(extra_loss_median=loss.extra_loss_median + more,
                                  extra_loss_sigma=loss.extra_loss_sigma,
                                  throughput_error_sigma=loss.throughput_error_sigma)
    base = _run(defaults.goodput, loss, seed=seed, replications=200)
    stretched = _run(defaults.goodput, larger, seed=seed, replications=200)
    assert np.all(stretched >= base)
    assert np.all(base > 0)


@settings(max_examples=20, deadline=None)
@given(loss=losses, seed=st.integers(0, 2**32 - 1))
def test_same_seed_same_numbers(defaults: PerfDefaults, loss: AllinLossAssumptions,
                                seed: int) -> None:
    first = _run(defaults.goodput, loss, seed=seed, replications=300)
    second = _run(defaults.goodput, loss, seed=seed, replications=300)
    np.testing.assert_array_equal(first, second)


def test_a_run_of_hours_loses_about_nothing_and_one_of_weeks_the_full_median() -> None:
    """x's median m · (1 − e^(−D/D0)): with D0 = 1.5 days, 3 hours carry 8 % of m, a day 49 %,
    a month all but 2e-9 of it; D0 = 0 keeps m for every run."""
    loss = AllinLossAssumptions(extra_loss_median=0.5, extra_loss_sigma=0.3,
                                throughput_error_sigma=0.1, extra_loss_onset_days=1.5)
    assert extra_loss_median(loss, 3 * 3600.0) == pytest.approx(0.5 * (1 - np.exp(-1 / 12)))
    assert extra_loss_median(loss, 3 * 3600.0) < 0.05
    assert extra_loss_median(loss, SECONDS_PER_DAY) == pytest.approx(0.5 * 0.4866, rel=1e-3)
    assert extra_loss_median(loss, 30 * SECONDS_PER_DAY) == pytest.approx(0.5, rel=1e-8)
    assert extra_loss_median(loss, 0.0) == 0.0
    flat = AllinLossAssumptions(extra_loss_median=0.5, extra_loss_sigma=0.3,
                                throughput_error_sigma=0.1)
    assert extra_loss_median(flat, 60.0) == 0.5
    with pytest.raises(ValueError, match="steady_wall_time_s"):
        extra_loss_median(loss, -1.0)


def test_a_short_run_s_band_is_the_model_error_alone(defaults: PerfDefaults) -> None:
    """Three hours on 8 GPUs: no hardware fault is likely (λ · 24 GPU-hours ≈ 5e-4), and the
    extra loss is a few per cent, so P10-P90 is the throughput error's own x1.3 band."""
    loss = AllinLossAssumptions(extra_loss_median=0.5, extra_loss_sigma=0.3,
                                throughput_error_sigma=0.1, extra_loss_onset_days=1.5)
    sample = simulate_allin(3 * 3600.0, 8, 124_000_000, gpus_per_node=8,
                            goodput=defaults.goodput, loss=loss,
                            rng=np.random.default_rng(5), replications=20_000)
    p10, p50, p90 = sample.gpu_hours_band()
    steady_gpu_hours = 3 * 8 / (1 - defaults.goodput.evaluation_fraction)
    assert p50 == pytest.approx(steady_gpu_hours * 1.04, rel=0.02)
    assert p90 / p10 == pytest.approx(np.exp(2 * 1.2816 * 0.1), rel=0.05)


@settings(max_examples=40, deadline=None)
@given(median=st.floats(0.0, 3.0), onset=st.floats(0.0, 30.0),
       days=st.floats(0.0, 400.0), more=st.floats(0.0, 400.0))
def test_a_longer_run_never_has_a_smaller_median_loss(median: float, onset: float, days: float,
                                                      more: float) -> None:
    loss = AllinLossAssumptions(extra_loss_median=median, extra_loss_sigma=1.0,
                                throughput_error_sigma=0.1, extra_loss_onset_days=onset)
    shorter = extra_loss_median(loss, days * SECONDS_PER_DAY)
    longer = extra_loss_median(loss, (days + more) * SECONDS_PER_DAY)
    assert 0 <= shorter <= longer <= median


def test_fit_recovers_the_parameters_of_a_synthetic_sample() -> None:
    """Runs of hours to months drawn from the model itself give back its long-run median, its
    spread and the model error (the short runs pin σε, the long ones the loss)."""
    rng = np.random.default_rng(11)
    truth = AllinLossAssumptions(extra_loss_median=0.4, extra_loss_sigma=0.5,
                                 throughput_error_sigma=0.2, extra_loss_onset_days=1.5)
    steady = SECONDS_PER_DAY * np.exp(rng.uniform(np.log(0.01), np.log(100.0), 1500))
    extra = np.array([sample_extra_loss(truth, rng, 1, steady_wall_time_s=s)[0]
                      for s in steady])
    ratios = (1 + extra) * np.exp(0.2 * rng.standard_normal(len(steady)))
    fit = fit_allin_loss(list(ratios), list(steady), onset_days=1.5,
                         min_throughput_error_sigma=0.05)
    assert fit.extra_loss_median == pytest.approx(0.4, rel=0.08)
    assert fit.extra_loss_sigma == pytest.approx(0.5, rel=0.2)
    assert fit.throughput_error_sigma == pytest.approx(0.2, rel=0.08)
    assert fit.runs == 1500


def test_fit_keeps_the_model_error_at_its_floor_when_the_data_are_tighter() -> None:
    steady = [3600.0, 7200.0, 10 * SECONDS_PER_DAY, 20 * SECONDS_PER_DAY]
    fit = fit_allin_loss([1.0, 1.001, 1.3, 1.31], steady, onset_days=1.5,
                         min_throughput_error_sigma=0.111)
    assert fit.throughput_error_sigma == pytest.approx(0.111, rel=1e-6)


def test_loss_free_runs_inform_the_model_error_alone() -> None:
    """Runs whose figures hold no loss (timers, throughput-derived times) have x = 0 whatever
    their duration: with every run so flagged the likelihood is that of ln y ~ N(0, σε²), so σε
    is the root mean square of the log ratios (hand-computed: ln 1.2, ln 0.9, ln 1.1, ln 0.95
    for runs of hours to months)."""
    ratios = [1.2, 0.9, 1.1, 0.95]
    steady = [3600.0, 10 * SECONDS_PER_DAY, 30 * SECONDS_PER_DAY, 90 * SECONDS_PER_DAY]
    fit = fit_allin_loss(ratios, steady, onset_days=1.5, min_throughput_error_sigma=0.01,
                         loss_free=[True] * 4)
    rms = float(np.sqrt(np.mean(np.log(ratios) ** 2)))  # 0.1326
    assert fit.throughput_error_sigma == pytest.approx(rms, rel=1e-4)
    # a long run's figure read as all-in would be explained by a loss instead: another fit
    as_all_in = fit_allin_loss(ratios, steady, onset_days=1.5, min_throughput_error_sigma=0.01)
    assert as_all_in != fit
    with pytest.raises(ValueError, match="length"):
        fit_allin_loss(ratios, steady, onset_days=1.5, min_throughput_error_sigma=0.01,
                       loss_free=[True])


def test_fit_is_deterministic_and_refuses_too_few_or_bad_ratios() -> None:
    ratios, steady = [1.1, 0.9, 1.4, 1.2], [3600.0, 86_400.0, 864_000.0, 8_640_000.0]
    first = fit_allin_loss(ratios, steady, onset_days=1.5, min_throughput_error_sigma=0.1)
    assert first == fit_allin_loss(ratios, steady, onset_days=1.5,
                                   min_throughput_error_sigma=0.1)
    with pytest.raises(ValueError, match="at least 3"):
        fit_allin_loss([1.2, 1.1], [1.0, 2.0], onset_days=1.5, min_throughput_error_sigma=0.1)
    with pytest.raises(ValueError, match="> 0"):
        fit_allin_loss([1.2, 0.0, 1.1], [1.0, 2.0, 3.0], onset_days=1.5,
                       min_throughput_error_sigma=0.1)
    with pytest.raises(ValueError, match="length"):
        fit_allin_loss([1.2, 1.3, 1.1], [1.0, 2.0], onset_days=1.5,
                       min_throughput_error_sigma=0.1)


def test_assumptions_refuse_negative_or_infinite_values() -> None:
    with pytest.raises(ValueError, match="extra_loss_median"):
        AllinLossAssumptions(extra_loss_median=-0.1, extra_loss_sigma=1.0,
                             throughput_error_sigma=0.1)
    with pytest.raises(ValueError, match="throughput_error_sigma"):
        AllinLossAssumptions(extra_loss_median=0.1, extra_loss_sigma=1.0,
                             throughput_error_sigma=float("inf"))
    with pytest.raises(ValueError, match="extra_loss_sigma"):
        AllinLossAssumptions(extra_loss_median=0.1, extra_loss_sigma=float("nan"),
                             throughput_error_sigma=0.1)
