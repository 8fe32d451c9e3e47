"""Experiment queues: CPU seconds per replication of job-heavy plans (issue 20).

Two worlds that spend their time in the experiments phase:
- ``flagship-1200``: scenarios/lifecycle-assistant.yaml with the prototype phase at 1,200
  arrivals a day (elastic jobs, each on its own instance: the per-job draws);
- ``seed-4090-box``: scenarios/seed-startup-4090.yaml's ``buy-4090-box`` (a fixed fleet of 4
  cards, ~10 jobs a day for 23 months: the FIFO queue).

Each plan is prepared once, then simulated ``--replications`` times on one process; the figure
is CPU seconds (``time.process_time``) per replication, with the events per replication. Run it
against any tree to compare (the tree first on the path):
``PYTHONPATH=. .venv/bin/python benchmarks/bench_queue.py [--replications 20]``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.phases import ExperimentsPhase
from costsim.domain.scenario import Scenario
from costsim.sim.engine import simulate_replication
from costsim.sim.prepare import prepare_plan
from costsim.sim.streams import replication_seeds

ROOT = Path(__file__).resolve().parents[1]
ARRIVALS_PER_DAY = 1200.0


def _flagship_1200() -> Scenario:
    scenario = load_scenario_file(ROOT / "scenarios" / "lifecycle-assistant.yaml").scenario
    phases = tuple(replace(p, arrivals_per_day=ARRIVALS_PER_DAY)
                   if isinstance(p, ExperimentsPhase) else p for p in scenario.phases)
    return replace(scenario, phases=phases)


def _seed_startup() -> Scenario:
    return load_scenario_file(ROOT / "scenarios" / "seed-startup-4090.yaml").scenario


WORLDS = {
    "flagship-1200": (_flagship_1200, ("all-on-demand", "buy-servers")),
    "seed-4090-box": (_seed_startup, ("buy-4090-box", "rent-l4")),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replications", type=int, default=20)
    args = parser.parse_args()
    roots = replication_seeds(0, args.replications)
    print(f"{'world':<15} {'plan':<15} {'CPU ms/rep':>10} {'events/rep':>11}")
    for world, (make, plans) in WORLDS.items():
        scenario = make()
        for plan in (p for p in scenario.plans if p.name in plans):
            prep = prepare_plan(scenario, plan)
            start = time.process_time()
            events = sum(simulate_replication(prep, roots[i], i).events
                         for i in range(args.replications))
            cpu_s = time.process_time() - start
            print(f"{world:<15} {plan.name:<15} {cpu_s / args.replications * 1e3:>10.1f} "
                  f"{events / args.replications:>11,.0f}")


if __name__ == "__main__":
    main()
