"""``costsim memory``: JSON keys of DESIGN.md §7, table view, bad input (exit 2, one line),
OOM (exit 0), and ``--grid``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

ARCH = Path(__file__).resolve().parents[1] / "data" / "architectures"
TOP_KEYS = {"model", "task", "params_total", "params_active", "params_trainable",
            "params_adapter", "layout", "per_gpu_bytes", "gpu", "verdict", "headroom_bytes",
            "max_micro_batch", "host_ram_bytes", "host_ram_rule_of_thumb_bytes"}
COMPONENTS = {"weights", "master_weights", "gradients", "optimizer", "activations", "kv_cache",
              "runtime_overhead", "total"}


def test_json_has_the_design_keys(cli: Cli) -> None:
    code, out, _ = cli("memory", "--model", "llama-2-7b", "--gpus", "8", "--zero", "3",
                       "--recompute", "full", "--json")
    assert code == 0
    payload = json.loads(out)
    assert set(payload) >= TOP_KEYS
    assert set(payload["per_gpu_bytes"]) == COMPONENTS
    assert set(payload["layout"]) >= {"tp", "pp", "dp", "zero", "sp", "micro_batch", "seq_len",
                                      "grad_accum", "recompute"}
    assert payload["layout"]["dp"] == 8
    assert payload["layout"]["seq_len"] == 4096
    assert set(payload["gpu"]) == {"name", "capacity_bytes", "usable_bytes"}
    parts = dict(payload["per_gpu_bytes"])
    assert sum(v for k, v in parts.items() if k != "total") == parts["total"]
    assert payload["headroom_bytes"] == payload["gpu"]["usable_bytes"] - parts["total"]
    assert payload["verdict"] == "fits"
    assert payload["max_micro_batch"] >= 1
    low, high = payload["host_ram_rule_of_thumb_bytes"]
    assert low < high
    assert payload["params_trainable"] == payload["params_total"] == 6738415616


def test_table_shows_gib_and_gb(cli: Cli) -> None:
    code, out, _ = cli("memory", "--model", "tiny-llama", "--task", "infer")
    assert code == 0
    assert "GiB" in out
    assert "GB" in out
    assert "verdict: FITS" in out
    for label in ("weights", "master weights", "gradients", "optimizer states", "activations",
                  "KV cache", "runtime overhead", "TOTAL per GPU", "headroom"):
        assert label in out


def test_oom_is_not_an_error(cli: Cli) -> None:
    code, out, _ = cli("memory", "--model", "llama-2-70b", "--gpu", "T4", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["verdict"] == "oom"
    assert payload["headroom_bytes"] < 0
    assert payload["max_micro_batch"] == 0
    assert payload["precision"] == "fp16"  # T4 has no bf16


@pytest.mark.parametrize(("argv", "needle"), [
    (["--model", "llama-2-7b", "--tp", "3"], "--tp"),
    (["--model", "llama-3-8b", "--tp", "64"], "--tp"),
    (["--model", "llama-2-7b", "--gpus", "8", "--dp", "2"], "--gpus"),
    (["--model", "llama-2-7b", "--task", "finetune", "--lora-rank", "8",
      "--lora-targets", "query,value"], "query"),
    (["--model", "bert-base-uncased", "--gpu", "V100", "--precision", "bf16"], "bf16"),
    (["--model", "tiny-llama", "--gpu", "T4", "--precision", "bf16"], "bf16"),
    (["--model", "llama-2-7b", "--gpu", "H100-SMX"], "did you mean"),
    (["--model", "lama-2-7b"], "did you mean"),
    (["--model", "llama-2-7b", "--seq-len", "8192"], "--seq-len"),
    (["--model", "llama-2-7b", "--quant", "nf4"], "--quant"),
    (["--model", "llama-2-7b", "--pp", "64"], "--pp"),
    ([], "--model"),
])
def test_bad_input_is_one_line_exit_2(cli: Cli, argv: list[str], needle: str) -> None:
    code, out, err = cli("memory", *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert needle in err


@pytest.mark.parametrize("argv", [
    ["--model", "llama-2-7b", "--micro-batch", "-1"],
    ["--model", "llama-2-7b", "--seq-len", "0"],
    ["--model", "llama-2-7b", "--recompute", "half"],
    ["--model", "llama-2-7b", "--task", "infer", "--batch", "x"],
])
def test_bad_values_exit_2(cli: Cli, argv: list[str]) -> None:
    code, _, err = cli("memory", *argv)
    assert code == 2
    assert err.count("\n") == 1


def test_qlora_bookkeeping(cli: Cli) -> None:
    code, out, _ = cli("memory", "--model", "llama-2-7b", "--task", "finetune", "--lora-rank",
                       "16", "--quant", "nf4", "--json")
    assert code == 0
    payload = json.loads(out)
    parts = payload["per_gpu_bytes"]
    adapter = payload["params_adapter"]
    assert parts["master_weights"] == 0
    assert parts["gradients"] == adapter * 2  # bf16 adapter gradients
    assert parts["optimizer"] == adapter * 8  # 32-bit AdamW moments
    # NF4 + double quant ≈ 0.516 B per linear weight, the rest in bf16.
    assert 3.5e9 < parts["weights"] < 4.2e9


def write_grid(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_grid(tmp_path: Path, cli: Cli) -> None:
    grid = tmp_path / "in.csv"
    out = tmp_path / "out.csv"
    write_grid(grid, [
        {"model": "llama-2-7b", "task": "train", "micro_batch": "2", "tp": "2", "gpu": "A100"},
        {"model": "llama-2-7b", "task": "infer", "micro_batch": "", "tp": "1", "gpu": "H100"},
        {"model": "llama-2-7b", "task": "train", "micro_batch": "1", "tp": "3", "gpu": "H100"},
        {"model": "lama-2-7b", "task": "train", "micro_batch": "1", "tp": "1", "gpu": "H100"},
    ])
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(out))
    assert code == 0
    assert "2 of 4" in err
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0])[:5] == ["model", "task", "micro_batch", "tp", "gpu"]
    assert rows[0]["error"] == ""
    assert rows[0]["verdict"] == "oom"
    assert rows[1]["verdict"] == "fits"
    assert int(rows[1]["kv_cache_bytes"]) > 0
    assert "--tp" in rows[2]["error"]
    assert rows[2]["total_bytes"] == ""
    assert "did you mean" in rows[3]["error"]
    # The grid agrees with the single-configuration command.
    code, single, _ = cli("memory", "--model", "llama-2-7b", "--micro-batch", "2", "--tp", "2",
                          "--gpu", "A100", "--json")
    assert json.loads(single)["per_gpu_bytes"]["total"] == int(rows[0]["total_bytes"])
    # Never overwrite without --force.
    before = out.read_text()
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(out))
    assert code == 2
    assert "--force" in err
    assert out.read_text() == before
    code, _, _ = cli("memory", "--grid", str(grid), "--out", str(out), "--force")
    assert code == 0


def test_grid_rejects_unknown_columns(tmp_path: Path, cli: Cli) -> None:
    grid = tmp_path / "in.csv"
    write_grid(grid, [{"model": "gpt2", "microbatch": "2"}])
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(tmp_path / "o.csv"))
    assert code == 2
    assert "micro-batch" in err
    assert not (tmp_path / "o.csv").exists()


def test_grid_duplicates_and_bom(tmp_path: Path, cli: Cli) -> None:
    grid = tmp_path / "in.csv"
    grid.write_text("\ufeffmodel,task,batch,context\ngpt2,infer,4,1024\ngpt2,infer,4,1024\n"
                    "gpt2,infer,8,1024\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(out))
    assert code == 0
    assert err == ""
    rows = list(csv.DictReader(out.open()))
    assert rows[0]["total_bytes"] == rows[1]["total_bytes"]
    assert int(rows[2]["kv_cache_bytes"]) == 2 * int(rows[0]["kv_cache_bytes"])


@pytest.mark.parametrize(("argv", "message"), [
    (["--micro-batch", "0"],
     "argument --micro-batch: must be a whole number in 1..100,000 (got 0)"),
    (["--task", "trian"], "argument --task: unknown task 'trian'; did you mean 'train'?"),
    (["--tp", "x"], "argument --tp: must be a whole number in 1..1,000,000 (got 'x')"),
])
def test_type_errors_name_the_flag_once(cli: Cli, argv: list[str], message: str) -> None:
    code, _, err = cli("memory", "--model", "gpt2", *argv)
    assert code == 2
    assert message in err
    assert err.count("--") == message.count("--")


def test_context_must_hold_the_given_request(cli: Cli) -> None:
    code, _, err = cli("memory", "--model", "llama-3-8b", "--task", "infer",
                       "--prompt-tokens", "100", "--context", "50")
    assert code == 2
    assert "--context: must hold prompt + output = 356 tokens (got 50)" in err


def test_encoder_inference_has_no_kv_cache(cli: Cli) -> None:
    """BERT inference is one encoder forward pass: nothing is decoded, so no KV cache."""
    code, out, _ = cli("memory", "--model", "bert-base-uncased", "--task", "infer",
                       "--batch", "8", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["per_gpu_bytes"]["kv_cache"] == 0
    assert payload["kv_cache_bytes_per_token"] == 0
    assert payload["max_kv_tokens"] == 0
    assert payload["per_gpu_bytes"]["activations"] > 0
    assert 1 <= payload["max_batch"] < 1_000_000


@pytest.mark.parametrize(("argv", "needle"), [
    (["--task", "train", "--batch", "4"], "--batch: does not apply to --task train"),
    (["--task", "infer", "--micro-batch", "4"], "--micro-batch: does not apply to --task infer"),
    (["--task", "infer", "--seq-len", "512"], "--seq-len: does not apply to --task infer"),
    (["--gpu", ""], "--gpu: must name a GPU"),
])
def test_contradictory_or_empty_flags_exit_2(cli: Cli, argv: list[str], needle: str) -> None:
    code, out, err = cli("memory", "--model", "gpt2", *argv)
    assert code == 2
    assert out == ""
    assert needle in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(("content", "needle"), [
    (b"", "is empty: the first line must name the columns"),
    (b"\n\n", "is empty: the first line must name the columns"),
    (b"model,tp\n", "has a header but no rows"),  # issue 8: a header-only grid says so
    (b"model,tp\r\n\r\n", "has a header but no rows"),
    (b"\xff\xfe\x00garbage\n", "is not UTF-8 text"),
    (b"model,micro_batch,micro-batch\ngpt2,1,2\n", "repeats the column 'micro_batch'"),
    (b"model,micro_batch\ngpt2,1,extra\n", "line 2: has more cells than the 2 columns"),
])
def test_malformed_grid_files_exit_2(tmp_path: Path, cli: Cli, content: bytes,
                                     needle: str) -> None:
    grid = tmp_path / "in.csv"
    grid.write_bytes(content)
    out = tmp_path / "out.csv"
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(out))
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1
    assert not out.exists()


def test_grid_output_in_a_missing_directory_exits_2(tmp_path: Path, cli: Cli) -> None:
    grid = tmp_path / "in.csv"
    write_grid(grid, [{"model": "gpt2"}])
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(tmp_path / "no" / "o.csv"))
    assert code == 2
    assert "--out: cannot write" in err
    assert err.count("\n") == 1


def test_grid_row_with_model_and_arch_is_a_row_error(tmp_path: Path, cli: Cli) -> None:
    grid = tmp_path / "in.csv"
    out = tmp_path / "out.csv"
    write_grid(grid, [{"model": "gpt2", "arch": str(ARCH / "gpt2.json")}, {"model": "gpt2"}])
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(out))
    assert code == 0
    assert "1 of 2" in err
    rows = list(csv.DictReader(out.open()))
    assert "give model or arch in a row, not both" in rows[0]["error"]
    assert rows[1]["verdict"] == "fits"


def test_configuration_flags_do_not_go_with_grid(tmp_path: Path, cli: Cli) -> None:
    """Rows carry their configuration; a flag beside --grid would be silently ignored."""
    grid = tmp_path / "in.csv"
    write_grid(grid, [{"model": "gpt2"}])
    out = tmp_path / "out.csv"
    code, _, err = cli("memory", "--grid", str(grid), "--out", str(out), "--gpu", "A100")
    assert code == 2
    assert "--gpu: does not go with --grid" in err
    assert not out.exists()
