"""Entry point of the ``costsim`` command.

Registration only adds parsers; each command imports its engines inside its handler, so that
``costsim --help`` stays fast.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence

from costsim import __version__
from costsim.cli import catalog_cmds, estimate_cmd, memory_cmd, prices_cmd
from costsim.cli.common import EXIT_BAD_INPUT, OneLineParser, examples
from costsim.errors import CostsimError, printable

COMMAND_MODULES = (catalog_cmds, memory_cmd, prices_cmd, estimate_cmd)


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run costsim with ``argv`` (default: the process arguments); return the exit code."""
    for stream in (sys.stdout, sys.stderr):
        # A file name with undecodable bytes comes back from the OS as lone surrogates: print
        # it escaped rather than crash on it.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except CostsimError as exc:
        # Name the sub-command too ("costsim estimate serve"), as argparse's own errors do.
        command = " ".join(filter(None, (args.command, getattr(args, "estimate_command", None))))
        sys.stderr.write(f"costsim {command}: error: {printable(str(exc))}\n")
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. `costsim prices | head`
        return 0
    return code


if __name__ == "__main__":
    raise SystemExit(main())
