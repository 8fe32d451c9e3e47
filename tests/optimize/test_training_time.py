"""The analytic run model against the simulator's own run function, and its quadrature."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.domain.uncertainty import Fixed, LogNormal, Normal, Triangular, Uniform
from costsim.optimize import training_time
from costsim.optimize.training_time import RunInputs, expect_run, quadrature, run_factors
from costsim.sim.training_run import RunSpec, simulate_run


@pytest.mark.parametrize(("dist", "mean"), [
    (Fixed(value=2.0), 2.0),
    (LogNormal(sigma=1.55, median=0.11), 0.11 * math.exp(1.55**2 / 2)),
    (Normal(mean=-10, sd=8), -10.0),
    (Uniform(low=0.5, high=1.5), 1.0),
    (Triangular(low=0.7, mode=1.0, high=1.5), (0.7 + 1.0 + 1.5) / 3),
])
def test_quadrature_keeps_the_mean(dist: object, mean: float) -> None:
    rule = quadrature(dist)  # type: ignore[arg-type]
    assert rule.weights.sum() == pytest.approx(1.0)
    assert rule.mean() == pytest.approx(mean, rel=2e-3, abs=1e-9)


def fixed_factors(extra: float = 0.0):  # type: ignore[no-untyped-def]
    one = Fixed(value=1.0)
    return run_factors(tokens_scale=one, throughput_error=one, failure_scale=one,
                       hazard_scale=one, extra_loss=Fixed(value=extra), allin_scale=one)


@pytest.mark.parametrize(("preempt_per_h", "notice_s", "fallback"), [
    (0.0, 0.0, False),  # faults only
    (0.1, 0.0, True),  # lossy preemptions, on-demand fallback
    (0.1, 600.0, False),  # preemptions checkpointed within the notice, waiting to reacquire
    (0.1, 600.0, True),
    (0.5, 600.0, True),  # a preemption every two hours: free saves shorten the cycles
])
def test_expected_times_match_the_simulators_run_function(preempt_per_h: float,
                                                           notice_s: float,
                                                           fallback: bool) -> None:
    run = RunInputs(steady_s=40 * 3600.0, checkpoint_s=300.0, interval_s=3600.0,
                    restart_s=600.0, evaluation_fraction=0.02, fault_rate_per_s=0.2 / 3600,
                    preemption_rate_per_s=preempt_per_h / 3600, spot_notice_s=notice_s,
                    reacquire_s=1800.0, fallback=fallback, startup_s=300.0)
    expected = expect_run(run, fixed_factors(extra=0.1))
    spec = RunSpec(work_s=run.steady_s, checkpoint_s=run.checkpoint_s, interval_s=run.interval_s,
                   restart_s=run.restart_s, mtbf_s=1 / run.fault_rate_per_s,
                   evaluation_fraction=run.evaluation_fraction, extra_loss=0.1,
                   spot_hazard_per_s=run.preemption_rate_per_s, spot_notice_s=notice_s,
                   reacquire_s=run.reacquire_s, fallback=fallback)
    rng = np.random.default_rng(5)
    outs = [simulate_run(spec, rng) for _ in range(1500)]
    wall = np.mean([o.wall_s for o in outs]) + run.startup_s
    assert expected.wall_s == pytest.approx(wall, rel=0.01)
    assert expected.fallback_s == pytest.approx(np.mean([o.fallback_s for o in outs]),
                                                 rel=0.1, abs=60.0)
    assert expected.preemptions == pytest.approx(np.mean([o.preemptions for o in outs]),
                                                 rel=0.1, abs=0.05)
    assert expected.faults == pytest.approx(np.mean([o.faults for o in outs]), rel=0.1)
    billed = np.mean([o.billed_s for o in outs]) + run.startup_s
    assert expected.own_billed_s == pytest.approx(billed, rel=0.01)


def test_probability_of_a_late_run_falls_with_the_deadline() -> None:
    run = RunInputs(steady_s=40 * 3600.0, checkpoint_s=0.0, interval_s=3600.0,
                    restart_s=600.0, evaluation_fraction=0.0, fault_rate_per_s=0.0)
    one = Fixed(value=1.0)
    factors = run_factors(tokens_scale=one, throughput_error=LogNormal(sigma=0.1),
                          failure_scale=one, hazard_scale=one, extra_loss=Fixed(value=0.0),
                          allin_scale=one)
    expected = expect_run(run, factors)
    assert expected.log_sd == pytest.approx(0.1, rel=0.01)  # the throughput error alone
    # wall = 40 h / ε: P(wall > 40 h) = 1/2, P(wall > 40 h · e^0.1) = P(Z > 1)
    assert expected.p_longer_than(40 * 3600.0) == pytest.approx(0.5, abs=1e-3)
    assert expected.p_longer_than(40 * 3600.0 * math.exp(0.1)) == pytest.approx(0.1587,
                                                                                abs=1e-3)
    assert expected.p_longer_than(0.0) == 1.0


def test_probability_matches_the_run_function_under_the_heavy_tailed_extra_loss() -> None:
    """P(wall > the simulated P80 and P95) within 0.02 with the calibrated extra loss."""
    run = RunInputs(steady_s=40 * 3600.0, checkpoint_s=300.0, interval_s=3600.0,
                    restart_s=600.0, evaluation_fraction=0.02, fault_rate_per_s=0.2 / 3600,
                    preemption_rate_per_s=0.1 / 3600, spot_notice_s=600.0, reacquire_s=1800.0,
                    fallback=True)
    one = Fixed(value=1.0)
    loss = LogNormal(sigma=1.55, median=0.11)
    factors = run_factors(tokens_scale=one, throughput_error=LogNormal(sigma=0.1),
                          failure_scale=one, hazard_scale=one, extra_loss=loss, allin_scale=one)
    expected = expect_run(run, factors)
    rng = np.random.default_rng(9)
    walls = []
    for _ in range(3000):
        error = math.exp(0.1 * rng.standard_normal())
        x = 0.11 * math.exp(1.55 * rng.standard_normal())
        spec = RunSpec(work_s=run.steady_s / error, checkpoint_s=300.0, interval_s=3600.0,
                       restart_s=600.0, mtbf_s=3600 / 0.2, evaluation_fraction=0.02,
                       extra_loss=x, spot_hazard_per_s=0.1 / 3600, spot_notice_s=600.0,
                       reacquire_s=1800.0, fallback=True)
        walls.append(simulate_run(spec, rng).wall_s)
    for share in (0.2, 0.05):
        deadline = float(np.quantile(walls, 1 - share))
        assert expected.p_longer_than(deadline) == pytest.approx(share, abs=0.02)


@given(steady_h=st.floats(0.01, 5000), ckpt_s=st.floats(0, 3600), interval_h=st.floats(0.01, 50),
       fault_per_h=st.floats(0, 2), preempt_per_h=st.floats(0, 2), notice_s=st.floats(0, 600),
       fallback=st.booleans())
def test_expected_run_is_sane_for_any_inputs(steady_h: float, ckpt_s: float, interval_h: float,
                                             fault_per_h: float, preempt_per_h: float,
                                             notice_s: float, fallback: bool) -> None:
    run = RunInputs(steady_s=steady_h * 3600, checkpoint_s=ckpt_s, interval_s=interval_h * 3600,
                    restart_s=600.0, evaluation_fraction=0.02,
                    fault_rate_per_s=fault_per_h / 3600, preemption_rate_per_s=preempt_per_h / 3600,
                    spot_notice_s=notice_s, reacquire_s=1800.0, fallback=fallback,
                    startup_s=300.0)
    one = Fixed(value=1.0)
    factors = run_factors(tokens_scale=one, throughput_error=LogNormal(sigma=0.1),
                          failure_scale=LogNormal(sigma=0.4), hazard_scale=LogNormal(sigma=0.5),
                          extra_loss=LogNormal(sigma=1.55, median=0.11), allin_scale=one)
    e = expect_run(run, factors)
    assert math.isfinite(e.wall_s) or e.wall_s == math.inf
    if math.isfinite(e.wall_s):
        assert e.wall_s >= run.startup_s + run.steady_s * 0.9
        assert 0 <= e.fallback_s <= e.wall_s
        assert e.own_billed_s >= run.startup_s
        p = [e.p_longer_than(d * e.wall_s) for d in (0.5, 1.0, 2.0, 4.0)]
        assert all(0 <= v <= 1 for v in p)
        assert p == sorted(p, reverse=True)


@pytest.mark.parametrize("dist", [LogNormal(sigma=0.3, median=1.2), Normal(mean=1, sd=0.1),
                                  Uniform(low=0.5, high=1.5)])
def test_quadrature_nodes_computed_once_are_numpys_and_read_only(dist: object) -> None:
    # issue 20: the Gauss nodes are memoized per count; the rule is what numpy's nodes give
    rule = quadrature(dist, nodes=7)  # type: ignore[arg-type]
    again = quadrature(dist, nodes=7)  # type: ignore[arg-type]
    if isinstance(dist, Uniform):
        t, w = np.polynomial.legendre.leggauss(7)
        np.testing.assert_array_equal(rule.values, dist.low + (t + 1) / 2 * (dist.high - dist.low))
        np.testing.assert_array_equal(rule.weights, w / 2)
    else:
        t, w = np.polynomial.hermite.hermgauss(7)
        np.testing.assert_array_equal(rule.weights, w / math.sqrt(math.pi))
    np.testing.assert_array_equal(again.values, rule.values)
    rule.values[0] = -1.0  # a rule's own arrays stay the caller's to change
    assert again.values[0] != -1.0
    cached = training_time._gauss_hermite(7) + training_time._gauss_legendre(7)
    assert not any(array.flags.writeable for array in cached)


def _rule(values: list[float]) -> training_time.Quadrature:
    return training_time.Quadrature(np.asarray(values), np.full(len(values), 1.0 / len(values)))


@given(rules=st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=6),
                      min_size=1, max_size=3))
def test_a_memoized_factor_grid_equals_a_cold_product(rules: list[list[float]]) -> None:
    quads = [_rule(v) for v in rules]
    (cold_grids, cold_weight) = training_time.product(*quads)
    for _ in range(2):  # a miss, then a hit
        grids, weight = training_time._factor_grid(*(_rule(v) for v in rules))
        assert len(grids) == len(cold_grids)
        for ours, theirs in zip(grids, cold_grids, strict=True):
            assert ours.tobytes() == theirs.tobytes()
            assert not ours.flags.writeable  # shared between runs: read-only
        assert weight.tobytes() == cold_weight.tobytes()


def test_expect_run_with_a_warm_grid_equals_a_cold_one() -> None:
    factors = run_factors(tokens_scale=Normal(mean=1.0, sd=0.1), throughput_error=LogNormal(
        sigma=0.2), failure_scale=Uniform(low=0.5, high=2.0), hazard_scale=LogNormal(sigma=0.5),
        extra_loss=LogNormal(sigma=1.0, median=0.05), allin_scale=Fixed(value=1.0))
    run = RunInputs(steady_s=86_400.0 * 9, checkpoint_s=120.0, interval_s=3_600.0,
                    restart_s=600.0, evaluation_fraction=0.02, fault_rate_per_s=2e-5,
                    preemption_rate_per_s=1e-5, spot_notice_s=120.0, reacquire_s=900.0,
                    fallback=True, startup_s=300.0)
    training_time._grid_of.cache_clear()
    cold = expect_run(run, factors)
    warm = expect_run(run, factors)
    assert training_time._grid_of.cache_info().hits == 1
    assert cold == warm
