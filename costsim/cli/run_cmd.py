"""``costsim run``: simulate a scenario's plans, rank them, recommend one, write the report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costsim.cli.common import EXIT_OK, examples, print_json
from costsim.cli.sim_flags import (
    add_report_folder_flags,
    add_scenario_arg,
    add_simulation_flags,
)

if TYPE_CHECKING:
    from costsim.scenario import LoadedScenario
    from costsim.sim.run_result import RunResult

# The shell's code for a run ended by Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``costsim run``."""
    run = commands.add_parser(
        "run", help="simulate a scenario's plans, recommend one, write a report",
        description=(
            "Simulate every plan of a scenario (or those named with --plan) on the same random "
            "futures, print the plans ranked by mean cost with P10/P50/P90, cost per training "
            "run, cost per million tokens and deadline/SLO risk, recommend the cheapest feasible "
            "plan within the scenario's risk limits, and write a report folder: report.html, "
            "summary.json, ledger.csv, monthly.csv, report.xlsx and charts. A simulation expected "
            "to take over a minute says so on stderr before it starts (plans × replications, "
            "jobs, serving hours, the time expected); a progress bar with an ETA goes to stderr "
            "when it is a terminal; Ctrl-C leaves no half-written report."),
        epilog=examples("costsim run scenarios/lifecycle-assistant.yaml",
                        "costsim run scenarios/lifecycle-assistant.yaml --plan all-on-demand "
                        "--plan reserved-base --replications 1000 --seed 7",
                        "costsim run scenarios/lifecycle-assistant.yaml --out reports/q3 --force "
                        "--json"),
    )
    add_scenario_arg(run)
    run.add_argument("--plan", action="append", metavar="NAME",
                     help="simulate only this plan (repeatable; default: every plan)")
    add_simulation_flags(run)
    add_report_folder_flags(run, "<scenario file name>-<UTC time>")
    run.add_argument("--json", action="store_true",
                     help="print the run's summary (summary.json, with report_dir) on stdout "
                          "instead of the table; the report is written all the same "
                          "(default: the table)")
    run.set_defaults(handler=_run)


def utc_now() -> Any:
    """Now, in UTC (the report folder's default name and ``generated_at``)."""
    import datetime as dt

    return dt.datetime.now(dt.UTC)


def simulate_with_progress(loaded: LoadedScenario, args: argparse.Namespace,
                           command: str = "run") -> RunResult:
    """Simulate with the progress bar on stderr (the bar is removed when done), after saying
    up front how long it is expected to take when that is over a minute."""
    from costsim.cli.progress import RunProgress
    from costsim.cli.run_pipeline import default_workers, simulate
    from costsim.cli.work_notice import announce
    from costsim.sim.work import estimate_work

    plan = getattr(args, "plan", None)
    wanted = set(plan or ()) | ({args.baseline} if plan and args.baseline else set())
    estimate = estimate_work(loaded.scenario, replications=args.replications,
                             workers=args.workers or default_workers(),
                             plans=sorted(wanted) or None)
    announce(command, estimate)
    with RunProgress(len(wanted) or len(loaded.scenario.plans), args.replications,
                     expected_s=estimate.seconds) as progress:
        return simulate(loaded, args, progress)


def interrupted(command: str) -> int:
    """The one line and exit code of a run stopped by Ctrl-C."""
    sys.stderr.write(f"costsim {command}: interrupted; nothing was written\n")
    return EXIT_INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    from costsim.cli.report_folder import check_out_dir, default_out_dir, staged_out_dir
    from costsim.cli.run_table import render_run
    from costsim.cli.scenario_names import load_scenario_file

    now = utc_now()
    out: Path = args.out if args.out is not None else default_out_dir(args.scenario, now)
    check_out_dir(out, args.force)  # refuse before minutes of simulation, not after
    loaded = load_scenario_file(args.scenario)
    try:
        run = simulate_with_progress(loaded, args)
        from costsim.report import summary_json, write_report

        summary = summary_json(run, generated_at=now.strftime("%Y-%m-%dT%H:%M:%SZ"))
        with staged_out_dir(out, args.force) as staging:
            write_report(run, summary, staging, breakevens=run.breakevens)
    except KeyboardInterrupt:
        return interrupted("run")
    if args.json:
        print_json({**summary, "report_dir": str(out)})
    else:
        print(render_run(run, str(out)))
        for line in warning_lines(run):
            print(line)
    return EXIT_OK


def warning_lines(run: RunResult) -> list[str]:
    """The run's warnings (DESIGN §7), run-wide first, then each plan's, one per line."""
    lines = [f"warning: {w}" for w in run.warnings]
    lines += [f"warning ({plan.name}): {w}" for plan in run.plans for w in plan.warnings]
    return lines
