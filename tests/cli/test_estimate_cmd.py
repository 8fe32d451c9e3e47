"""``costsim estimate train`` / ``estimate serve``: DESIGN.md §7 JSON keys, errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

DATA_DIR = Path(__file__).parents[1] / "data"

TRAIN_KEYS = {"params_total", "tokens", "gpu", "gpus", "layout", "flops_total", "step_time_s",
              "tokens_per_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "hfu",
              "breakdown_s", "steady_wall_time_s", "goodput", "wall_time_s", "gpu_hours",
              "price_usd_per_gpu_hour", "price_source", "cost_usd", "warnings"}
LAYOUT_KEYS = {"tp", "pp", "dp", "zero", "micro_batch", "grad_accum", "seq_len", "recompute"}
SERVE_KEYS = {"gpu", "gpus_per_replica", "engine", "precision", "quant", "prompt_tokens",
              "output_tokens", "decode_tokens_per_s", "max_batch", "output_tokens_per_s",
              "max_requests_per_s", "ttft_s", "tpot_s", "max_requests_per_s_at_slo",
              "replicas_needed", "cost_per_million_output_tokens_usd",
              "cost_per_million_tokens_usd"}


def test_train_json_has_design_keys(cli: Cli) -> None:
    code, out, err = cli("estimate", "train", "--arch",
                         str(DATA_DIR / "architectures/llama-2-7b.json"), "--gpu", "A100-80GB",
                         "--gpus", "1024", "--tokens", "2e12", "--price-usd-per-gpu-hour",
                         "1.5", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload.keys() >= TRAIN_KEYS
    assert payload["layout"].keys() >= LAYOUT_KEYS
    assert payload["breakdown_s"].keys() >= {"compute", "communication_exposed",
                                             "pipeline_bubble"}
    assert payload["gpus"] == 1024
    assert payload["gpu"] == "A100-80GB"
    assert payload["price_source"] == "--price-usd-per-gpu-hour"
    assert payload["cost_usd"] == pytest.approx(1.5 * payload["gpu_hours"])
    assert payload["wall_time_s"] == pytest.approx(payload["steady_wall_time_s"]
                                                   / payload["goodput"])
    breakdown = payload["breakdown_s"]
    assert (breakdown["compute"] + breakdown["communication_exposed"]
            + breakdown["pipeline_bubble"] + breakdown["sync"]) == pytest.approx(
        payload["step_time_s"])
    # GPU-hours are the all-in wall time on every GPU (the model card's figure for this run is
    # reserved for issue 18's held-out check and is not used here).
    assert payload["gpu_hours"] == pytest.approx(payload["wall_time_s"] * 1024 / 3600)


def test_train_price_comes_from_the_price_book(cli: Cli) -> None:
    code, out, err = cli("estimate", "train", "--model", "llama-3-8b", "--gpu", "H100",
                         "--gpus", "8", "--tokens", "1e9", "--cloud", "aws", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["price_usd_per_gpu_hour"] > 0
    assert "aws" in payload["price_source"]


def test_train_keeps_given_degrees(cli: Cli) -> None:
    code, out, err = cli("estimate", "train", "--model", "llama-2-13b", "--gpus", "16",
                         "--tp", "2", "--pp", "2", "--zero", "1", "--recompute", "full",
                         "--tokens", "1e9", "--price-usd-per-gpu-hour", "2", "--json")
    assert code == 0, err
    lay = json.loads(out)["layout"]
    assert (lay["tp"], lay["pp"], lay["dp"], lay["zero"], lay["recompute"]) == (
        2, 2, 4, 1, "full")


def test_train_table_output(cli: Cli) -> None:
    code, out, _ = cli("estimate", "train", "--model", "gpt2", "--gpus", "1", "--tokens",
                       "1e9", "--price-usd-per-gpu-hour", "2")
    assert code == 0
    assert "GPU-hours" in out
    assert "goodput" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--model", "llama-2-7b", "--gpus", "8"], "--tokens"),
    (["--model", "llama-2-7b", "--tokens", "1e9"], "--gpus"),
    (["--model", "llama-2-7b", "--gpus", "8", "--tokens", "-1"], "--tokens"),
    (["--model", "lama-2-7b", "--gpus", "8", "--tokens", "1e9"], "did you mean"),
    (["--model", "llama-2-7b", "--gpu", "H1000", "--gpus", "8", "--tokens", "1e9"],
     "did you mean"),
    (["--model", "llama-2-7b", "--gpus", "8", "--tp", "3", "--tokens", "1e9"], "--tp"),
    (["--model", "llama-2-7b", "--gpus", "8", "--tp", "2", "--pp", "2", "--dp", "4",
      "--tokens", "1e9"], "--gpus"),
    (["--model", "llama-2-7b", "--gpu", "V100", "--precision", "bf16", "--gpus", "8",
      "--tokens", "1e9"], "bf16"),
    (["--model", "llama-2-7b", "--gpus", "8", "--network", "infiniband", "--tokens", "1e9"],
     "network"),
])
def test_train_bad_input_exits_2_with_one_line(argv: list[str], message: str,
                                               cli: Cli) -> None:
    code, out, err = cli("estimate", "train", *argv)
    assert code == 2
    assert out == ""
    assert message in err
    assert err.count("\n") == 1


def test_train_given_layout_that_does_not_fit_names_the_component(
        cli: Cli) -> None:
    code, _, err = cli("estimate", "train", "--model", "llama-2-70b", "--gpus", "8",
                       "--tp", "1", "--pp", "1", "--dp", "8", "--zero", "0",
                       "--micro-batch", "1", "--grad-accum", "1", "--recompute", "none",
                       "--tokens", "1e9", "--price-usd-per-gpu-hour", "1")
    assert code == 2
    assert "does not fit" in err
    assert "largest component" in err


def test_train_no_layout_fits(cli: Cli) -> None:
    code, _, err = cli("estimate", "train", "--model", "llama-2-70b", "--gpu", "T4",
                       "--gpus", "2", "--tokens", "1e9", "--price-usd-per-gpu-hour", "1")
    assert code == 2
    assert "no layout of 2 x T4 fits" in err


def test_serve_json_has_design_keys(cli: Cli) -> None:
    code, out, err = cli("estimate", "serve", "--model", "llama-3-8b", "--gpu", "H100",
                         "--prompt-tokens", "1000", "--output-tokens", "1000", "--rate", "20",
                         "--slo-ttft-s", "1", "--slo-tpot-s", "0.05",
                         "--price-usd-per-gpu-hour", "3", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload.keys() >= SERVE_KEYS
    assert payload["engine"] == "vllm"
    assert payload["quant"] == "none"
    assert payload["precision"] == "bf16"
    assert payload["replicas_needed"] >= 1
    assert 0 < payload["max_requests_per_s_at_slo"] <= payload["max_requests_per_s"]
    assert payload["cost_per_million_output_tokens_usd"] == pytest.approx(
        2 * payload["cost_per_million_tokens_usd"])


def test_serve_price_lookup_and_engines(cli: Cli) -> None:
    code, out, err = cli("estimate", "serve", "--model", "llama-2-7b", "--gpu", "L4",
                         "--engine", "llama.cpp", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["price_usd_per_gpu_hour"] > 0
    assert payload["price_source"]
    # llama-server's 4 default slots (ggml-org/llama.cpp PR #16736; issue 18, sixth round)
    assert payload["max_batch"] == 4
    assert payload["replicas_needed"] is None
    # No SLO flags: the default SLO applies, and the output says so.
    assert payload["slo_source"] == "default"
    assert 0 < payload["max_requests_per_s_at_slo"] <= payload["max_requests_per_s"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--model", "llama-3-8b", "--engine", "vlm"], "did you mean 'vllm'"),
    (["--model", "llama-3-8b", "--rate", "0"], "--rate"),
    (["--model", "llama-3-8b", "--slo-tpot-s", "x"], "--slo-tpot-s"),
    (["--model", "llama-3-8b", "--batch", "1000000"], "KV cache"),
    (["--model", "llama-3.1-405b", "--gpu", "T4"], "does not fit"),
    (["--model", "llama-3-8b", "--pp", "2"], "--pp"),
])
def test_serve_bad_input_exits_2(argv: list[str], message: str,
                                 cli: Cli) -> None:
    code, out, err = cli("estimate", "serve", *argv)
    assert code == 2
    assert out == ""
    assert message in err
    assert err.count("\n") == 1


def test_serve_table_output(cli: Cli) -> None:
    code, out, _ = cli("estimate", "serve", "--model", "llama-3-8b", "--rate", "10",
                       "--price-usd-per-gpu-hour", "2")
    assert code == 0
    assert "replicas needed" in out
    assert "$ per M tokens" in out


def test_serve_context_reserves_kv_per_sequence(cli: Cli) -> None:
    base = ["estimate", "serve", "--model", "llama-3-8b", "--price-usd-per-gpu-hour", "2",
            "--json"]
    _, out_short, _ = cli(*base)
    _, out_long, _ = cli(*base, "--context", "8192")
    short, long = json.loads(out_short), json.loads(out_long)
    assert short["max_batch"] == 256
    assert long["max_batch"] == long["kv_capacity_tokens"] // 8192


def test_multi_gpu_jobs_are_priced_on_whole_multi_gpu_instances() -> None:
    """A 64-GPU run is priced on 8-GPU instances, not on 64 single-GPU machines."""
    from costsim.catalog.prices import find_offering
    from costsim.cli.estimate_cmd import lookup_price

    _, source, warnings = lookup_price("H100", 64, None, None)
    cloud, region, instance_type = source.split(" on-demand")[0].split(" ", 2)
    assert find_offering(cloud, region, instance_type).gpus_per_instance == 8
    assert warnings == []
    _, single_source, _ = lookup_price("H100", 1, None, None)
    assert single_source != source


@pytest.mark.parametrize(("argv", "message"), [
    (["serve", "--model", "llama-3-8b", "--rate", "0"],
     "argument --rate: must be a finite number from 1e-6 to 1e7 (got 0)"),
    (["serve", "--model", "llama-3-8b", "--engine", "vlm"],
     "argument --engine: unknown engine 'vlm'; did you mean 'vllm' or 'vllm-v0'?"),
    (["train", "--model", "gpt2", "--tokens", "-1"],
     "argument --tokens: must be a finite number above 0, up to 1e16 (got -1)"),
    (["train", "--model", "gpt2", "--tokens", "1e9", "--global-batch", "x"],
     "argument --global-batch: must be a whole number in 1..100,000,000 (got 'x')"),
    (["train", "--model", "gpt2", "--tokens", "1e9", "--price-usd-per-gpu-hour", "-1"],
     "argument --price-usd-per-gpu-hour: must be a finite number from 0 to 1000 (got -1)"),
    (["train", "--model", "llama-3-8b", "--tokens", "1e9", "--micro-batch", "0"],
     "argument --micro-batch: must be a whole number in 1..100,000 (got 0)"),
])
def test_type_errors_name_the_flag_once(cli: Cli, argv: list[str], message: str) -> None:
    code, out, err = cli("estimate", *argv)
    assert code == 2
    assert out == ""
    assert message in err
    assert err.count("--") == message.count("--")  # the flag is not repeated
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("argv", "needle"), [
    # 100000 + 256 tokens exceed Llama-3-8B's 8192 positions.
    (["--model", "llama-3-8b", "--prompt-tokens", "100000"],
     "--prompt-tokens + --output-tokens: must be at most the 8192 positions of llama-3-8b "
     "(got 100000 + 256 = 100256; --output-tokens defaults to 256)"),
    (["--model", "llama-3-8b", "--prompt-tokens", "8000", "--output-tokens", "500"],
     "(got 8000 + 500 = 8500)"),
    # An encoder cannot generate: no decode loop to serve.
    (["--model", "bert-base-uncased"], "bert-base-uncased is an encoder-only model"),
    # The KV room per sequence must hold the request it serves.
    (["--model", "llama-3-8b", "--context", "100"],
     "--context: must hold prompt + output = 768 tokens (got 100)"),
])
def test_serve_rejects_requests_the_model_cannot_run(cli: Cli, argv: list[str],
                                                     needle: str) -> None:
    code, out, err = cli("estimate", "serve", *argv)
    assert code == 2
    assert out == ""
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


@pytest.mark.parametrize(("argv", "needle"), [
    (["serve", "--model", "gpt2", "--gpus", "2", "--tp", "4"],
     "--gpus: a replica's GPUs are its TP degree"),
    (["train", "--model", "gpt2", "--tokens", "1e9", "--gpus", "8", "--global-batch", "8",
      "--grad-accum", "3"], "--grad-accum: give --grad-accum or a global batch"),
])
def test_contradictory_flags_exit_2(cli: Cli, argv: list[str], needle: str) -> None:
    code, out, err = cli("estimate", *argv)
    assert code == 2
    assert out == ""
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_a_batch_smaller_than_the_fleet_is_kept_with_model_parallelism(cli: Cli) -> None:
    """3 sequences on 8 GPUs: dp cannot exceed the batch, so TP × PP takes the other GPUs."""
    code, out, err = cli("estimate", "train", "--model", "gpt2", "--tokens", "1e9", "--gpus", "8",
                         "--global-batch", "3", "--price-usd-per-gpu-hour", "1", "--json")
    assert code == 0, err
    payload = json.loads(out)
    layout = payload["layout"]
    assert layout["global_batch"] == 3
    assert layout["tp"] * layout["pp"] * layout["dp"] == 8
    assert not any("global batch" in w for w in payload["warnings"])


def test_nearest_batch_within_ten_percent_is_a_warning_naming_both(cli: Cli) -> None:
    code, out, err = cli("estimate", "train", "--model", "gpt2", "--tokens", "1e9", "--gpus", "8",
                         "--tp", "1", "--pp", "1", "--global-batch", "17",
                         "--price-usd-per-gpu-hour", "1", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["layout"]["global_batch"] == 16
    assert any("global batch is 16 sequences" in w and "not the 17 asked" in w
               for w in payload["warnings"])


def test_a_batch_that_cannot_use_the_fleet_exits_2_naming_the_usable_count(cli: Cli) -> None:
    """The fixed degrees leave dp = 8 replicas for a 3-sequence batch: no layout keeps it."""
    code, _, err = cli("estimate", "train", "--model", "gpt2", "--tokens", "1e9", "--gpus", "8",
                       "--tp", "1", "--pp", "1", "--global-batch", "3",
                       "--price-usd-per-gpu-hour", "1")
    assert code == 2
    assert "8 GPUs cannot be used with a global batch of 3 sequences" in err
    assert "at most 3 GPUs can (tp 1 x pp 1 x dp 3)" in err
    assert "Traceback" not in err


def test_a_huge_fleet_is_refused_quickly(cli: Cli) -> None:
    """Divisors of the GPU count up to √n: the largest count allowed, 10^6 GPUs, must not hang
    the layout search; no layout keeps a 4M-token batch (4,096 sequences of 1,024) on it, and
    the largest usable count is TP 6 (the largest dividing GPT-2's 12 heads) × PP 12 (one layer
    per stage) × DP 4,505 (4,096 sequences + 10 %). The default batch (the largest published,
    60M tokens, on a fleet this size) keeps layouts, and the fleet is refused for its failures."""
    code, _, err = cli("estimate", "train", "--model", "gpt2", "--tokens", "1e9", "--gpus",
                       "1000000", "--global-batch", "4096", "--price-usd-per-gpu-hour", "1")
    assert code == 2
    assert f"at most {6 * 12 * 4505} GPUs can" in err
    code, _, err = cli("estimate", "train", "--model", "gpt2", "--tokens", "1e9", "--gpus",
                       "1000000", "--price-usd-per-gpu-hour", "1")
    assert code == 2
    assert "the run would not finish" in err
    assert "Traceback" not in err


def test_virtual_stages_flag_is_kept_and_reported(cli: Cli) -> None:
    code, out, err = cli("estimate", "train", "--model", "llama-2-7b", "--tokens", "1e9",
                         "--gpus", "64", "--tp", "2", "--pp", "4", "--virtual-stages", "2",
                         "--price-usd-per-gpu-hour", "1", "--json")
    assert code == 0, err
    layout = json.loads(out)["layout"]
    assert (layout["pp"], layout["virtual_stages"]) == (4, 2)


@pytest.mark.parametrize(("flags", "message"), [
    (("--pp", "4", "--virtual-stages", "3"), "--virtual-stages: must divide the 8 layers"),
    (("--virtual-stages", "2"), "--virtual-stages: needs --pp > 1"),
    (("--pp", "1", "--virtual-stages", "2"), "--virtual-stages: needs --pp > 1"),
    (("--pp", "4", "--virtual-stages", "2", "--grad-accum", "2"),
     "--grad-accum: the interleaved schedule (--virtual-stages 2) needs at least pp = 4"),
    (("--pp", "4", "--virtual-stages", "0"), "--virtual-stages"),
])
def test_bad_virtual_stages_exit_2(cli: Cli, flags: tuple[str, ...], message: str) -> None:
    code, _, err = cli("estimate", "train", "--model", "llama-2-7b", "--tokens", "1e9",
                       "--gpus", "64", *flags, "--price-usd-per-gpu-hour", "1")
    assert code == 2
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("argv", "needle"), [
    (["--gpus", "10" + "0" * 29], "argument --gpus: must be a whole number in 1..1,000,000"),
    (["--gpus", "8", "--global-batch", "10" + "0" * 29],
     "argument --global-batch: must be a whole number in 1..100,000,000"),
    (["--gpus", "8", "--global-batch-tokens", "1e300"],
     "argument --global-batch-tokens: must be a finite number above 0, up to 1e10 (got 1e300)"),
])
def test_huge_numbers_exit_2_not_overflow(cli: Cli, argv: list[str], needle: str) -> None:
    code, _, err = cli("estimate", "train", "--model", "gpt2", "--tokens", "1e9", *argv)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_engine_errors_name_the_sub_command(cli: Cli) -> None:
    _, _, err = cli("estimate", "serve", "--model", "bert-base-uncased")
    assert err.startswith("costsim estimate serve: error: --model:")


def _train_json(cli: Cli, *extra: str) -> dict[str, object]:
    code, out, err = cli("estimate", "train", "--model", "llama-3-8b", "--gpu", "H100",
                         "--gpus", "8", "--tokens", "1e9", "--price-usd-per-gpu-hour", "2",
                         "--json", *extra)
    assert code == 0, err
    payload: dict[str, object] = json.loads(out)
    return payload


def test_train_names_the_framework_and_defaults_to_the_calibration(cli: Cli) -> None:
    default = _train_json(cli)
    assert default["framework"] == "megatron-lm"
    assert default["framework_efficiency"] == 1.0
    titan = _train_json(cli, "--framework", "torchtitan")  # an alias of pytorch-fsdp
    assert titan["framework"] == "pytorch-fsdp"
    hf = _train_json(cli, "--framework", "hf-trainer")
    assert hf["framework"] == "hf-trainer"
    assert float(hf["gpu_hours"]) > float(titan["gpu_hours"]) > float(  # type: ignore[arg-type]
        default["gpu_hours"])  # type: ignore[arg-type]


def test_unknown_framework_is_one_line_exit_2(cli: Cli) -> None:
    code, _out, err = cli("estimate", "train", "--model", "llama-3-8b", "--gpus", "8",
                         "--tokens", "1e9", "--framework", "jax")
    assert code == 2
    assert "--framework" in err
    assert "megatron-lm" in err
    assert "Traceback" not in err
    code, _, err = cli("estimate", "serve", "--model", "llama-3-8b", "--framework", "deepspeed")
    assert code == 2
    assert "--framework" in err


def test_train_says_which_default_batch_it_used(cli: Cli) -> None:
    lora = _train_json(cli, "--lora-rank", "16")
    assert lora["layout"]["global_batch"] == 32  # type: ignore[index]
    assert str(lora["global_batch_basis"]).startswith("default for LoRA")
    given = _train_json(cli, "--global-batch", "64")
    assert given["global_batch_basis"] == "given"


def test_framework_choices_are_the_domain_enum() -> None:
    from costsim.cli.estimate_cmd import FRAMEWORK_ALIASES, FRAMEWORKS
    from costsim.domain.workload import TrainingFramework

    assert set(FRAMEWORKS) == {f.value for f in TrainingFramework}
    assert set(FRAMEWORK_ALIASES.values()) <= set(FRAMEWORKS)


def test_train_reports_the_global_batch_in_sequences_and_tokens(cli: Cli) -> None:
    """DESIGN §6: `estimate train --json` reports `global_batch` and `global_batch_tokens`; the
    text names the batch, its tokens and its basis."""
    payload = _train_json(cli, "--seq-len", "2048")
    assert payload["global_batch"] == 2048  # 4M tokens of 2,048 on 8 GPUs
    assert payload["global_batch_tokens"] == 2048 * 2048
    assert str(payload["global_batch_basis"]).startswith("default for pre-training: 4M tokens")
    code, out, err = cli("estimate", "train", "--model", "llama-3-8b", "--gpu", "H100",
                         "--gpus", "8", "--tokens", "1e9", "--seq-len", "2048",
                         "--price-usd-per-gpu-hour", "2")
    assert code == 0, err
    assert "2048 sequences = 4,194,304 tokens (default for pre-training" in out


def test_train_warns_when_a_given_batch_starves_the_fleet(cli: Cli) -> None:
    code, out, err = cli("estimate", "train", "--model", "llama-3.1-405b", "--gpu", "H100",
                         "--gpus", "16384", "--tokens", "15.6e12", "--seq-len", "8192",
                         "--global-batch", "256", "--price-usd-per-gpu-hour", "2", "--json")
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    assert any(w.startswith("batch starves the fleet") and "--global-batch 2048" in w
               for w in warnings)
    code, out, err = cli("estimate", "train", "--model", "llama-3.1-405b", "--gpu", "H100",
                         "--gpus", "16384", "--tokens", "15.6e12", "--seq-len", "8192",
                         "--price-usd-per-gpu-hour", "2", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["global_batch_tokens"] == 16 * 2**20
    assert not any(w.startswith("batch starves") for w in payload["warnings"])
