"""The extra-loss model (costsim/perf/allin_loss.py): hand-checkable worlds, properties, fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain.performance import AllinLossAssumptions, GoodputAssumptions, PerfDefaults
from costsim.perf.allin_loss import (
    fit_extra_loss,
    sample_extra_loss,
    sample_hardware_wall_s,
    simulate_allin,
)
from costsim.perf.goodput import estimate_goodput
from costsim.units import SECONDS_PER_HOUR

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
    assert np.all(sample_extra_loss(loss, np.random.default_rng(seed), 500) >= 0)


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


def test_fit_recovers_the_parameters_of_a_large_synthetic_sample() -> None:
    """Ratios drawn from the model itself give back its median and spread."""
    rng = np.random.default_rng(11)
    truth = AllinLossAssumptions(extra_loss_median=0.15, extra_loss_sigma=0.8,
                                 throughput_error_sigma=0.11)
    ratios = (1 + sample_extra_loss(truth, rng, 50_000)) * np.exp(0.11 * rng.standard_normal(
        50_000))
    fit = fit_extra_loss(list(ratios), 0.11)
    assert fit.extra_loss_median == pytest.approx(0.15, rel=0.05)
    assert fit.extra_loss_sigma == pytest.approx(0.8, rel=0.05)


def test_fit_is_deterministic_and_refuses_too_few_or_bad_ratios() -> None:
    ratios = [1.1, 0.9, 1.4, 1.2]
    assert fit_extra_loss(ratios, 0.1) == fit_extra_loss(ratios, 0.1)
    with pytest.raises(ValueError, match="at least 2"):
        fit_extra_loss([1.2], 0.1)
    with pytest.raises(ValueError, match="> 0"):
        fit_extra_loss([1.2, 0.0], 0.1)


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
