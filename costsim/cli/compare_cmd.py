"""``costsim compare`` (plans against the baseline) and ``costsim diff`` (two saved runs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from costsim.cli.common import EXIT_OK, add_json_flag, examples, print_json
from costsim.cli.sim_flags import add_scenario_arg, add_simulation_flags

# A summary.json of a large run is a few MB (ledger lines per plan); 200 MB is far beyond any,
# and refusing it keeps a wrong file (a disk image) from being read into memory.
MAX_SUMMARY_BYTES = 200_000_000


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``costsim compare`` and ``costsim diff``."""
    compare = commands.add_parser(
        "compare", help="each plan against the baseline, per phase and category",
        description=(
            "Simulate every plan of a scenario on the same random futures and show each plan's "
            "cost against the baseline plan, per phase and ledger category, as "
            "$old → $new (Δ, %)."),
        epilog=examples("costsim compare scenarios/lifecycle-assistant.yaml",
                        "costsim compare scenarios/lifecycle-assistant.yaml --baseline "
                        "reserved-base --replications 500",
                        "costsim compare scenarios/lifecycle-assistant.yaml --seed 7 --json"),
    )
    add_scenario_arg(compare)
    add_simulation_flags(compare)
    add_json_flag(compare)
    compare.set_defaults(handler=_compare)

    diff = commands.add_parser(
        "diff", help="what changed between two saved runs (two summary.json files)",
        description=(
            "Compare two saved runs (the summary.json of two report folders: a revised "
            "scenario, new prices): each plan's cost OLD → NEW per phase and category, plans "
            "added or removed, and the inputs that changed (path: old → new)."),
        epilog=examples("costsim diff reports/approved/summary.json reports/revised/summary.json",
                        "costsim diff old/summary.json new/summary.json --json"),
    )
    diff.add_argument("old", type=Path, metavar="OLD/summary.json",
                      help="the earlier run's summary.json (required)")
    diff.add_argument("new", type=Path, metavar="NEW/summary.json",
                      help="the later run's summary.json (required)")
    add_json_flag(diff)
    diff.set_defaults(handler=_diff)


def _compare(args: argparse.Namespace) -> int:
    from costsim.cli.change_table import render_compare
    from costsim.cli.run_cmd import interrupted, simulate_with_progress
    from costsim.cli.scenario_names import load_scenario_file
    from costsim.report import compare_json
    from costsim.report.compare import compare_plans
    from costsim.report.currency_view import displayed_plan
    from costsim.report.summary import plan_json

    loaded = load_scenario_file(args.scenario)
    try:
        run = simulate_with_progress(loaded, args, "compare")
    except KeyboardInterrupt:
        return interrupted("compare")
    document = compare_json(run)
    if args.json:
        print_json(document)
    else:
        currency = run.scenario.currency
        if not currency.is_usd:  # the same rows from the plans as converted
            document = compare_plans(
                [displayed_plan(plan_json(plan), currency) for plan in run.plans],
                run.baseline, [phase.name for phase in run.scenario.phases])
        print(render_compare(document, currency))
    return EXIT_OK


def read_summary(path: Path) -> Any:
    """The JSON document in ``path`` (costsim.report.diff_json checks it is a summary).

    Raises:
        InputError: the file is missing, unreadable, too big, or not JSON.
    """
    import json

    from costsim.errors import InputError

    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SUMMARY_BYTES + 1)
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_SUMMARY_BYTES:
        raise InputError(str(path), "", f"over {MAX_SUMMARY_BYTES:,} bytes; not a summary.json")
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(str(path), "", "not UTF-8 text; expected a summary.json") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}:{exc.colno}", "",
                         f"not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise InputError(str(path), "", "JSON nested too deeply") from None
    return document


def _diff(args: argparse.Namespace) -> int:
    old, new = read_summary(args.old), read_summary(args.new)
    from costsim.cli.change_table import render_diff
    from costsim.report import diff_json

    document = diff_json(old, new, sources=(str(args.old), str(args.new)))
    if args.json:
        print_json(document)
        return EXIT_OK
    from costsim.domain.currency import currency_json
    from costsim.report.currency_view import displayed
    from costsim.report.diff import document_currency

    currency = document_currency(new, str(args.new))
    shown = None
    if not currency.is_usd:  # both runs' plans converted at the later run's rate
        usd_old = {k: v for k, v in old.items() if k not in ("currency", "fx_rate_per_usd")}
        shown = diff_json(displayed({**usd_old, **currency_json(currency)}), displayed(new),
                          sources=(str(args.old), str(args.new)))["plans"]
    print(render_diff(document, shown, currency))
    return EXIT_OK
