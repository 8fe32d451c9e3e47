"""The examples in the help of ``run``, ``compare``, ``diff``, ``optimize`` and ``sweep``:
each parses (fast) and runs as printed on the shipped scenarios (slow: they simulate)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from costsim.cli.main import build_parser

from .conftest import Cli
from .test_help import PARSERS, SIMULATING, _examples

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("command", sorted(SIMULATING))
def test_the_examples_parse(command: str) -> None:
    for line in _examples(command):
        args = build_parser().parse_args(line.split()[1:])
        assert args.command == command


def test_the_examples_name_a_shipped_scenario_and_its_plans() -> None:
    from costsim.cli.scenario_names import load_scenario_file

    for command in sorted(SIMULATING - {"diff"}):
        for line in _examples(command):
            args = build_parser().parse_args(line.split()[1:])
            plans = {p.name for p in load_scenario_file(ROOT / args.scenario).scenario.plans}
            baseline = getattr(args, "baseline", None)  # optimize and sweep have none
            named = set(getattr(args, "plan", None) or ()) | {baseline or min(plans)}
            assert named <= plans, line


@pytest.mark.slow
@pytest.mark.usefixtures("no_charts")  # test_run_cmd.py draws them once
def test_the_examples_run(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run's examples first (they write reports), then compare's, then diff's, whose input
    files are made by a small run each."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "scenarios", tmp_path / "scenarios")
    for line in _examples("diff"):
        for path in line.split()[2:4]:
            folder = Path(path).parent
            if not folder.exists():
                code, _, err = cli("run", "scenarios/lifecycle-assistant.yaml",
                                   "--replications", "4", "--out", str(folder))
                assert code == 0, err
    shutil.copytree(ROOT / "sweeps", tmp_path / "sweeps")
    for command in ("run", "compare", "diff", "optimize", "sweep"):
        assert command in PARSERS
        for line in _examples(command):
            code, _, err = cli(*line.split()[1:])
            assert code == 0, (line, err)
