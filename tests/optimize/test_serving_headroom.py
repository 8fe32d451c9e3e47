"""The optimizer's serving fleets leave their load-based autoscaler room for an engine slower
than predicted (docs/optimizer.md): the maximum is the highest plausible peak's replicas at
the capacity's low plausible end, so that in the simulator the capacity error becomes cost
rather than a cap on the fleet. The screen prices a predicted fleet at its expected replicas
(the prediction at E[1/capacity factor]), as the simulator's futures average."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.catalog.perf_defaults import allin_loss_defaults
from costsim.catalog.prices import price_book
from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import (
    Fixed,
    LogNormal,
    Triangular,
    Uncertainty,
    Uniform,
)
from costsim.optimize.space import capacity_low_factor, search_space
from costsim.perf.sizing import replicas_for_rate
from costsim.sim.prepare import ServingPrep
from tests.serving_scenario import serving_scenario


def _scenario(tmp_path: Path, extra: str = "") -> Scenario:
    path = tmp_path / "s.yaml"
    path.write_text(serving_scenario("headroom", peak_requests_per_s=200, diurnal=False,
                                     extra=extra))
    return load_scenario_file(path).scenario


def _h100(scenario: Scenario) -> tuple[int, ServingPrep]:
    space = search_space(scenario, price_book())
    (choice,) = [c for c in space.choices("serve") if c.use.entries[0].gpu == "H100"]
    assert isinstance(choice.prep, ServingPrep)
    high = choice.use.entries[0].autoscale.max_replicas  # type: ignore[union-attr]
    assert high is not None
    assert choice.prep.entries[0].max_replicas == high
    return high, choice.prep


def test_the_maximum_leaves_room_for_the_capacity_error(tmp_path: Path) -> None:
    """With the default error (σ 0.641 on a predicted capacity) the maximum is the peak's
    replicas at e^(−2σ) × the prediction, well above the predicted peak's; with an exact
    capacity (throughput_error fixed at 1) it is the predicted peak's."""
    (tmp_path / "default").mkdir()
    (tmp_path / "exact").mkdir()
    scenario = _scenario(tmp_path / "default")
    high, prep = _h100(scenario)
    entry = prep.entries[0]
    predicted = int(replicas_for_rate(200.0, entry.sizing_capacity_s))
    loss = allin_loss_defaults()
    low = math.exp(-2 * math.hypot(loss.throughput_error_sigma, loss.serving_extra_sigma))
    assert capacity_low_factor(scenario, prep) == pytest.approx(low)
    assert high == int(replicas_for_rate(200.0, entry.sizing_capacity_s * low))
    assert high > 2 * predicted
    exact, _ = _h100(_scenario(
        tmp_path / "exact", "uncertainty:\n  throughput_error: {dist: fixed, value: 1.0}\n"))
    assert exact == predicted


@given(value=st.floats(0.05, 3.0), sigma=st.floats(0.0, 1.5))
def test_the_low_factor_is_the_low_plausible_end_at_most_one(
        value: float, sigma: float) -> None:
    """A factor's distribution (fixed, lognormal, uniform, triangular: the scenario allows no
    normal) at its low plausible end."""
    class _Scenario:  # only the uncertainty block is read
        def __init__(self, dist: object) -> None:
            self.uncertainty = Uncertainty(throughput_error=dist)  # type: ignore[arg-type]

    prep = ServingPrep.__new__(ServingPrep)
    cases = {
        Fixed(value=value): min(1.0, value),
        LogNormal(sigma=sigma, median=value): min(1.0, value * math.exp(-2 * sigma)),
        Uniform(low=value, high=value + 1): min(1.0, value),
        Triangular(low=value, mode=value + 0.5, high=value + 1): min(1.0, value),
    }
    for dist, expected in cases.items():
        got = capacity_low_factor(_Scenario(dist), prep)  # type: ignore[arg-type]
        assert got == pytest.approx(expected)


def _screen_and_simulated_cost(folder: Path, extra: str = "") -> tuple[float, float]:
    """The screen's estimate of the H100 on-demand fleet and the simulator's mean cost of the
    same plan (400 futures)."""
    from costsim.catalog.sim_defaults import sim_assumptions
    from costsim.domain.scenario import RiskLimits
    from costsim.optimize.screen import estimate
    from costsim.sim.run_result import simulate_scenario

    folder.mkdir()
    scenario = _scenario(folder, extra)
    space = search_space(scenario, price_book())
    (choice,) = [c for c in space.choices("serve") if c.use.entries[0].gpu == "H100"
                 and c.use.entries[0].option.value == "on-demand"]
    screened = estimate(scenario, choice, 0.0, sim_assumptions(), RiskLimits()).cost_usd
    run = simulate_scenario(scenario, seed=3, replications=400, plans=["h100"])
    (plan,) = run.plans
    return screened, plan.cost_usd.mean


def test_the_screen_prices_a_predicted_fleet_at_the_simulated_mean(tmp_path: Path) -> None:
    """With the default errors the simulator's load-based fleet runs e^(σ²/2) ≈ 1.22 × the
    predicted replicas on average; the screen's estimate follows it (within 5 %), and with an
    exact capacity both are the prediction's."""
    default_screen, default_sim = _screen_and_simulated_cost(tmp_path / "default")
    exact_screen, exact_sim = _screen_and_simulated_cost(
        tmp_path / "exact", "uncertainty:\n  throughput_error: {dist: fixed, value: 1.0}\n")
    assert default_screen == pytest.approx(default_sim, rel=0.05)
    assert exact_screen == pytest.approx(exact_sim, rel=0.02)
    assert default_screen / exact_screen == pytest.approx(math.exp(0.625**2 / 2), rel=0.06)
