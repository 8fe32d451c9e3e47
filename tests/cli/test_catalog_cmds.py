"""``costsim models`` / ``costsim gpus``, bad input, and a light start-up."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

DATA_DIR = Path(__file__).parents[1] / "data"


def test_models_json_lists_presets_with_exact_counts(cli: Cli) -> None:
    """The JSON catalog carries params_total/active and a source for each preset."""
    code, out, _ = cli("models", "--json")
    assert code == 0
    rows = {row["name"]: row for row in json.loads(out)["models"]}
    assert rows["llama-2-7b"]["params_total"] == 6738415616
    assert rows["mixtral-8x7b"]["params_active"] == 12879925248
    assert all(row["source"] for row in rows.values())


def test_models_table_counts_a_user_config(cli: Cli) -> None:
    """--arch counts any Hugging Face config.json."""
    code, out, _ = cli("models", "--arch", str(DATA_DIR / "architectures/gpt2.json"))
    assert code == 0
    assert "124,439,808" in out


def test_gpus_json_and_alias_lookup(cli: Cli) -> None:
    """--gpu accepts aliases; JSON carries capacity, its basis and the source."""
    code, out, _ = cli("gpus", "--gpu", "a100 sxm4 80gb", "--json")
    assert code == 0
    (row,) = json.loads(out)["gpus"]
    assert row["name"] == "A100-80GB"
    assert row["capacity_bytes"] == 80 * 2**30
    assert row["capacity_basis"] == "driver"
    assert row["source"]


def test_gpus_table_lists_every_gpu(cli: Cli) -> None:
    """The table view has one line per GPU and labels dense TFLOPS."""
    code, out, _ = cli("gpus")
    assert code == 0
    assert "H100" in out
    assert "MI300X" in out
    assert "dense" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["gpus", "--gpu", "H10O-80GB"], "did you mean 'H100'"),
        (["models", "--arch", "nowhere/config.json"], "nowhere/config.json: cannot read"),
        (["models", "--bogus"], "unrecognized arguments: --bogus"),
        (["nosuchcommand"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], expected: str, cli: Cli
) -> None:
    """Bad input: one clear line on stderr, exit code 2, no traceback."""
    code, out, err = cli(*argv)
    assert code == 2
    assert expected in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert out == ""


def test_bad_config_values_exit_2(tmp_path: Path, cli: Cli) -> None:
    """Heads not dividing hidden, zero sizes: named key, exit 2."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gpt2", "n_embd": 100, "n_head": 7}))
    code, _, err = cli("models", "--arch", str(path))
    assert code == 2
    assert "n_head" in err
    assert "must divide the hidden size" in err
    path.write_text(json.dumps({"model_type": "bert", "num_hidden_layers": 0}))
    code, _, err = cli("models", "--arch", str(path))
    assert code == 2
    assert "num_hidden_layers: must be a whole number in 1..10,000 (got 0)" in err


def _modules_after_building_the_parser() -> set[str]:
    """Every module loaded once ``costsim``'s parser is built (what ``costsim --help`` loads)."""
    code = "import sys, costsim.cli.main as m\nm.build_parser()\nprint(sorted(sys.modules))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return set(ast.literal_eval(result.stdout))


def test_help_does_not_import_heavy_libraries() -> None:
    """`costsim --help` stays fast: the entry point imports no numpy/pandas/scipy/simpy."""
    heavy = {"numpy", "pandas", "scipy", "simpy", "matplotlib", "yaml", "pydantic"}
    assert heavy & _modules_after_building_the_parser() == set()


def test_registration_imports_no_engine_or_domain_module() -> None:
    """Commands import their engines, domain types and output code inside their handlers."""
    loaded = {n for n in _modules_after_building_the_parser() if n.startswith("costsim.")}
    registration = {"costsim.errors", "costsim.cli", "costsim.cli.main", "costsim.cli.common",
                    "costsim.cli.flags", "costsim.cli.ranges", "costsim.cli.catalog_cmds",
                    "costsim.cli.memory_cmd",
                    "costsim.cli.prices_cmd", "costsim.cli.estimate_cmd",
                    "costsim.cli.scenario_cmds", "costsim.cli.run_cmd", "costsim.cli.compare_cmd",
                    "costsim.cli.sim_flags", "costsim.cli.optimize_cmd",
                    "costsim.cli.sweep_cmd", "costsim.cli.telemetry_cmd",
                    "costsim.cli.calibrate_cmd", "costsim.cli.calibrate_serve",
                    "costsim.cli.calibrate_train", "costsim.cli.servers_cmd"}
    assert loaded - registration == set()


def test_console_script_help_runs() -> None:
    """`python -m costsim --help` exits 0 and lists the commands."""
    result = subprocess.run(
        [sys.executable, "-m", "costsim", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert "models" in result.stdout
    assert "gpus" in result.stdout
