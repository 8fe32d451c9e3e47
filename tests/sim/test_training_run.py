"""A training run through faults and preemptions: exact without them, the analytic mean with."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain.spot import spot_expected_hours
from costsim.sim.training_run import RunSpec, simulate_run
from costsim.units import SECONDS_PER_HOUR

BASE = {"work_s": 100 * SECONDS_PER_HOUR, "checkpoint_s": 60.0, "interval_s": 1800.0,
        "restart_s": 600.0}


def _spec(**changes: float | bool) -> RunSpec:
    return RunSpec(**{**BASE, "mtbf_s": math.inf, **changes})  # type: ignore[arg-type]


def test_without_failures_the_run_takes_its_work_plus_its_checkpoints() -> None:
    out = simulate_run(_spec(), np.random.default_rng(0))
    checkpoints = math.ceil(BASE["work_s"] / 1800) - 1
    assert out.wall_s == pytest.approx(BASE["work_s"] + checkpoints * 60)
    assert out.billed_s == out.wall_s
    assert (out.faults, out.preemptions, out.lost_work_s) == (0, 0, 0.0)


def test_with_no_interruptions_and_no_checkpoint_cost_it_is_the_steady_time() -> None:
    out = simulate_run(_spec(checkpoint_s=0.0), np.random.default_rng(0))
    assert out.wall_s == BASE["work_s"]


def test_mean_time_under_faults_matches_dalys_expectation() -> None:
    """Exponential faults, checkpoint every τ: E[time] per segment = (1/λ + R)(e^{λs} − 1)."""
    mtbf_s = 5 * SECONDS_PER_HOUR
    spec = _spec(mtbf_s=mtbf_s)
    rng = np.random.default_rng(1)
    walls = np.array([simulate_run(spec, rng).wall_s for _ in range(2000)])
    expected_h = spot_expected_hours(BASE["work_s"] / SECONDS_PER_HOUR, 1 / 5, 0.5,
                                     restart_hours=600 / SECONDS_PER_HOUR,
                                     checkpoint_hours=60 / SECONDS_PER_HOUR)
    stderr = walls.std() / math.sqrt(walls.size)
    assert walls.mean() / SECONDS_PER_HOUR == pytest.approx(expected_h, abs=4 * stderr / 3600)


def test_mean_lost_work_matches_the_renewal_expectation() -> None:
    """Each fault loses the unfinished part of a τ+C cycle: E = 1/λ − s e^{−λs}/(1 − e^{−λs}),
    capped at τ; with λs small that is about s/2."""
    mtbf_s = 20 * SECONDS_PER_HOUR
    spec = _spec(mtbf_s=mtbf_s)
    rng = np.random.default_rng(2)
    outs = [simulate_run(spec, rng) for _ in range(3000)]
    per_fault = np.array([o.lost_work_s for o in outs]).sum() / sum(o.faults for o in outs)
    lam, s = 1 / mtbf_s, 1800.0 + 60.0
    expected = 1 / lam - s * math.exp(-lam * s) / (1 - math.exp(-lam * s))
    expected -= 60 * 60 / (2 * s)  # the part of the cycle spent checkpointing is not work
    assert per_fault == pytest.approx(expected, rel=0.05)


def test_spot_notice_longer_than_a_checkpoint_loses_no_work() -> None:
    spec = _spec(spot_hazard_per_s=1 / (10 * SECONDS_PER_HOUR), spot_notice_s=120.0)
    outs = [simulate_run(spec, np.random.default_rng(i)) for i in range(50)]
    assert sum(o.preemptions for o in outs) > 0
    assert all(o.lost_work_s == 0 for o in outs)


def test_a_fallback_replaces_the_spot_wait_with_on_demand_time() -> None:
    hazard = {"spot_hazard_per_s": 1 / (10 * SECONDS_PER_HOUR), "reacquire_s": 1800.0}
    waiting = simulate_run(_spec(**hazard), np.random.default_rng(3))
    falling = simulate_run(_spec(**hazard, fallback=True), np.random.default_rng(3))
    assert waiting.waiting_s > 0
    assert waiting.fallback_s == 0
    assert falling.waiting_s == 0
    assert falling.fallback_s > 0
    assert falling.wall_s < waiting.wall_s


def test_evaluation_and_extra_loss_add_their_shares() -> None:
    plain = simulate_run(_spec(checkpoint_s=0.0), np.random.default_rng(0))
    out = simulate_run(_spec(checkpoint_s=0.0, evaluation_fraction=0.02, extra_loss=0.25),
                       np.random.default_rng(0))
    assert out.wall_s == pytest.approx(plain.wall_s / 0.98 * 1.25)
    assert out.extra_loss_s == pytest.approx(out.wall_s * 0.2)


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=0.5, max_value=50), st.floats(min_value=0, max_value=0.5),
       st.integers(min_value=0, max_value=2**31))
def test_time_is_never_below_the_work_and_parts_add_up(mtbf_h: float, loss: float,
                                                       seed: int) -> None:
    spec = _spec(mtbf_s=mtbf_h * SECONDS_PER_HOUR, extra_loss=loss,
                 spot_hazard_per_s=1 / (30 * SECONDS_PER_HOUR), reacquire_s=900.0)
    out = simulate_run(spec, np.random.default_rng(seed))
    assert out.wall_s >= BASE["work_s"] - 1e-6
    assert out.wall_s == pytest.approx(out.billed_s + out.fallback_s + out.waiting_s)
    assert min(out.lost_work_s, out.restart_total_s, out.checkpoint_total_s) >= 0


@settings(max_examples=40, deadline=None)
@given(st.booleans(), st.floats(min_value=0.05, max_value=1), st.integers(0, 2**31))
def test_spot_time_lost_is_part_of_the_spot_time_billed(fallback: bool, scale: float,
                                                        seed: int) -> None:
    """The ledger books the last ``preemption_loss_s`` of the spot time as lost work: it can
    never exceed that time. With a fallback (which always makes progress) the hazard goes up
    to 20 reclaims an hour, shorter than a restart; restarts then run, and are billed, on
    on-demand."""
    hazard_per_h = scale * (20 if fallback else 1.5)  # without a fallback: still finishes
    spec = _spec(mtbf_s=math.inf, spot_hazard_per_s=hazard_per_h / SECONDS_PER_HOUR,
                 reacquire_s=1800.0, fallback=fallback)
    out = simulate_run(spec, np.random.default_rng(seed))
    assert 0 <= out.preemption_loss_s <= out.billed_s + 1e-6
