"""``costsim calibrate serve|train``: each measured point beside costsim's prediction (DESIGN §12),
so a team sees how far the model is on its own stack before it trusts a scenario.

Registration only; each sub-command lives in its own module and imports its engines in its
handler.
"""

from __future__ import annotations

import argparse

from costsim.cli import calibrate_serve, calibrate_train
from costsim.cli.common import OneLineParser, examples


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``calibrate`` with its ``serve`` and ``train`` sub-commands."""
    calibrate = commands.add_parser(
        "calibrate", help="measured serving or training figures beside the model's prediction",
        description="Read benchmark results or training logs and show each measured point "
                    "beside costsim's prediction for the same case (ratio = measured / "
                    "predicted), with a one-line verdict.",
        epilog=examples("costsim calibrate serve bench.csv",
                        "costsim calibrate train runs.csv --json"))
    subs = calibrate.add_subparsers(dest="calibrate_command", metavar="WHAT",
                                    parser_class=OneLineParser)
    subs.required = True
    calibrate_serve.register(subs)
    calibrate_train.register(subs)
