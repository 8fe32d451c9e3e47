"""The simulator's CPU cost per unit of work, as :mod:`costsim.sim.work` counts it.

Plain script (not a test): ``python benchmarks/bench_work_units.py [--replications 20]``. It
builds variants of one small scenario (prototype experiments → fine-tune → serve on L4s, the
test suite's ``lifecycle``), simulates each on one process (``run_plan``, process CPU time,
best of ``--repeat``) and solves for the costs :func:`costsim.sim.work.plan_work` multiplies:

* an elastic (on-demand) experiment job: 1,200 arrivals a day against 12;
* a job queued for a fixed pool (320 reserved L4s): the same 1,200 a day on them;
* a serving hour: six months of serving against twelve; a request size more: four against
  one;
* a training phase: two fine-tunes in a row against one;
* the rest of a replication: the base variant less the units above;
* preparing a plan: ``prepare_plan`` of the base variant.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import replace

from costsim.domain.phases import ExperimentsPhase, RequestBucket, ServingPhase, TrainingPhase
from costsim.domain.plans import PhaseUse, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.sim.montecarlo import run_plan
from costsim.sim.prepare import prepare_plan
from costsim.sim.work import plan_work
from tests.domain.scenario_builders import lifecycle


def _arrivals(scenario: Scenario, per_day: float) -> Scenario:
    proto = scenario.phases[0]
    assert isinstance(proto, ExperimentsPhase)
    return replace(scenario, phases=(replace(proto, arrivals_per_day=per_day),
                                     *scenario.phases[1:]))


def _queued(scenario: Scenario, gpus: int) -> Scenario:
    plan = scenario.plans[0]
    uses = (PhaseUse(phase="prototype", entries=(UseEntry(
        gpu="L4", option=PurchaseOption.RESERVED_1Y_NO_UPFRONT, count=gpus),)),
        *plan.uses[1:])
    return replace(scenario, plans=(replace(plan, uses=uses),))


def _buckets(scenario: Scenario, sizes: int) -> Scenario:
    serve = scenario.phases[2]
    assert isinstance(serve, ServingPhase)
    buckets = tuple(RequestBucket(share=1 / sizes, prompt_tokens=400 * (k + 1),
                                  output_tokens=250) for k in range(sizes))
    return replace(scenario, phases=(*scenario.phases[:2], replace(serve, requests=buckets)))


def _serving_months(scenario: Scenario, months: int) -> Scenario:
    serve = scenario.phases[2]
    assert isinstance(serve, ServingPhase)
    return replace(scenario, phases=(*scenario.phases[:2],
                                     replace(serve, duration_months=months)))


def _two_trainings(scenario: Scenario) -> Scenario:
    proto, train, serve = scenario.phases
    assert isinstance(train, TrainingPhase)
    assert isinstance(serve, ServingPhase)
    again = replace(train, name="train-2", after=("train",))
    plan = scenario.plans[0]
    uses = (*plan.uses, PhaseUse(phase="train-2", entries=(UseEntry(gpu="H100", count=16),)))
    return replace(scenario, phases=(proto, train, again, replace(serve, after=("train-2",))),
                   plans=(replace(plan, uses=uses),))


def cpu_per_replication(scenario: Scenario, replications: int, repeat: int) -> float:
    prep = prepare_plan(scenario, scenario.plans[0])
    run_plan(prep, seed=0, replications=1)  # warm caches outside the timing
    best = float("inf")
    for k in range(repeat):
        start = time.process_time()
        run_plan(prep, seed=k + 1, replications=replications)
        best = min(best, time.process_time() - start)
    return best / replications


def best_of(repeat: int, action: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = lifecycle()
    variants = {"base": base, "elastic": _arrivals(base, 1200),
                "queued": _queued(_arrivals(base, 1200), 320), "buckets": _buckets(base, 4),
                "half-serving": _serving_months(base, 6), "trainings": _two_trainings(base)}
    cpu = {name: cpu_per_replication(s, args.replications, args.repeat)
           for name, s in variants.items()}
    work = {name: plan_work(s, s.plans[0]) for name, s in variants.items()}
    elastic = (cpu["elastic"] - cpu["base"]) / (work["elastic"].jobs - work["base"].jobs)
    queued = (cpu["queued"] - cpu["base"] + elastic * work["base"].jobs) / work["queued"].jobs
    serve = base.phases[2]
    assert isinstance(serve, ServingPhase)
    bucket_hours = work["base"].serving_hours  # one request size
    bucket = (cpu["buckets"] - cpu["base"]) / (3 * bucket_hours)
    serving_hour = ((cpu["base"] - cpu["half-serving"])
                    / (bucket_hours - work["half-serving"].serving_hours))
    training = cpu["trainings"] - cpu["base"]
    rest = cpu["base"] - elastic * work["base"].jobs - serving_hour * bucket_hours - training
    prepare = best_of(args.repeat, lambda: prepare_plan(base, base.plans[0]))
    for name, seconds in cpu.items():
        print(f"{name:>10}: {seconds * 1e3:8.2f} ms CPU per replication "
              f"({work[name].jobs:,.0f} jobs, {work[name].queued_jobs:,.0f} queued)")
    print(f"elastic job {elastic * 1e6:.2f} us; queued job {queued * 1e6:.2f} us; "
          f"serving hour {serving_hour * 1e6:.3f} us (a request size more: "
          f"{bucket * 1e6:+.3f} us an hour); training phase {training * 1e3:.2f} ms; "
          f"rest of a replication {rest * 1e3:.2f} ms; preparing a plan {prepare:.3f} s")


if __name__ == "__main__":
    main()
