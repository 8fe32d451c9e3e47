"""Entry point of the ``costsim`` command.

Registration only adds parsers; each command imports its engines inside its handler, so that
``costsim --help`` stays fast.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from typing import NoReturn

from costsim import __version__
from costsim.cli import (
    calibrate_cmd,
    catalog_cmds,
    compare_cmd,
    estimate_cmd,
    memory_cmd,
    optimize_cmd,
    prices_cmd,
    run_cmd,
    scenario_cmds,
    servers_cmd,
    sweep_cmd,
    telemetry_cmd,
)
from costsim.cli.common import EXIT_BAD_INPUT, OneLineParser, examples
from costsim.errors import CostsimError, printable

COMMAND_MODULES = (catalog_cmds, memory_cmd, prices_cmd, estimate_cmd, scenario_cmds, run_cmd,
                   compare_cmd, optimize_cmd, sweep_cmd, calibrate_cmd, telemetry_cmd,
                   servers_cmd)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every command registered."""
    parser = OneLineParser(
        prog="costsim",
        description="Cost-optimization simulator for cloud GPU procurement.",
        epilog=examples("costsim memory --model llama-2-7b --gpu A100",
                        "costsim estimate train --model llama-2-7b --gpus 64 --tokens 2e12",
                        "costsim prices --gpu H100 --option on-demand --limit 10"),
    )
    parser.add_argument("--version", action="version", version=f"costsim {__version__}",
                        help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    commands.required = True
    for module in COMMAND_MODULES:
        module.register(commands)
    return parser


def command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every command's parser by its words (``"estimate serve"``)."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(node: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        subparsers = [a for a in node._actions if isinstance(a, argparse._SubParsersAction)]
        if not subparsers:
            found[" ".join(words)] = node
        for action in subparsers:
            for name, sub in action.choices.items():
                walk(sub, (*words, name))

    walk(parser, ())
    return found


def command_words(args: argparse.Namespace) -> str:
    """The command as typed, sub-command included (``estimate serve``, ``calibrate train``)."""
    sub = getattr(args, "estimate_command", None) or getattr(args, "calibrate_command", None)
    return " ".join(filter(None, (args.command, sub)))


def _refuse_unknown(parser: argparse.ArgumentParser, args: argparse.Namespace,
                    unknown: list[str]) -> NoReturn:
    """One error line for arguments the command does not take: a flag of another command says
    so (``--optimizer`` given to ``estimate serve``), a misspelt one gets a suggestion."""
    from costsim.errors import suggest

    parsers = command_parsers(parser)
    words = command_words(args)
    own = parsers.get(words, parser)
    flag = unknown[0].split("=", 1)[0]
    if flag.startswith("--"):
        elsewhere = [name for name, other in parsers.items()
                     if flag in other._option_string_actions]
        if elsewhere:
            own.error(f"{flag} is not a flag of {words}: it means nothing here (it belongs to "
                      f"{', '.join(elsewhere)}; see costsim {words} --help)")
        hints = suggest(flag, [o for o in own._option_string_actions if o.startswith("--")])
        if hints:
            own.error(f"unrecognized argument {flag}; did you mean {' or '.join(hints)}?")
    own.error(f"unrecognized arguments: {' '.join(unknown)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run costsim with ``argv`` (default: the process arguments); return the exit code."""
    for stream in (sys.stdout, sys.stderr):
        # A file name with undecodable bytes comes back from the OS as lone surrogates: print
        # it escaped rather than crash on it.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _refuse_unknown(parser, args, unknown)
    try:
        code: int = args.handler(args)
    except CostsimError as exc:
        # Name the sub-command too ("costsim estimate serve"), as argparse's own errors do.
        command = command_words(args)
        sys.stderr.write(f"costsim {command}: error: {printable(str(exc))}\n")
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. `costsim prices | head`
        return 0
    return code


if __name__ == "__main__":
    raise SystemExit(main())
