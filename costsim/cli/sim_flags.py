"""Flags shared by the commands that simulate a scenario (``run``, ``compare``, ``optimize``).

Imported when the parser is built, so it stays free of heavy imports.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from costsim.cli.flags import range_argtype
from costsim.cli.ranges import describe

DEFAULT_REPLICATIONS = 200  # DESIGN §7
DEFAULT_SEED = 0


def add_scenario_arg(parser: argparse.ArgumentParser) -> None:
    """The positional ``SCENARIO.yaml``."""
    parser.add_argument("scenario", type=Path, metavar="SCENARIO.yaml",
                        help="a scenario file (scenarios/README.md; required)")


def add_simulation_flags(parser: argparse.ArgumentParser, *, baseline: bool = True) -> None:
    """``--baseline`` (unless ``baseline`` is False), ``--replications``, ``--seed``,
    ``--workers``."""
    if baseline:
        parser.add_argument("--baseline", metavar="PLAN",
                            help="the plan savings and differences are measured against "
                                 "(default: the scenario's first plan)")
    add_replications_and_seed(parser)
    add_workers_flag(parser, "default: the CPU cores, at most 4")


def add_replications_and_seed(parser: argparse.ArgumentParser) -> None:
    """``--replications`` and ``--seed``."""
    parser.add_argument("--replications", type=range_argtype("--replications"),
                        default=DEFAULT_REPLICATIONS, metavar="N",
                        help=f"Monte Carlo replications per plan, "
                             f"{describe('--replications')} (default {DEFAULT_REPLICATIONS})")
    parser.add_argument("--seed", type=range_argtype("--seed"), default=DEFAULT_SEED,
                        metavar="S",
                        help=f"random seed, {describe('--seed')}; the same seed gives the same "
                             f"results (default {DEFAULT_SEED})")


def add_workers_flag(parser: argparse.ArgumentParser, default: str) -> None:
    """``--workers`` (``default`` says what happens without it)."""
    parser.add_argument("--workers", type=range_argtype("--workers"), metavar="K",
                        help=f"worker processes, {describe('--workers')}; results do not depend "
                             f"on it ({default})")


def add_report_folder_flags(parser: argparse.ArgumentParser, default_name: str) -> None:
    """``--out`` and ``--force`` of a command that writes a report folder; ``default_name`` is
    the folder's default name under reports/."""
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help=f"report folder; must not exist unless --force (default: "
                             f"reports/{default_name}/)")
    parser.add_argument("--force", action="store_true",
                        help="replace the report in an existing --out folder (only a folder "
                             "that holds a costsim report or nothing; default off)")
