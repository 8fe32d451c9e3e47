"""Fuzz every flag of every command and every config.json key the readers use with hostile
values (wrong types, non-finite and huge numbers, negatives, unicode): each run ends with exit 0
or 2, never a traceback (issue 8).

Commands run in-process through :func:`costsim.cli.main.main`; an exception other than the
SystemExit of an argparse error escapes and fails the test with its traceback. Example counts
are sized for CI (about 20 s on two cores) and derandomized, so every run tries the same inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costsim.catalog.hf_config import architecture_from_config
from costsim.cli.main import build_parser, main
from costsim.cli.ranges import FLAG_RANGES
from costsim.errors import CostsimError

# Flags that write files or read a whole grid: ``memory --grid`` has its own tests.
NOT_FUZZED = frozenset({"-h", "--help", "--version", "--grid", "--out", "--force"})

HOSTILE_TEXTS = [
    "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e308", "1e30", "-1", "0", "1",
    "2", "3", "4", "8", "0.5", "-0", "1e-300", "", " ", "１２", "٣", "ｎａｎ", "10" + "0" * 30,
    "9" * 5000, "\x00", "\udcff", "é", "llama-2-7b", "tiny-mixtral", "all-linear", "q_proj,v_proj",
    ",", "H100", "NVIDIA H100 80GB HBM3", "T4", "aws", "owned", "vast", "train", "finetune",
    "infer", "fp8", "fp32", "nf4", "int4", "full", "aws=12", "aws=nan", "aws=1e400", "=",
    "owned=5", "on-demand", "spot", "reserved-3y-all-upfront", "vllm", "eth-100", "us-east-1",
]

# The edges of every flag's range: valid numbers that push the engines to their extremes.
RANGE_EDGES = sorted({f"{edge:g}" if not bounds.integer else str(int(edge))
                      for bounds in FLAG_RANGES.values()
                      for edge in (bounds.minimum, bounds.maximum)})

VALUES = st.one_of(
    st.sampled_from(HOSTILE_TEXTS),
    st.sampled_from(RANGE_EDGES),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=12),
)


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser by its words ("estimate train"), read off the real parser."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subparsers:
            found[" ".join(words)] = parser
        for action in subparsers:
            for name, sub in action.choices.items():
                walk(sub, (*words, name))

    walk(build_parser(), ())
    return found


COMMANDS = _commands()


def _flags(parser: argparse.ArgumentParser) -> list[tuple[str, bool]]:
    """(flag, takes a value) of every optional flag of ``parser`` that is fuzzed."""
    return [(action.option_strings[-1], action.nargs != 0) for action in parser._actions
            if action.option_strings and not set(action.option_strings) & NOT_FUZZED]


# A valid starting point for each command, so that fuzzed flags reach the engines; each is left
# out when the fuzzer draws that flag (or its mutually exclusive partner) itself.
BASE_ARGS: dict[str, list[tuple[tuple[str, ...], list[str]]]] = {
    "memory": [(("--model", "--arch"), ["--model", "tiny-llama"])],
    "estimate train": [(("--model", "--arch"), ["--model", "tiny-llama"]),
                       (("--tokens",), ["--tokens", "1e12"]),
                       (("--price-usd-per-gpu-hour", "--cloud"),
                        ["--price-usd-per-gpu-hour", "2"]),
                       (("--gpus", "--dp", "--tp", "--pp"), ["--gpus", "8"])],
    "estimate serve": [(("--model", "--arch"), ["--model", "tiny-llama"]),
                       (("--price-usd-per-gpu-hour", "--cloud"),
                        ["--price-usd-per-gpu-hour", "2"])],
}

# Examples per command: the slow commands (prices reads the whole book) get fewer; a command
# added later gets the default until it is sized here.
EXAMPLES = {"memory": 70, "estimate train": 60, "estimate serve": 60, "prices": 25,
            "models": 20, "gpus": 20}
DEFAULT_EXAMPLES = 20


def _run(argv: list[str]) -> tuple[int, str]:
    """Run costsim in-process; (exit code, stderr). Any other exception propagates."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own errors (exit 2) and --help (exit 0)
            code = int(exc.code or 0)
    return code, err.getvalue()


def _check(argv: list[str]) -> None:
    code, err = _run(argv)
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        # One message, on one line, that names the command.
        assert err.startswith("costsim"), (argv, err)
        assert len(err.strip().splitlines()) == 1, (argv, err)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_flag_of_every_command_survives_hostile_values(command: str) -> None:
    parser = COMMANDS[command]
    flags = _flags(parser)
    assert flags, command

    @settings(max_examples=EXAMPLES.get(command, DEFAULT_EXAMPLES), derandomize=True,
              database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(picked=st.lists(st.tuples(st.sampled_from(flags), VALUES, st.booleans()),
                           min_size=1, max_size=4))
    def fuzz(picked: list[tuple[tuple[str, bool], str, bool]]) -> None:
        argv = command.split()
        names = set()
        for (flag, takes_value), value, joined in picked:
            names.add(flag)
            if not takes_value:
                argv.append(flag)
            elif joined:  # --flag=VALUE delivers values that start with '-' too
                argv.append(f"{flag}={value}")
            else:
                argv += [flag, value]
        for alternatives, args in BASE_ARGS.get(command, []):
            if not names & set(alternatives):
                argv += args
        _check(argv)

    fuzz()


# ----------------------------------------------------------------------------- config.json


class _RecordingConfig(dict[str, Any]):
    """A config dict that records every key a reader looks up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)


def _small(model_type: str, **keys: Any) -> dict[str, Any]:
    """A two-layer config of ``model_type`` (hidden 256, 4 heads), plus ``keys``."""
    return {"model_type": model_type, "num_hidden_layers": 2, "hidden_size": 256,
            "num_attention_heads": 4, "vocab_size": 1000, **keys}


_LLAMA_LIKE = {"num_key_value_heads": 2, "intermediate_size": 512}
SMALL_CONFIGS: dict[str, dict[str, Any]] = {
    "llama": _small("llama", **_LLAMA_LIKE, max_position_embeddings=2048),
    "mistral": _small("mistral", **_LLAMA_LIKE),
    "mixtral": _small("mixtral", **_LLAMA_LIKE, num_local_experts=4, num_experts_per_tok=2),
    "qwen2": _small("qwen2", **_LLAMA_LIKE),
    "qwen3": _small("qwen3", **_LLAMA_LIKE, head_dim=64),
    "gpt2": {"model_type": "gpt2", "n_embd": 256, "n_head": 4, "n_layer": 2, "vocab_size": 1000},
    "bert": _small("bert", intermediate_size=512),
    "gpt_neox": _small("gpt_neox", intermediate_size=1024),
    "bloom": {"model_type": "bloom", "hidden_size": 256, "n_head": 4, "n_layer": 2,
              "vocab_size": 1000},
    "falcon": _small("falcon", new_decoder_architecture=True, num_kv_heads=2),
}


def _keys_read(config: Mapping[str, Any]) -> set[str]:
    recording = _RecordingConfig(config)
    architecture_from_config(recording, name="probe")
    return recording.read


def _keys_read_by_every_family() -> list[str]:
    keys: set[str] = set()
    for config in SMALL_CONFIGS.values():
        keys |= _keys_read(config)
        # Branches: Falcon's old decoder reads other keys; Mistral's sliding window too.
        keys |= _keys_read({**config, "new_decoder_architecture": False, "sliding_window": 64,
                            "use_sliding_window": True})
    return sorted(keys)


CONFIG_KEYS = _keys_read_by_every_family()

JSON_VALUES = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1.0, 0, 1, 2, 10**12, 10**400,
                     2**63, -(2**63), 0.5, 1e-300, True, False, None, "", "32", "１２", "\udcff",
                     "llama", [], [32], {}, {"a": 1}]),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)


def test_the_readers_key_list_is_complete() -> None:
    """The fuzzer's key list is read off the readers: it holds every family's size keys."""
    for key in ("num_hidden_layers", "n_layer", "hidden_size", "n_embd", "num_attention_heads",
                "n_head", "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
                "max_position_embeddings", "num_local_experts", "num_experts_per_tok",
                "sliding_window", "tie_word_embeddings", "model_type"):
        assert key in CONFIG_KEYS


@pytest.fixture(scope="module")
def config_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz_configs")


@settings(max_examples=80, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(sorted(SMALL_CONFIGS)),
       changes=st.dictionaries(st.sampled_from(CONFIG_KEYS), JSON_VALUES, min_size=1,
                               max_size=3),
       command=st.sampled_from([("models",), ("memory",), ("estimate", "serve")]))
def test_every_config_key_survives_hostile_values(config_dir: Path, family: str,
                                                  changes: dict[str, Any],
                                                  command: tuple[str, ...]) -> None:
    path = config_dir / "config.json"
    config = {**SMALL_CONFIGS[family], **changes}
    # Python writes NaN / Infinity / huge numbers as json.loads reads them back; a lone
    # surrogate is written escaped (\udcff), as a hostile file would hold it.
    path.write_text(json.dumps(config), encoding="utf-8")
    argv = [*command, "--arch", str(path)]
    if command == ("estimate", "serve"):
        argv += ["--price-usd-per-gpu-hour", "2"]
    _check(argv)


def test_reading_a_hostile_config_raises_only_config_errors() -> None:
    """The reader itself (used by the grid too) raises ConfigError and nothing else."""
    for key in CONFIG_KEYS:
        for value in (math.nan, math.inf, 10**400, -5, "x", [1], {"k": 1}, True, 10**12):
            config = {**SMALL_CONFIGS["llama"], key: value}
            with contextlib.suppress(CostsimError):
                architecture_from_config(config, name="x")


PRICE_COLUMNS = ("cloud", "region", "instance_type", "gpu", "gpus_per_instance",
                 "effective_date", "on_demand_usd_per_hour", "spot_usd_per_hour", "vcpus",
                 "host_ram_gib", "gpu_memory_gib")
PRICE_ROW = ("mine", "r1", "x1", "H100", "8", "2026-01-01", "24", "9", "192", "2048", "80")


@settings(max_examples=40, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(PRICE_COLUMNS),
                               VALUES.filter(lambda v: not set(v) & set(',"\r\n')),
                               min_size=1, max_size=3))
def test_every_price_file_cell_survives_hostile_values(config_dir: Path,
                                                       changes: dict[str, str]) -> None:
    path = config_dir / "prices.csv"
    row = [changes.get(column, value) for column, value in zip(PRICE_COLUMNS, PRICE_ROW,
                                                                strict=True)]
    path.write_text(",".join(PRICE_COLUMNS) + "\n" + ",".join(row) + "\n", encoding="utf-8",
                    errors="surrogateescape")
    _check(["prices", "--price-file", str(path), "--gpu", "H100", "--limit", "3"])
