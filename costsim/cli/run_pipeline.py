"""The step ``run`` and ``compare`` share after loading a scenario
(:func:`costsim.cli.scenario_names.load_scenario_file`, its price file merged): simulate it with
provenance (the run result carries the break-even curves the report draws).

The CLI orchestrates (DESIGN §4): the loader knows no engine, the simulator knows no file, the
report knows neither; this module hands each one's result to the next.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costsim.scenario import LoadedScenario
    from costsim.sim.montecarlo import Progress
    from costsim.sim.run_result import RunResult


def simulate(loaded: LoadedScenario, args: argparse.Namespace,
             progress: Progress | None = None) -> RunResult:
    """Simulate the plans ``args`` names (``--plan``, default all) with ``--replications``,
    ``--seed``, ``--workers`` and ``--baseline``, with the run's provenance."""
    from costsim import __version__
    from costsim.catalog.price_tables import price_book_date
    from costsim.sim.run_result import simulate_scenario

    return simulate_scenario(
        loaded.scenario, seed=args.seed, replications=args.replications,
        plans=getattr(args, "plan", None) or None, baseline=args.baseline, progress=progress,
        workers=args.workers or default_workers(), clock=time.perf_counter,
        scenario_sha256=loaded.sha256, costsim_version=__version__,
        price_book_date=price_book_date(), inputs=loaded.inputs)


# Worker processes when --workers is not given. Each plan's replications are split over a
# process pool; start-up costs ~0.1 s per process, a replication ~5 ms, so a small pool pays from
# about 100 replications. More than 4 rarely helps: prepare_plan runs once per plan, serially.
MAX_DEFAULT_WORKERS = 4


def default_workers() -> int:
    """The machine's CPU cores (those this process may use), at most 4."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_DEFAULT_WORKERS, cores or 1))
