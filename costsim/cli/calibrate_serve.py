"""``costsim calibrate serve`` (being written)."""

from __future__ import annotations

import argparse

from costsim.cli.common import OneLineParser, examples
from costsim.errors import InputError


def register(subs: argparse._SubParsersAction[OneLineParser]) -> None:
    """Add ``calibrate serve``."""
    parser = subs.add_parser("serve", help="(being written)", description="(being written)",
                             epilog=examples("costsim calibrate serve FILE"))
    parser.add_argument("files", nargs="+", metavar="FILE", help="measurement files")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    raise InputError("", "calibrate serve", "not written yet")
