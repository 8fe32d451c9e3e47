"""Training runs that never started inside the horizon, though their phase did.

A training run on bounded GPUs (owned servers, reservations) waits until they are free; when
they never are before the horizon ends (another phase holds them to the end; a capacity block
whose window opens after it) the run never starts and its phase costs nothing there. Such a
replication's cost says nothing about the plan's work, so a plan whose run never started in
any replication is infeasible (it must not rank as the cheapest); where it happened in some
replications, the plan carries a warning worded as the horizon's other cuts
(:func:`costsim.sim.montecarlo.horizon_cuts`). Owned servers delivered after the horizon are
refused before simulating (:mod:`costsim.sim.delivery`).
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.scenario import Scenario
from costsim.sim.prepare import PreparedPlan, TrainingPrep
from costsim.sim.tally import PlanTally


@dataclass(frozen=True, slots=True, kw_only=True)
class Unrun:
    """The training runs that never started: reasons (in every replication) and warnings
    (in some)."""

    reasons: tuple[str, ...]
    warnings: tuple[str, ...]


def unrun_training(prep: PreparedPlan, tally: PlanTally) -> Unrun:
    """Per training phase, the replications (of the plan's tally) whose phase started but
    whose run did not before the horizon ended."""
    end = prep.scenario.calendar.end.isoformat()
    reasons, warnings = [], []
    count = tally.count
    order = [p.name for p in prep.scenario.phase_order()]  # the timelines' order
    for name, phase_prep in prep.phases.items():
        if not isinstance(phase_prep, TrainingPrep):
            continue
        never = tally.phases[order.index(name)].unrun if tally.phases else 0
        if not never:
            continue
        source = phase_prep.source
        what = (f"its {source.entry.option.value} {source.gpu} GPUs were never free for the "
                f"run before the horizon ended ({end})")
        if never == count:
            reasons.append(f"plan '{prep.plan.name}', phase '{name}': the training run never "
                           f"started within the horizon in any of {count} replications: "
                           f"{what}")
        else:
            warnings.append(f"phase '{name}': its training run never started within the "
                            f"horizon in {never} of {count} replications ({what}): it "
                            f"costs nothing there")
    return Unrun(reasons=tuple(reasons), warnings=tuple(warnings))


def cut_replications(scenario: Scenario, tally: PlanTally) -> int:
    """Replications in which the horizon cut one of the plan's phases: it had not ended, or
    never started, when the horizon ended (the counts :func:`costsim.sim.montecarlo.
    horizon_cuts` words). A phase whose months run past the horizon in every plan (the
    run-wide warning, :meth:`Scenario.horizon_warnings`) does not count: it cuts every plan
    alike."""
    static = {w.split("'")[1] for w in scenario.horizon_warnings()}
    counted = {k for k, p in enumerate(scenario.phase_order()) if p.name not in static}
    return sum(n for cut, n in tally.cut_patterns.items() if counted.intersection(cut))
