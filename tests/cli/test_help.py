"""``--help`` of every command: only the flags it accepts, each with its default and valid
values, and examples at the end that run (docs/inputs.md, issue 8)."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import pytest

from costsim.cli.flags import COMPUTE_PRECISIONS, KV_DTYPE_CHOICES
from costsim.cli.main import build_parser, command_parsers
from costsim.cli.ranges import CLOUD_NAMES, FLAG_RANGES, NETWORK_NAMES
from costsim.domain.workload import BytesPreset, OptimizerKind, Quant, Recompute

from .conftest import Cli

ROOT = build_parser()
PARSERS: dict[str, argparse.ArgumentParser] = {"": ROOT, **command_parsers(ROOT)}
PARSERS["estimate"] = next(a for a in ROOT._actions if isinstance(a, argparse._SubParsersAction)
                           ).choices["estimate"]
NO_HELP_NEEDED = {"-h", "--help"}


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if a.option_strings and not set(a.option_strings) & NO_HELP_NEEDED]


def _flag_set(command: str) -> set[str]:
    return {flag for action in _options(PARSERS[command]) for flag in action.option_strings}


def _examples(command: str) -> list[str]:
    """The example command lines that end ``command``'s help."""
    text = PARSERS[command].format_help().rstrip()
    _, sep, tail = text.rpartition("\nexamples:\n")
    assert sep, f"costsim {command} --help does not end with examples"
    return [line.strip() for line in tail.splitlines()]


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_help_ends_with_two_to_four_examples_of_this_command(command: str) -> None:
    lines = _examples(command)
    assert 2 <= len(lines) <= 4
    for line in lines:
        assert (line + " ").startswith(f"costsim {command}".rstrip() + " ")


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_flag_has_help_naming_its_default(command: str) -> None:
    for action in _options(PARSERS[command]):
        text = action.help or ""
        flag = action.option_strings[-1]
        assert text.strip(), f"{command} {flag} has no help"
        if flag != "--version":
            assert re.search(r"\b(default|required)\b", text), f"{command} {flag}: {text}"


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_number_flag_states_its_range(command: str) -> None:
    for action in _options(PARSERS[command]):
        for flag in action.option_strings:
            if flag in FLAG_RANGES:
                assert FLAG_RANGES[flag].describe() in (action.help or ""), (command, flag)


def _valid_values() -> dict[str, tuple[str, ...]]:
    from costsim.catalog.perf_defaults import network_names
    from costsim.catalog.price_tables import billing_rules
    from costsim.cli.estimate_cmd import ENGINES, FRAMEWORKS

    assert network_names() == NETWORK_NAMES
    assert tuple(sorted(billing_rules())) == CLOUD_NAMES
    return {
        "--precision": COMPUTE_PRECISIONS, "--kv-dtype": KV_DTYPE_CHOICES,
        "--bytes-preset": tuple(m.value for m in BytesPreset),
        "--optimizer": tuple(m.value for m in OptimizerKind),
        "--quant": tuple(m.value for m in Quant),
        "--recompute": tuple(m.value for m in Recompute),
        "--engine": ENGINES, "--network": NETWORK_NAMES, "--cloud": CLOUD_NAMES,
        "--framework": FRAMEWORKS,
    }


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_choice_flag_lists_its_values(command: str) -> None:
    values = _valid_values()
    for action in _options(PARSERS[command]):
        flag = action.option_strings[-1]
        for value in values.get(flag, ()):
            assert value in (action.help or ""), (command, flag, value)


def test_task_lists_the_tasks_each_command_runs() -> None:
    def task_help(command: str) -> str:
        return next(a.help or "" for a in _options(PARSERS[command])
                    if "--task" in a.option_strings)

    assert "train | finetune | infer" in task_help("memory")
    assert "train | finetune (" in task_help("estimate train")
    assert "--task" not in _flag_set("estimate serve")


TRAINING_ONLY = {"--task", "--bytes-preset", "--optimizer", "--lora-rank", "--lora-targets",
                 "--zero", "--dp", "--pp", "--sp", "--micro-batch", "--seq-len", "--grad-accum",
                 "--recompute", "--flash-attention", "--no-flash-attention", "--tokens",
                 "--global-batch", "--global-batch-tokens", "--network", "--framework"}
SERVING_ONLY = {"--kv-dtype", "--batch", "--context", "--prompt-tokens", "--output-tokens",
                "--engine", "--rate", "--slo-ttft-s", "--slo-tpot-s"}


def test_each_estimate_command_defines_only_the_flags_it_reads() -> None:
    assert _flag_set("estimate serve") & TRAINING_ONLY == set()
    assert _flag_set("estimate train") & SERVING_ONLY == set()
    # memory takes both kinds (its --task picks which apply).
    memory = _flag_set("memory")
    assert TRAINING_ONLY - {"--tokens", "--global-batch", "--global-batch-tokens",
                            "--network", "--framework"} <= memory
    assert SERVING_ONLY - {"--engine", "--rate", "--slo-ttft-s", "--slo-tpot-s"} <= memory


@pytest.mark.parametrize("flag", sorted(TRAINING_ONLY - {"--sp", "--flash-attention",
                                                          "--no-flash-attention"}))
def test_a_training_flag_given_to_serve_is_refused_naming_where_it_belongs(cli: Cli,
                                                                        flag: str) -> None:
    code, out, err = cli("estimate", "serve", "--model", "gpt2", flag, "1")
    assert code == 2
    assert out == ""
    assert f"costsim estimate serve: error: {flag} is not a flag of estimate serve" in err
    assert "estimate train" in err
    assert len(err.strip().splitlines()) == 1


# Commands whose examples simulate a scenario (tests/cli/test_run_examples.py runs them).
SIMULATING = {"run", "compare", "diff", "optimize", "sweep"}


def test_the_examples_in_every_help_run(cli: Cli, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each example runs as printed (the files they name are created first)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "path" / "to").mkdir(parents=True)
    (tmp_path / "path" / "to" / "config.json").write_text(json.dumps(
        {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
         "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000}))
    (tmp_path / "runs.csv").write_text("model,gpu,micro_batch\nllama-2-7b,A100,2\n")
    shutil.copytree(Path(__file__).parents[2] / "scenarios", tmp_path / "scenarios")
    shutil.copytree(Path(__file__).parents[2] / "docs" / "examples",
                    tmp_path / "docs" / "examples")  # the sample files the examples read
    # a vllm bench serve --save-result file and a line of SGLang bench_serving's output
    result = {"completed": 100, "total_input_tokens": 100_000, "total_output_tokens": 20_000,
              "request_throughput": 9.0, "output_throughput": 1800.0, "request_rate": "inf",
              "model_id": "meta-llama/Meta-Llama-3-8B"}
    (tmp_path / "bench-h100.json").write_text(json.dumps(result))
    (tmp_path / "sglang.jsonl").write_text(json.dumps({**result, "backend": "sglang"}) + "\n")
    for command in PARSERS:
        if command in SIMULATING:
            continue  # seconds each: tests/cli/test_run_examples.py runs them (slow)
        for line in _examples(command):
            (tmp_path / "results.csv").unlink(missing_ok=True)
            code, _, err = cli(*line.split()[1:])
            assert code == 0, (line, err)


def test_docs_list_every_range() -> None:
    """docs/inputs.md states each flag's range and each config key's maximum."""
    from costsim.catalog.hf_keys import KEY_MAXIMA

    text = (Path(__file__).parents[2] / "docs" / "inputs.md").read_text(encoding="utf-8")
    for flag, bounds in FLAG_RANGES.items():
        assert f"| `{flag}` | {bounds.describe()} |" in text, flag
    for key, (maximum, _) in KEY_MAXIMA.items():
        assert re.search(rf"`{key}`[^|]*\| {maximum:,} \|", text), key


def test_no_number_flag_bypasses_the_ranges() -> None:
    """A flag typed plain int or float would skip the range checks; only prices' three, which
    prices_args.py checks by docs/pricing.md's rules, may."""
    checked_by_prices_args = {("prices", "--count"), ("prices", "--limit"),
                              ("prices", "--discount-pct")}
    for command, parser in PARSERS.items():
        for action in _options(parser):
            if action.type in (int, float):
                assert (command, action.option_strings[-1]) in checked_by_prices_args


def test_train_help_states_the_default_batch_rule_of_the_data_file() -> None:
    """`estimate train --help` states the pre-training batch rule with its sources; its figures
    are the ones the catalog derives from costsim/data/perf_batch_scaling.csv."""
    from costsim.catalog.perf_defaults import perf_defaults
    from costsim.cli import ranges

    batches = perf_defaults().batch
    assert batches.pretrain_tokens == ranges.PRETRAIN_BATCH_FLOOR_TOKENS
    assert batches.pretrain_tokens_per_gpu == ranges.PRETRAIN_BATCH_TOKENS_PER_GPU
    assert batches.pretrain_max_tokens == ranges.PRETRAIN_BATCH_MAX_TOKENS
    text = " ".join(PARSERS["estimate train"].format_help().split())
    for words in ("4M tokens (Llama 2) up to 4,096 GPUs", "1,024 tokens per GPU",
                  "Llama 3 405B", "PaLM", "Gopher", "MT-NLG", "DeepSeek-V3",
                  "perf_batch_scaling.csv", "idle"):
        assert words in text, words
