"""The up-front word on a long simulation: ``run``, ``optimize`` and ``sweep`` estimate their
work before starting (:func:`costsim.sim.work.estimate_work`) and say on stderr how long it is
expected to take when that is more than a minute, with how to make it smaller."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from costsim.cli.numbers import number
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MINUTE

if TYPE_CHECKING:
    from costsim.sim.work import WorkEstimate

# Below this a run just runs: the progress bar is enough.
ANNOUNCE_ABOVE_S = 60.0


def duration_text(seconds: float) -> str:
    """``about 40 s`` / ``about 12 min`` / ``about 3.4 h`` / ``about 2.1 days``."""
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * SECONDS_PER_MINUTE:
        return f"about {seconds / SECONDS_PER_MINUTE:.0f} min"
    if seconds < 2 * SECONDS_PER_DAY:
        return f"about {seconds / SECONDS_PER_HOUR:.1f} h"
    return f"about {seconds / SECONDS_PER_DAY:.1f} days"


HINTS = {"run": "fewer --replications or --plan, or more --workers, make it shorter",
         "optimize": "fewer --replications or a smaller --top make it shorter",
         "sweep": "fewer --replications, --plan or variants, or more workers, make it shorter"}
HINTS["compare"] = HINTS["run"]


def work_line(command: str, estimate: WorkEstimate, *, what: str = "plans",
              at_least: bool = False) -> str:
    """One line: the work (plans × replications, jobs, serving hours, events) and the time."""
    parts = [f"{len(estimate.plans):,} {what} × {estimate.replications:,} replications"]
    if estimate.jobs >= 1:
        parts.append(f"{number(round(estimate.jobs))} experiment jobs")
    if estimate.serving_hours >= 1:
        parts.append(f"{number(round(estimate.serving_hours))} serving hours")
    if estimate.events >= 1:
        parts.append(f"~{number(round(estimate.events))} simulator events")
    expected = ("at least " if at_least else "") + duration_text(estimate.seconds)
    hint = HINTS.get(command, "fewer --replications make it shorter")
    return (f"costsim {command}: a large simulation: {', '.join(parts)}; expected to take "
            f"{expected} on {estimate.workers} worker(s); {hint}.")


def announce(command: str, estimate: WorkEstimate, *, what: str = "plans",
             at_least: bool = False) -> None:
    """Print :func:`work_line` to stderr when the work is expected to take over a minute."""
    if estimate.seconds > ANNOUNCE_ABOVE_S:
        sys.stderr.write(work_line(command, estimate, what=what, at_least=at_least) + "\n")
        sys.stderr.flush()
