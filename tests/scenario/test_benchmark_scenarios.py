"""The benchmark scenarios (benchmarks/scenarios/, read by benchmarks/bench_speed.py) validate and
are what their header says: the flagship with one figure changed."""

from __future__ import annotations

from pathlib import Path

from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.phases import ExperimentsPhase

ROOT = Path(__file__).parents[2]


def test_the_1200_arrivals_scenario_is_the_flagship_at_1200_a_day() -> None:
    busy = load_scenario_file(ROOT / "benchmarks" / "scenarios"
                              / "lifecycle-1200-arrivals.yaml").scenario
    flagship = load_scenario_file(ROOT / "scenarios" / "lifecycle-assistant.yaml").scenario
    rates = [(p.name, p.arrivals_per_day) for p in busy.phases
             if isinstance(p, ExperimentsPhase)]
    assert rates == [("prototype", 1200)]
    assert [p.name for p in busy.plans] == [p.name for p in flagship.plans]
    assert [p.name for p in busy.phases] == [p.name for p in flagship.phases]
