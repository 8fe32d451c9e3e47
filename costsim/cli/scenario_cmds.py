"""``costsim validate FILE...`` and ``costsim schema``: check scenario files, print their schema."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from costsim.cli.common import EXIT_BAD_INPUT, EXIT_OK, examples, print_json
from costsim.errors import CostsimError, printable


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``validate`` and ``schema``."""
    validate = commands.add_parser(
        "validate",
        help="check scenario files (syntax, types, ranges, names, dates, cycles)",
        description="Check scenario files without running them: one OK line per good file, or "
        "the first problem of each bad file as FILE:LINE: key.path: rule, got value (exit "
        "code 2). A plan that does not fit its GPU or cannot meet its SLO is not an error "
        "here: costsim run reports it as infeasible. Keys: scenarios/README.md.",
        epilog=examples("costsim validate scenarios/lifecycle-assistant.yaml",
                        "costsim validate scenarios/seed-three-jobs.yaml "
                        "scenarios/seed-startup-4090.yaml",
                        "costsim validate scenarios/buy-vs-rent-8xh100.yaml --json"),
    )
    validate.add_argument("files", nargs="+", type=Path, metavar="FILE",
                          help="scenario YAML files (one or more)")
    validate.add_argument("--json", action="store_true",
                          help="each good file's resolved scenario (every default filled in) as "
                               "JSON on stdout; errors stay on stderr (default: one OK line per "
                               "file)")
    validate.set_defaults(handler=_validate)

    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of scenario files (for editor autocompletion)",
        description="Print the JSON Schema (draft 2020-12) of scenario files on stdout: every "
        "key with its type, range, default and meaning. Point your editor's YAML support at "
        "it (costsim schema > costsim-scenario.json, then a first line '# yaml-language-server: "
        "$schema=costsim-scenario.json').",
        epilog=examples("costsim schema", "costsim schema --markdown"),
    )
    schema.add_argument("--markdown", action="store_true",
                        help="print the key reference of scenarios/README.md instead (one table "
                             "per object: type, unit, range, default, meaning; default: the "
                             "JSON Schema)")
    schema.set_defaults(handler=_schema)


def _validate(args: argparse.Namespace) -> int:
    from costsim.cli.scenario_names import load_scenario_file

    code = EXIT_OK
    resolved = []
    for path in args.files:
        try:
            loaded = load_scenario_file(path)
        except CostsimError as exc:
            sys.stderr.write(f"costsim validate: error: {printable(str(exc))}\n")
            code = EXIT_BAD_INPUT
            continue
        scenario = loaded.scenario
        if args.json:
            resolved.append({"file": str(path), "sha256": loaded.sha256,
                             "scenario": loaded.resolved})
            continue
        sys.stdout.write(f"OK {printable(str(path))}: {printable(scenario.name)} — "
                         f"{_count(len(scenario.phases), 'phase')}, "
                         f"{_count(len(scenario.plans), 'plan')}, "
                         f"{scenario.calendar.horizon_months} months from "
                         f"{scenario.calendar.start} (sha256 {loaded.sha256[:12]})\n")
    if args.json:
        print_json({"files": resolved})
    return code


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _schema(args: argparse.Namespace) -> int:
    from costsim.scenario import json_schema
    from costsim.scenario.reference import key_reference

    if args.markdown:
        sys.stdout.write(key_reference())
    else:
        print_json(json_schema())
    return EXIT_OK
