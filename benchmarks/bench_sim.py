"""Simulator speed on the reference 18-month project (benchmarks/reference_project.py).

Wall time of N replications of all four plans (preparation included), the simulator's events per
second, and a bare simpy loop's events per second in the same process for comparison.

Run: ``.venv/bin/python benchmarks/bench_sim.py [--replications 1000] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import time

import simpy

# run as a script, this folder is on sys.path
from reference_project import reference_scenario

from costsim.sim.montecarlo import run_plan
from costsim.sim.prepare import prepare_plan


def bare_simpy_events_per_s(events: int = 200_000) -> float:
    """Events per second of a process that only yields timeouts."""
    env = simpy.Environment()

    def ticker() -> simpy.events.ProcessGenerator:
        for _ in range(events):
            yield env.timeout(1)

    env.process(ticker())
    start = time.perf_counter()
    env.run()
    return events / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    scenario = reference_scenario()
    start = time.perf_counter()
    events = 0
    sim_s = 0.0
    for plan in scenario.plans:
        t0 = time.perf_counter()
        prep = prepare_plan(scenario, plan)
        t1 = time.perf_counter()
        result = run_plan(prep, seed=0, replications=args.replications, workers=args.workers)
        t2 = time.perf_counter()
        events += result.events
        sim_s += t2 - t1
        cost = result.cost_usd
        summary = (f"mean ${cost.mean:,.0f}  P10 ${cost.p10:,.0f}  P90 ${cost.p90:,.0f}"
                   if cost else "infeasible: " + "; ".join(result.infeasible_reasons))
        print(f"{plan.name:<18} prepare {t1 - t0:5.2f} s  simulate {t2 - t1:6.2f} s  {summary}")
    wall = time.perf_counter() - start
    print(f"all plans: {args.replications} replications x {len(scenario.plans)} plans in "
          f"{wall:.1f} s ({args.workers} worker processes)")
    print(f"simulator: {events:,} simpy events, {events / sim_s:,.0f} events/s of simulation "
          f"wall time (each event carries a whole phase or job; hours are vectorized)")
    print(f"bare simpy loop: {bare_simpy_events_per_s():,.0f} events/s")


if __name__ == "__main__":
    main()
