"""Regression tests for the hostile inputs of issue 8: each gives one line naming the file or
flag, the key, the rule and the value, with exit code 2 (or, where the input is legitimate, a
clean exit 0) and never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Cli, CliResult

LLAMA = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8,
         "num_hidden_layers": 2, "intermediate_size": 1024, "vocab_size": 1000}


def _refused(result: CliResult, *needles: str) -> None:
    code, out, err = result
    assert code == 2, err
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err


# JSON as a hostile file holds it (Python's json writes NaN, Infinity and big integers as-is).
CONFIG_CASES: list[tuple[str, str]] = [
    ('"hidden_size": NaN', "hidden_size: must be a whole number in 1..1,000,000 (got NaN)"),
    ('"hidden_size": Infinity', "hidden_size: must be a whole number in 1..1,000,000 "
                                "(got Infinity)"),
    ('"num_hidden_layers": -Infinity', "num_hidden_layers: must be a whole number in 1..10,000 "
                                       "(got -Infinity)"),
    ('"hidden_size": 1e400', "hidden_size: must be a whole number in 1..1,000,000 "
                             "(got Infinity)"),
    ('"num_hidden_layers": -5', "num_hidden_layers: must be a whole number in 1..10,000 "
                                "(got -5)"),
    ('"num_hidden_layers": 1000000000000', "num_hidden_layers: must be a whole number in "
                                           "1..10,000 (got 1000000000000)"),
    ('"vocab_size": 123456789012345678901234567890', "vocab_size: must be a whole number in "
                                                     "1..100,000,000"),
    ('"num_hidden_layers": "32"', "num_hidden_layers: must be a whole number in 1..10,000 "
                                  "(got '32')"),
    ('"num_hidden_layers": [32]', "num_hidden_layers: must be a whole number in 1..10,000 "
                                  "(got [32])"),
    ('"num_hidden_layers": 2.5', "num_hidden_layers: must be a whole number in 1..10,000 "
                                 "(got 2.5)"),
    ('"head_dim": 1e15', "head_dim: must be a whole number in 1..100,000"),
    ('"sliding_window": 1e300', "sliding_window: must be a whole number in 1..100,000,000"),
    ('"attention_dropout": NaN', "attention_dropout: must be a probability in [0, 1) (got NaN)"),
    ('"tie_word_embeddings": "yes"', "tie_word_embeddings: must be true or false (got 'yes')"),
]


@pytest.mark.parametrize(("entry", "needle"), CONFIG_CASES)
@pytest.mark.parametrize("command", [("models",), ("memory",), ("estimate", "serve"),
                                     ("estimate", "train", "--tokens", "1e12", "--gpus", "8")])
def test_a_hostile_config_value_is_one_line_naming_file_key_rule_and_value(
        cli: Cli, tmp_path: Path, entry: str, needle: str, command: tuple[str, ...]) -> None:
    path = tmp_path / "config.json"
    base = json.dumps(LLAMA)[:-1]
    path.write_text(f"{base}, {entry}}}", encoding="utf-8")
    _refused(cli(*command, "--arch", str(path)), f"{path}: {needle}")


@pytest.mark.parametrize(("config", "needle"), [
    ({"hidden_size": 4096}, "model_type: required key is missing"),
    ({"model_type": ["llama"]}, "model_type: must be a string such as \"llama\" "
                                "(got ['llama'])"),
    ({"model_type": "llämä"}, "model_type: unsupported model_type 'llämä'"),
    ({**LLAMA, "hidden_size": 1_000_000, "num_attention_heads": 1000,
      "intermediate_size": 10_000_000, "num_hidden_layers": 100},
     "parameters; a model must have at most 10^14"),
])
def test_missing_keys_wrong_types_and_absurd_models_are_named(cli: Cli, tmp_path: Path,
                                                               config: dict[str, Any],
                                                               needle: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    _refused(cli("models", "--arch", str(path)), needle)


def test_json_nested_too_deeply_is_refused(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    _refused(cli("models", "--arch", str(path)), "not a config: JSON nested too deeply")


def test_a_name_with_control_characters_is_printed_escaped(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA, "_name_or_path": "evil\x1b[2J\u0000\ud800"}))
    code, out, err = cli("models", "--arch", str(path))
    assert code == 0, err
    assert "evil\\x1b[2J\\x00\\ud800" in out
    assert "\x1b" not in out


@pytest.mark.parametrize(("argv", "needle"), [
    # Overflowing results are refused at the flag, with its range.
    (["estimate", "train", "--model", "gpt2", "--gpus", "8", "--tokens", "1e30"],
     "argument --tokens: must be a finite number above 0, up to 1e16 (got 1e30)"),
    (["estimate", "serve", "--model", "gpt2", "--rate", "1e308"],
     "argument --rate: must be a finite number from 1e-6 to 1e7 (got 1e308)"),
    (["estimate", "serve", "--model", "gpt2", "--rate", "1e-300"],
     "argument --rate: must be a finite number from 1e-6 to 1e7 (got 1e-300)"),
    (["estimate", "train", "--model", "gpt2", "--gpus", "8", "--tokens", "1e9",
      "--price-usd-per-gpu-hour", "1e308"],
     "argument --price-usd-per-gpu-hour: must be a finite number from 0 to 1000 (got 1e308)"),
    (["estimate", "serve", "--model", "gpt2", "--slo-ttft-s", "1e-300"],
     "argument --slo-ttft-s: must be a finite number from 0.0001 to 3600 (got 1e-300)"),
    (["estimate", "train", "--model", "gpt2", "--gpus", "8", "--tokens", "nan"],
     "argument --tokens: must be a finite number above 0, up to 1e16 (got nan)"),
    (["estimate", "train", "--model", "gpt2", "--gpus", "8", "--tokens", "inf"],
     "argument --tokens: must be a finite number above 0, up to 1e16 (got inf)"),
    (["memory", "--model", "gpt2", "--micro-batch", "-4"],
     "argument --micro-batch: must be a whole number in 1..100,000 (got -4)"),
    (["memory", "--model", "gpt2", "--dp", "1000000000", "--zero", "3"],
     "argument --dp: must be a whole number in 1..1,000,000 (got 1000000000)"),
    (["memory", "--model", "gpt2", "--seq-len", "1e3"],
     "argument --seq-len: must be a whole number in 1..100,000,000 (got '1e3')"),
    (["memory", "--model", "gpt2", "--zero", "4"],
     "argument --zero: must be a whole number in 0..3 (got 4)"),
    (["estimate", "train", "--model", "gpt2", "--gpus", "8", "--tokens", "1e12", "--seq-len",
      "1", "--global-batch-tokens", "1e9", "--price-usd-per-gpu-hour", "1"],
     "--global-batch-tokens: must be at most 100,000,000 sequences of 1 tokens (got 1e+09)"),
    # Contradictions.
    (["memory", "--model", "gpt2", "--flash-attention", "--no-flash-attention"],
     "argument --no-flash-attention: not allowed with argument --flash-attention"),
    (["memory", "--model", "gpt2", "--tp", "2", "--tp", "4"],
     "argument --tp: given twice with different values (2 and 4)"),
    (["estimate", "serve", "--model", "gpt2", "--cloud", "aws", "--price-usd-per-gpu-hour",
      "2"], "argument --price-usd-per-gpu-hour: not allowed with argument --cloud"),
    (["estimate", "train", "--model", "gpt2", "--gpus", "8", "--tokens", "1e9",
      "--price-usd-per-gpu-hour", "2", "--cloud", "aws"],
     "argument --cloud: not allowed with argument --price-usd-per-gpu-hour"),
    (["estimate", "serve", "--model", "gpt2", "--optimizer", "adamw"],
     "--optimizer is not a flag of estimate serve"),
    (["estimate", "serve", "--model", "gpt2", "--bytes-preset", "paper"],
     "--bytes-preset is not a flag of estimate serve"),
    (["estimate", "serve", "--model", "gpt2", "--flash-attention"],
     "--flash-attention is not a flag of estimate serve"),
    (["memory", "--model", "gpt2", "--micro-batc", "3"],
     "unrecognized argument --micro-batc; did you mean --micro-batch?"),
    (["memory", "--model", "llama-2-7b", "--lora-rank", "8", "--lora-targets", ""],
     "--lora-targets: no module names in ''"),
    (["memory", "--model", "llama-2-7b", "--lora-targets", ""], "--lora-targets: needs "
                                                                "--lora-rank R"),
    (["memory", "--model", "llama-2-7b", "--lora-rank", "5000"],
     "--lora-rank: must be at most 4096, the smaller side of llama-2-7b's q_proj "
     "(4096 x 4096) (got 5000)"),
    (["memory", "--model", "tiny-llama", "--lora-rank", "100", "--lora-targets", "k_proj"],
     "--lora-rank: must be at most 64, the smaller side of tiny-llama's k_proj (256 x 64) "
     "(got 100)"),
    (["estimate", "train", "--model", "tiny-llama", "--gpus", "8", "--tokens", "1e9",
      "--lora-rank", "300", "--price-usd-per-gpu-hour", "2"], "--lora-rank: must be at most"),
    # Meaningless results.
    (["estimate", "train", "--model", "gpt2", "--gpus", "8", "--tokens", "1",
      "--price-usd-per-gpu-hour", "2"],
     "--tokens: must be at least one optimizer step, 4,194,304 tokens (global batch 4096 x "
     "seq-len 1024); got 1"),
    (["estimate", "train", "--model", "llama-3.1-405b", "--gpus", "300000", "--tokens", "1e15",
      "--price-usd-per-gpu-hour", "2"],
     "--gpus 300000: the run would not finish"),
    # Unicode and control characters stay on one line.
    (["memory", "--model", "llämä\n\x1b"], "unknown model preset 'llämä\\n\\x1b'"),
    (["memory", "--model", "gpt2", "--gpu", "\udcff"], "unknown GPU '\\udcff'"),
])
def test_issue_8_examples_are_refused_in_one_line(cli: Cli, argv: list[str], needle: str) -> None:
    _refused(cli(*argv), needle)


def test_lora_all_linear_may_exceed_a_routers_expert_count(cli: Cli) -> None:
    """all-linear adapts Mixtral's router (hidden x experts) as PEFT does; a rank above the
    expert count there is a common recipe, not an error."""
    code, _, err = cli("memory", "--model", "tiny-mixtral", "--lora-rank", "16",
                       "--lora-targets", "all-linear", "--json")
    assert code == 0, err


def test_a_small_finetune_prices_with_a_small_global_batch(cli: Cli) -> None:
    """The refusal of --tokens below one step says how to price a small run; doing so works."""
    code, out, err = cli("estimate", "train", "--model", "gpt2", "--gpus", "8", "--tokens",
                         "1e6", "--global-batch-tokens", "65536", "--price-usd-per-gpu-hour",
                         "2", "--json")
    assert code == 0, err
    assert json.loads(out)["cost_usd"] > 0


def test_unicode_digits_are_read_as_the_number_they_spell(cli: Cli) -> None:
    """Python reads full-width and Arabic-Indic digits as digits: "１２" is 12, not an error."""
    code, out, err = cli("memory", "--model", "gpt2", "--micro-batch", "１٢", "--json")
    assert code == 0, err
    assert json.loads(out)["layout"]["micro_batch"] == 12


@pytest.mark.parametrize(("column", "value", "needle"), [
    ("on_demand_usd_per_hour", "1e308", "on_demand_usd_per_hour: must be at most 72,000, "
                                        "got '1e308'"),
    ("on_demand_usd_per_hour", "1e400", "on_demand_usd_per_hour: must be a finite number"),
    ("vcpus", "100000", "vcpus: must be at most 10,000, got '100000'"),
    ("host_ram_gib", "1e300", "host_ram_gib: must be at most 1,000,000, got '1e300'"),
])
def test_price_file_numbers_have_ranges(cli: Cli, tmp_path: Path, column: str, value: str,
                                        needle: str) -> None:
    cells = {"cloud": "mine", "region": "r1", "instance_type": "x1", "gpu": "H100",
             "gpus_per_instance": "8", "effective_date": "2026-01-01",
             "on_demand_usd_per_hour": "24", "vcpus": "192", "host_ram_gib": "2048",
             column: value}
    path = tmp_path / "mine.csv"
    path.write_text(",".join(cells) + "\n" + ",".join(cells.values()) + "\n")
    _refused(cli("prices", "--price-file", str(path)), f"{path}:2:", needle)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize(("argv", "needle"), [
    (["models", "--arch", "/dev/zero"], "/dev/zero: a config must be at most 1,000,000 bytes"),
    (["prices", "--price-file", "/dev/zero"], "/dev/zero: file is over the limit"),
])
def test_an_endless_file_is_read_only_up_to_its_limit(cli: Cli, argv: list[str],
                                                      needle: str) -> None:
    """/dev/zero states size 0 and never ends: reading it whole used to hang."""
    _refused(cli(*argv), needle)


def test_a_config_that_is_not_utf8_is_named(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b'{"model_type": "llama\xff"}')
    _refused(cli("models", "--arch", str(path)), f"{path}: not UTF-8 text (byte 0xff at offset")


# Issue 19 item 4: dates, horizons and sizes give exit 2 naming the key, or a documented
# warning, never a traceback; nothing is simulated before a bad --out is refused.
HOSTILE_SCENARIO = """\
name: hostile
start: {start}
horizon_months: {months}
phases:
  - {{name: proto, kind: experiments, duration_months: {proto}, arrivals_per_day: 2,
     job: {{gpu_memory_gib: 10, gpu_hours: 1}}}}
  - {{name: later, kind: experiments, after: [proto], duration_months: 2, arrivals_per_day: 2,
     job: {{gpu_memory_gib: 10, gpu_hours: 1}}}}
plans:
  - name: p
    use:
      proto: {{gpu: L4}}
      later: {{gpu: L4}}
{extra}"""


def _scenario(tmp_path: Path, *, start: str = "2027-01-01", months: str = "6",
              proto: str = "2", extra: str = "") -> Path:
    path = tmp_path / "hostile.yaml"
    path.write_text(HOSTILE_SCENARIO.format(start=start, months=months, proto=proto,
                                            extra=extra), encoding="utf-8")
    return path


@pytest.mark.parametrize(("fields", "needle"), [
    ({"start": "9999-06-01", "months": "12"},
     "start: 9999-06-01 + 12 months runs past 9999-12-31, the last date the calendar holds"),
    ({"start": "9999-12-01", "months": "240"}, "runs past 9999-12-31"),
    ({"months": "0"}, "horizon_months"),
    ({"months": "241"}, "horizon_months"),
    ({"months": "1e12"}, "horizon_months"),
    ({"start": "2027-02-30"}, "start"),
    ({"start": "10000-01-01"}, "start"),
    ({"proto": "1e9"}, "duration_months"),
    ({"proto": "nan"}, "duration_months"),
    # the second phase cannot start before the horizon ends: bad input, not a silent $0
    ({"months": "2"}, "phase 'later' starts on 2027-03-02 at the earliest (after 'proto'), at "
                      "or after the horizon's end 2027-03-01"),
    ({"months": "3", "proto": "3"}, "phase 'later' starts on 2027-04-02 at the earliest"),
    ({"start": "9999-01-01", "extra": "    commitments:\n      - {gpu: L4, count: 1, term: 3y, "
                                      "payment: no-upfront, start: 9999-02-01}\n"},
     "commitments[0].term: 9999-02-01 + 36 months runs past 9999-12-31"),
])
def test_hostile_dates_and_horizons_are_refused_in_one_line(cli: Cli, tmp_path: Path,
                                                            fields: dict[str, str],
                                                            needle: str) -> None:
    path = _scenario(tmp_path, **fields)
    for command in (("validate",), ("run", "--replications", "2", "--out",
                                    str(tmp_path / "out"))):
        _refused(cli(*command, str(path)), needle)
    assert not (tmp_path / "out").exists()


def test_a_phase_cut_by_the_horizon_is_a_warning_in_the_json_and_on_screen(
        cli: Cli, tmp_path: Path) -> None:
    """proto ends at 2 × 730.5 h; later's 2 months run to 4 × 730.5 h = 121.75 days, past a
    3-month horizon (90 days): its last 1.0 month is not simulated."""
    path = _scenario(tmp_path, months="3")
    code, out, err = cli("run", str(path), "--replications", "2", "--json", "--out",
                         str(tmp_path / "out"))
    assert code == 0, err
    summary = json.loads(out)
    (warning,) = summary["warnings"]
    assert warning.startswith("phase 'later' (2 months from 2027-03-02 at the earliest) runs "
                              "past the horizon's end 2027-04-01: its last 1.0 months")
    assert summary["plans"][0]["warnings"] == []
    code, out, err = cli("run", str(path), "--replications", "2", "--out",
                         str(tmp_path / "out2"))
    assert code == 0, err
    assert f"warning: {warning}" in out


def test_an_unwritable_out_is_refused_before_any_simulation(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*_: Any, **__: Any) -> None:
        raise AssertionError("simulated before refusing --out")

    monkeypatch.setattr("costsim.sim.run_result.simulate_scenario", never)
    path = _scenario(tmp_path)
    for command in ("run", "optimize"):
        _refused(cli(command, str(path), "--out", "/proc/x"),
                 "--out: /proc/x: cannot write a folder in /proc")


def test_a_sweep_to_an_unwritable_out_is_refused_before_any_variant_runs(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*_: Any, **__: Any) -> None:
        raise AssertionError("loaded variants before refusing --out")

    import costsim.cli.sweep_variants  # where the sweep loads its variants

    monkeypatch.setattr(costsim.cli.sweep_variants, "iter_variant_files", never)
    path = _scenario(tmp_path)
    _refused(cli("sweep", str(path), "--set", "horizon_months=3,4", "--out", "/proc/x"),
             "--out: /proc/x: cannot write a folder in /proc")
