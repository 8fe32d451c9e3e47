"""Speed and result of the training front on the shipped training phases.

For each phase: wall time of one ``training_front`` call (the optimizer's call, the phase's own
framework; and every framework, for the report), configurations rated, options priced, the
front and the cheapest option meeting the deadline; then the simulator's mean wall time, cost
and P(deadline missed) for the scenario's on-demand plan next to the matching analytic option.

Run: ``.venv/bin/python benchmarks/bench_training_front.py [--replications 100]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.phases import TrainingPhase
from costsim.domain.pricing import PurchaseOption
from costsim.optimize.training_front import TrainingOption, training_front
from costsim.sim.run_result import simulate_scenario

ROOT = Path(__file__).resolve().parent.parent
CASES = (("scenarios/pretrain-70b-deadline.yaml", "pretrain", "on-demand"),
         ("scenarios/lifecycle-assistant.yaml", "fine-tune", "all-on-demand"))
DAY_S = 86_400.0


def describe(o: TrainingOption) -> str:
    p = "" if o.p_deadline_missed is None else f"  P(late) {o.p_deadline_missed:6.1%}"
    return (f"{o.gpus:>5} x {o.gpu:<10} {o.framework:<12} {o.option.value:<9} {o.cloud or '':<8}"
            f" {o.wall_time_s / DAY_S:7.2f} d  ${o.cost_usd:>12,.0f}{p}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replications", type=int, default=100)
    args = parser.parse_args()
    for path, name, plan in CASES:
        scenario = load_scenario_file(ROOT / path).scenario
        phase = scenario.phase(name)
        assert isinstance(phase, TrainingPhase)
        t0 = time.perf_counter()
        own = training_front(scenario, phase, frameworks=(phase.framework,))
        t1 = time.perf_counter()
        every = training_front(scenario, phase)
        t2 = time.perf_counter()
        print(f"== {path} phase '{name}' (deadline {phase.deadline_days} d)")
        print(f"own framework: {t1 - t0:.2f} s, {own.rated} configurations rated, "
              f"{len(own.options)} options, {len(own.front)} on the front")
        print(f"all frameworks: {t2 - t1:.2f} s, {every.rated} rated, {len(every.options)} "
              f"options, {len(every.front)} on the front")
        for option in own.front:
            print("  front " + describe(option))
        best = own.cheapest_meeting_deadline()
        print("  cheapest meeting the deadline: " + (describe(best) if best else "none"))
        entry = scenario.plans[[p.name for p in scenario.plans].index(plan)].use_of(name)
        gpu, count = entry.entries[0].gpu, entry.entries[0].count
        rated = training_front(scenario, phase, gpus=[gpu], counts=[count or 1],
                               frameworks=(phase.framework,),
                               options=(PurchaseOption.ON_DEMAND,)).options[0]
        t3 = time.perf_counter()
        result = simulate_scenario(scenario, seed=1, replications=args.replications,
                                   plans=[plan])
        sim = result.plan(plan)
        assert sim.ledger is not None
        timeline = sim.timelines
        print(f"  plan '{plan}': analytic {describe(rated)}")
        phase_cost = sim.ledger.by_phase().get(name, 0.0)
        print(f"  simulated ({args.replications} replications, {time.perf_counter() - t3:.1f} s):"
              f" phase cost ${phase_cost:,.0f}, P(any deadline missed) "
              f"{sim.p_deadline_missed}, phases {[t.phase for t in timeline]}")


if __name__ == "__main__":
    main()
