"""Serving fleets scale on observed load (docs/simulator.md "Serving"): each replication's
autoscaler sizes on the capacity its replicas turn out to have (the predicted capacity times
the drawn throughput and serving-model errors; measured capacity as measured), so where the
plan lets a fleet grow (rented replicas, a spill) a slower engine than predicted costs more
replicas, and where it cannot (a reservation without spill) the shortfall is unmet load."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.scenario import Scenario
from costsim.sim.montecarlo import PlanResult, plan_result, run_plan, simulate_block
from costsim.sim.prepare import PreparedPlan, ServingPrep, prepare_plan
from costsim.sim.serving_prep import ServingEntryPrep, _at_error
from tests.serving_scenario import serving_scenario

PEAK_RPS = 600.0
PLANS = """\
  - name: autoscaled
    use: {{serve: {{gpu: H100}}}}
  - name: reserved
    use: {{serve: {{gpu: H100, option: reserved, term: 1y, count: {tight}}}}}
  - name: reserved-headroom
    use: {{serve: {{gpu: H100, option: reserved, term: 1y, count: {roomy}}}}}
  - name: reserved-spill
    use: {{serve: {{gpu: H100, option: reserved, term: 1y, count: {half}, spill: on-demand}}}}
"""


def _write(folder: Path, extra: str, tight: int = 1) -> Scenario:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "s.yaml"
    plans = PLANS.format(tight=tight, roomy=2 * tight, half=max(1, tight // 2))
    path.write_text(serving_scenario("load-based scaling", peak_requests_per_s=PEAK_RPS,
                                     diurnal=True, plans=plans, extra=extra))
    return load_scenario_file(path).scenario


def _entry(scenario: Scenario, plan: str = "autoscaled") -> ServingEntryPrep:
    prep = _prepared(scenario, plan).phases["serve"]
    assert isinstance(prep, ServingPrep)
    return prep.entries[0]


def _prepared(scenario: Scenario, plan: str) -> PreparedPlan:
    chosen = next(p for p in scenario.plans if p.name == plan)
    prepared = prepare_plan(scenario, chosen)
    assert prepared.feasible, prepared.infeasible_reasons
    return prepared


def _tight(tmp_path: Path) -> int:
    """Replicas (one H100 each) the predicted capacity needs at the peak: a reservation of
    exactly this many serves the load if the prediction is right."""
    entry = _entry(_write(tmp_path / "probe", ""))
    assert entry.gpus_per_replica == 1
    return math.ceil(PEAK_RPS / entry.sizing_capacity_s)


def _scenario(tmp_path: Path, error: str) -> Scenario:
    tight = _tight(tmp_path)
    return _write(tmp_path / error.replace(" ", "").replace(":", "-").replace(",", "_")
                  .replace("{", "").replace("}", ""),
                  f"uncertainty:\n  throughput_error: {error}\n", tight)


def _run(scenario: Scenario, plan: str, replications: int = 40, workers: int = 1
         ) -> PlanResult:
    return run_plan(_prepared(scenario, plan), seed=5, replications=replications,
                    workers=workers)


def _attainment(result: PlanResult) -> float:
    assert result.metrics is not None
    assert result.metrics.slo_attainment is not None
    return result.metrics.slo_attainment


def _cost(result: PlanResult) -> tuple[float, float, float]:
    assert result.cost_usd is not None
    return result.cost_usd.p10, result.cost_usd.p50, result.cost_usd.p90


@pytest.fixture(scope="module")
def bands(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, float], PlanResult]:
    """Each plan under a narrow and a wide capacity error (the scenario's own
    throughput_error: it replaces the shared and the serving-model draws), 40 replications."""
    tmp_path = tmp_path_factory.mktemp("bands")
    out = {}
    for sigma in (0.02, 0.64):
        scenario = _scenario(tmp_path, f"{{dist: lognormal, sigma: {sigma}}}")
        for plan in ("autoscaled", "reserved", "reserved-spill"):
            out[plan, sigma] = _run(scenario, plan)
    return out


def test_a_wider_error_raises_an_elastic_fleets_p90_cost_not_a_fixed_ones(
        bands: dict[tuple[str, float], PlanResult]) -> None:
    """The autoscaled fleet: slow engines get more replicas (P90 up), fast ones fewer (P10
    down), and SLO attainment stays near target; a reservation with a spill grows on the spill;
    a reservation without one pays the same band and misses more of its load."""
    narrow, wide = bands["autoscaled", 0.02], bands["autoscaled", 0.64]
    assert _cost(wide)[2] > 1.3 * _cost(narrow)[2]
    assert _cost(wide)[0] < _cost(narrow)[0]
    for result in (narrow, wide):
        assert _attainment(result) > 0.99  # only the scale-up delay misses requests
    narrow, wide = bands["reserved-spill", 0.02], bands["reserved-spill", 0.64]
    assert _cost(wide)[2] > 1.1 * _cost(narrow)[2]  # the year's reservation is most of it
    assert _attainment(wide) > 0.99
    narrow, wide = bands["reserved", 0.02], bands["reserved", 0.64]
    assert _cost(wide) == pytest.approx(_cost(narrow), rel=1e-12)
    assert _attainment(narrow) > 0.99
    assert _attainment(wide) < _attainment(narrow) - 0.02


@settings(max_examples=8, deadline=None)
@given(slow=st.floats(0.3, 2.5), faster_by=st.floats(1.3, 2.0))
def test_a_slower_engine_costs_an_elastic_fleet_more_and_a_fixed_one_attainment(
        tmp_path_factory: pytest.TempPathFactory, slow: float, faster_by: float) -> None:
    """With the capacity error fixed at t (every replication the same), an elastic fleet pays
    more at the lower t and still serves its load; a reservation without spill pays the same
    and serves no more at the lower t, and what it misses is what its capacity cannot hold."""
    tmp_path = tmp_path_factory.mktemp("fixed")
    results = {}
    for t in (slow, slow * faster_by):
        scenario = _scenario(tmp_path, f"{{dist: fixed, value: {t!r}}}")
        results[t] = {plan: _run(scenario, plan, replications=2)
                      for plan in ("autoscaled", "reserved")}
    low, high = results[slow], results[slow * faster_by]
    assert _cost(low["autoscaled"])[1] > _cost(high["autoscaled"])[1]
    assert _attainment(low["autoscaled"]) > 0.99
    assert _cost(low["reserved"]) == pytest.approx(_cost(high["reserved"]), rel=1e-12)
    assert _attainment(low["reserved"]) <= _attainment(high["reserved"])
    # the reservation holds the predicted peak's replicas at the sizing rule's capacity; below
    # the share of its SLO capacity that leaves, it cannot serve the peak
    entry = _entry(_scenario(tmp_path, "{dist: fixed, value: 1.0}"))
    if slow < 0.9 * entry.sizing_capacity_s / entry.service_capacity_s:
        assert _attainment(low["reserved"]) < 0.99


def test_a_reservation_with_room_serves_a_slow_engine_on_its_idle_gpus(tmp_path: Path) -> None:
    """Twice the predicted peak's GPUs reserved: at t = 0.6 the autoscaler uses the reserved
    GPUs the prediction left idle (no extra cost) and the load is served."""
    scenario = _scenario(tmp_path, "{dist: fixed, value: 0.6}")
    slow = _run(scenario, "reserved-headroom", replications=2)
    exact = _run(_scenario(tmp_path, "{dist: fixed, value: 1.0}"), "reserved-headroom",
                 replications=2)
    assert _cost(slow) == pytest.approx(_cost(exact), rel=1e-12)
    assert _attainment(slow) > 0.99
    assert slow.metrics is not None
    assert exact.metrics is not None
    assert slow.metrics.gpu_hours_used > 1.5 * exact.metrics.gpu_hours_used


def test_measured_capacity_sizes_as_measured(tmp_path: Path) -> None:
    """A fully measured fleet draws no capacity error: the same fleet and bill at t = 0.5 as
    at t = 1 (DESIGN §12), where the predicted fleet's bill grows."""
    predicted = [_run(_scenario(tmp_path / "p", f"{{dist: fixed, value: {t}}}"), "autoscaled",
                      replications=3) for t in (0.5, 1.0)]
    assert _cost(predicted[0])[1] > 1.5 * _cost(predicted[1])[1]
    results = []
    for t in (0.5, 1.0):
        folder = tmp_path / str(t)
        folder.mkdir()
        (folder / "bench.csv").write_text(
            "model,prompt_tokens,output_tokens,request_rate,requests_per_s,source\n"
            "llama-3-8b,1000,200,inf,20.0,offline run\n")
        extra = ("measurements:\n  serving:\n    - {path: bench.csv, gpu: NVIDIA H100 80GB "
                 f"HBM3}}\nuncertainty:\n  throughput_error: {{dist: fixed, value: {t}}}\n")
        scenario = _write(folder, extra, tight=4)
        entry = _entry(scenario)
        assert entry.sizing_predicted_share == 0.0
        assert entry.sizing_capacity_at(t) == entry.sizing_capacity_s
        results.append(_run(scenario, "autoscaled", replications=3))
    assert results[0] == results[1]


@given(capacity=st.floats(0.1, 1e4), share=st.floats(0.0, 1.0), low=st.floats(0.05, 20.0),
       high=st.floats(0.05, 20.0))
def test_the_capacity_at_an_error_is_monotone_and_exact_at_its_ends(
        capacity: float, share: float, low: float, high: float) -> None:
    """1/c(t) = (1 − f)/c + f/(c·t): c at t = 1 or f = 0, c·t at f = 1, never falling in t."""
    low, high = min(low, high), max(low, high)
    assert _at_error(capacity, share, 1.0) == pytest.approx(capacity, rel=1e-12)
    assert _at_error(capacity, 0.0, low) == capacity
    assert _at_error(capacity, 1.0, low) == capacity * low
    assert _at_error(capacity, share, low) <= _at_error(capacity, share, high) * (1 + 1e-12)


def test_the_wider_band_is_the_same_in_one_process_two_or_blocks(
        tmp_path: Path, bands: dict[tuple[str, float], PlanResult]) -> None:
    """The sizing draw is the replication's own: workers and blocks change nothing."""
    scenario = _scenario(tmp_path, "{dist: lognormal, sigma: 0.64}")
    for plan in ("autoscaled", "reserved-spill"):
        one = bands[plan, 0.64]
        assert _cost(one)[2] > _cost(bands[plan, 0.02])[2]
        assert _run(scenario, plan, workers=2) == one
        prep = _prepared(scenario, plan)
        blocks = [*simulate_block(prep, seed=5, replications=40, indices=range(17, 40)),
                  *simulate_block(prep, seed=5, replications=40, indices=range(17))]
        assert plan_result(prep, blocks) == one
