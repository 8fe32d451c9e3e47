"""``costsim memory --grid``: the fast path (grouped, bulk-checked) writes the same bytes as the
one-by-one reference path, bad rows and their messages included."""

from __future__ import annotations

import csv
import random
import shutil
from pathlib import Path

import pytest

from costsim.cli.memory_grid import run_grid
from costsim.cli.memory_grid_io import pandas_cells
from costsim.errors import CostsimError, InputError

ARCH = Path(__file__).resolve().parents[1] / "data" / "architectures"

# Good values, then bad ones (unknown names, rule breakers, non-numbers) for each column.
VALUES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "model": (("llama-2-7b", "llama-3-8b", "mixtral-8x7b", "gpt2", "bert-base-uncased",
               "tiny-llama", "mistral-7b", "llama-2-70b", " llama-2-7b "), ("lama-2-7b", "")),
    "arch": (("",), ("gpt2.json", "missing.json")),
    "precision": (("bf16", "fp16", "fp32", "tf32", "BF16 ", ""), ("fp64", "fp8")),
    "gpu": (("H100", "A100", "A100-80GB", "h100 sxm", "", " "), ("H100-SMX", "V100", "T4")),
    "quant": (("none", ""), ("nf4", "int8", "int4", "fp8")),
    "optimizer": (("adamw", "adamw-8bit", "sgd", "sgd-momentum", "adafactor", ""), ("adam",)),
    "bytes_preset": (("paper", "framework", "deepspeed", "pure", ""), ("half",)),
    "tp": (("1", "2", "4", "8", "", " 2 "), ("3", "64", "x", "0")),
    "pp": (("1", "2", "4", ""), ("200", "-1")),
    "dp": (("", "", "1", "2", "8", "64"), ("1.5",)),
    "gpus": (("", "", "", "8", "64"), ("24", "1000000000", "1000000001")),
    "zero": (("0", "1", "2", "3", ""), ("4",)),
    "sp": (("", "true", "false", "1"), ("maybe",)),
    "flash_attention": (("", "true", "false", "off"), ("y",)),
    "micro_batch": (("1", "2", "4", "8", "16", "", "1_0"), ("0", "x", "1e3")),
    "seq_len": (("512", "1024", "2048", "4096", ""), ("8192", "100000")),
    "grad_accum": (("1", "4", "16", ""), ("-2",)),
    "recompute": (("none", "selective", "full", ""), ("half",)),
    "lora_rank": (("8", "16"), ("0", "r")),
    "lora_targets": (("", "q_proj,v_proj", "all-linear"),
                     ("query,value", "all-linear,q_proj", " , ")),
    "batch": (("1", "4", "32", "256", ""), ("0", "many")),
    "context": (("", "", "128", "1024", "4096"), ("8192", "50", "100000")),
    "prompt_tokens": (("", "", "0", "100", "512"), ("2000",)),
    "output_tokens": (("", "", "1", "256"), ("5000",)),
    "kv_dtype": (("", "", "fp8", "int8", "fp16", "bf16", "fp32"), ("int4",)),
}
TRAIN_ONLY = ("micro_batch", "seq_len", "grad_accum", "recompute")
INFER_ONLY = ("batch", "context", "prompt_tokens", "output_tokens", "kv_dtype")
LORA = ("lora_rank", "lora_targets")


def _row(rng: random.Random, columns: list[str]) -> list[str]:
    """A row of one kind (train, finetune or infer) with its own flags; one row in three has
    one or two bad values (another kind's flag, an unknown name, a rule broken, not a number),
    and now and then a row is short (its last cells are empty)."""
    kind = rng.choice(("train", "finetune", "infer", ""))
    row = {dest: rng.choice(good) for dest, (good, _) in VALUES.items()}
    row["task"] = kind
    skip = set(INFER_ONLY if kind != "infer" else TRAIN_ONLY)
    if kind != "finetune" or rng.random() < 0.3:
        skip |= set(LORA)
    for dest in skip:
        row[dest] = ""
    if rng.random() < 0.35:
        for _ in range(rng.choice((1, 1, 2))):
            dest = rng.choice([*VALUES, "task"])
            row[dest] = "trian" if dest == "task" else rng.choice(VALUES[dest][1])
    cells = [row[column.replace("-", "_").lower()] for column in columns]
    if rng.random() < 0.03:
        cells = cells[: rng.randrange(1, len(cells))]
    return cells


def _write(path: Path, columns: list[str], rows: list[list[str]], blank_lines: bool) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for index, row in enumerate(rows):
            writer.writerow(row)
            if blank_lines and index % 97 == 0:
                handle.write("\r\n")  # a blank line: skipped


def _both(tmp_path: Path, grid: Path) -> bytes:
    fast, reference = tmp_path / "fast.csv", tmp_path / "reference.csv"
    counts_fast = run_grid(grid, fast)
    counts_reference = run_grid(grid, reference, reference=True)
    assert counts_fast == counts_reference
    assert fast.read_bytes() == reference.read_bytes()
    return fast.read_bytes()


ALL_COLUMNS = ["model", "arch", "task", "precision", "gpu", "quant", "optimizer", "bytes-preset",
               "tp", "pp", "dp", "gpus", "zero", "sp", "flash_attention", "micro_batch",
               "seq-len", "grad_accum", "recompute", "lora_rank", "lora-targets", "batch",
               "context", "prompt_tokens", "output-tokens", "kv_dtype"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_path_matches_the_reference_on_a_varied_grid(tmp_path: Path, seed: int) -> None:
    shutil.copy(ARCH / "gpt2.json", tmp_path / "gpt2.json")  # arch paths are grid-relative
    rng = random.Random(seed)
    columns = list(ALL_COLUMNS)
    if seed == 1:
        columns = [c.replace("_", "-") for c in columns]  # micro-batch, prompt-tokens, …
    if seed == 2:
        columns = [c.upper() for c in columns]
    rows = [_row(rng, columns) for _ in range(2500)]
    rows += rows[:200]  # repeated rows
    grid = tmp_path / "grid.csv"
    _write(grid, columns, rows, blank_lines=True)
    out = _both(tmp_path, grid).decode()
    results = list(csv.DictReader(out.splitlines()))
    errors = sum(1 for row in results if row["error"])
    # Both kinds of row are well represented.
    assert 300 < errors < len(results) - 300
    assert sum(1 for row in results if row["verdict"] and row["kv_cache_bytes"] != "0") > 100
    messages = "\n".join(row["error"] for row in results)
    for needle in ("did you mean", "--tp", "--gpus", "--lora-targets", "whole number",
                   "does not apply", "--seq-len", "--context", "give model or arch",
                   "must be a whole number in"):
        assert needle in messages


@pytest.mark.parametrize("seed", [3, 4])
def test_fast_path_matches_the_reference_on_a_varied_grid_read_by_pandas(tmp_path: Path,
                                                                        seed: int) -> None:
    """The same random grids without quoted cells: the C parser reads them."""
    shutil.copy(ARCH / "gpt2.json", tmp_path / "gpt2.json")
    rng = random.Random(seed)
    rows = [[cell if "," not in cell else "q_proj" for cell in _row(rng, ALL_COLUMNS)]
            for _ in range(2500)]
    grid = tmp_path / "grid.csv"
    _write(grid, ALL_COLUMNS, rows, blank_lines=seed == 3)
    assert pandas_cells(grid.read_text(encoding="utf-8")) is not None
    results = list(csv.DictReader(_both(tmp_path, grid).decode().splitlines()))
    assert 300 < sum(1 for row in results if row["error"]) < len(results) - 300


def test_fast_path_matches_on_named_bad_rows(tmp_path: Path) -> None:
    grid = tmp_path / "grid.csv"
    grid.write_text(
        "model,task,tp,pp,dp,gpus,micro_batch,seq_len,lora_rank,lora_targets,batch,context,gpu\n"
        "llama-2-7b,train,2,,,,2,,,,,,A100\n"            # fits (or not): a fast row
        "lama-2-7b,train,1,,,,1,,,,,,H100\n"              # unknown model
        "llama-2-7b,train,3,,,,1,,,,,,H100\n"             # tp does not divide the heads
        "llama-2-7b,train,2,2,2,16,1,,,,,,H100\n"         # gpus != dp·tp·pp
        "llama-2-7b,train,2,2,,10,1,,,,,,H100\n"          # gpus not a multiple of tp·pp
        "llama-2-7b,finetune,,,,,,,8,\"query,value\",,,H100\n"  # LoRA target missing
        "llama-2-7b,finetune,,,,,,,8,\"q_proj,v_proj\",,,H100\n"
        "llama-2-7b,train,x,,,,1,,,,,,H100\n"             # non-numeric
        "llama-2-7b,,,,,,,,,,,,\n"                        # every default
        "llama-2-7b,infer,,,,,,,,,8,4096,\n"
        "llama-2-7b,infer,,,,,,,,,8,9000,\n"              # context beyond the positions
        "llama-2-7b,infer,,,,,2,,,,,,\n"                  # a training flag on an infer row
        "llama-2-7b,train,,,,,,9000,,,,,\n"               # seq-len beyond the positions
        "llama-2-7b,train\n",                             # a short row
        encoding="utf-8")
    out = _both(tmp_path, grid).decode()
    rows = list(csv.DictReader(out.splitlines()))
    assert rows[0]["error"] == ""
    assert "did you mean" in rows[1]["error"]
    assert "--tp" in rows[2]["error"]
    assert "--gpus" in rows[3]["error"]
    assert "--gpus" in rows[4]["error"]
    assert "query" in rows[5]["error"]
    assert rows[6]["error"] == ""
    assert "whole number" in rows[7]["error"]
    assert rows[8]["error"] == ""
    assert rows[9]["error"] == ""
    assert "--context" in rows[10]["error"]
    assert "--micro-batch" in rows[11]["error"]
    assert "--seq-len" in rows[12]["error"]
    assert rows[13]["error"] == ""


def test_fast_path_matches_on_the_benchmark_grid(tmp_path: Path) -> None:
    rng = random.Random(3)
    models = ("llama-2-7b", "llama-3-8b", "llama-2-70b", "mixtral-8x7b", "qwen2.5-72b",
              "mistral-7b")
    rows = [[rng.choice(models), "train", rng.choice("1248"), rng.choice("124"),
             rng.choice(("1", "2", "8", "64")), str(rng.randrange(4)), str(rng.randrange(1, 9)),
             rng.choice(("512", "1024", "2048")), rng.choice(("none", "selective", "full")),
             rng.choice(("H100", "A100-80GB"))] for _ in range(3000)]
    grid = tmp_path / "grid.csv"
    _write(grid, ["model", "task", "tp", "pp", "dp", "zero", "micro_batch", "seq_len",
                  "recompute", "gpu"], rows, blank_lines=False)
    _both(tmp_path, grid)


@pytest.mark.parametrize("content", [
    "model,tp\nnope,1\nnope,2\n",                   # every row bad
    "model,tp\n\n\ngpt2,1\n\n",                     # blank lines
    "model,lora_targets\ngpt2,\"c_attn,\"\"x\"\"\"\n",  # quoted cells
    "model,task,batch\ngpt2,infer,1\r\ngpt2,infer,2\r\n",
])
def test_fast_path_matches_on_small_grids(tmp_path: Path, content: str) -> None:
    grid = tmp_path / "grid.csv"
    grid.write_text(content, encoding="utf-8")
    _both(tmp_path, grid)


def test_fast_reader_reports_the_reference_error(tmp_path: Path) -> None:
    grid = tmp_path / "grid.csv"
    grid.write_text("model,tp\ngpt2,1\n\n\"gpt2\n\",1\ngpt2,1,2\n", encoding="utf-8")
    messages = []
    for reference in (False, True):
        with pytest.raises(InputError, match="has more cells") as info:
            run_grid(grid, tmp_path / "out.csv", reference=reference)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "line 6: has more cells than the 2 columns" in messages[0]
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("content", [
    'model,lora_targets,task,lora_rank\ngpt2,"c_attn,c_proj",finetune,8\n'
    'gpt2,"c_attn,""x""",finetune,8\ngpt2,"c_attn\nc_proj",finetune,8\n',  # quoted cells
    "model,tp\n  \ngpt2,1\n\t\ngpt2,2\n",            # whitespace-only lines are rows in csv
    "model,tp\rgpt2,1\rgpt2,2\r",                    # CR line ends
    "model,task,gpu\r\n gpt2 ,train, H100 \r\nGPT2,train,h100\r\n",  # spaces, case
    "model,tp,\ngpt2,1,\n",                          # a trailing empty column (an error)
    "\ufeffmodel,tp\ngpt2,1\n",                      # a BOM
    "model,gpu\ngpt2,H100 – SXM\nllama-2-7b,H100😀\n",  # unicode cells and messages
    "model,gpu\ngpt2,\"H100\"\"\"\n",                # a quote inside a message
    "model\ngpt2\n\n\n",                              # one column, blank lines
    "model,tp,pp\ngpt2\ngpt2,1\ngpt2,1,1",           # short rows, no final newline
])
def test_fast_path_matches_on_every_kind_of_csv(tmp_path: Path, content: str) -> None:
    """Cells whose text the C reader must not change (or that it must leave to csv.reader)."""
    grid = tmp_path / "grid.csv"
    grid.write_bytes(content.encode("utf-8"))
    messages = []
    for reference in (False, True):
        try:
            run_grid(grid, tmp_path / f"{reference}.csv", reference=reference)
        except CostsimError as exc:
            messages.append(str(exc))
    assert len(messages) in (0, 2)
    if messages:
        assert messages[0] == messages[1]
        assert "unknown grid column ''" in messages[0]
    else:
        assert (tmp_path / "False.csv").read_bytes() == (tmp_path / "True.csv").read_bytes()


@pytest.mark.parametrize("content", ["model,tp\n", "model,tp", "model,tp\r\n\r\n\r\n"])
def test_a_header_only_grid_has_no_rows(tmp_path: Path, content: str) -> None:
    grid = tmp_path / "grid.csv"
    grid.write_text(content, encoding="utf-8")
    for reference in (False, True):
        with pytest.raises(InputError, match="has a header but no rows"):
            run_grid(grid, tmp_path / "out.csv", reference=reference)
        assert not (tmp_path / "out.csv").exists()


GPT2_CONFIG = ('{"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, '
               '"n_positions": 1024, "vocab_size": 50257}')
BAD_CONFIGS = {
    "nan.json": GPT2_CONFIG.replace('"n_layer": 12', '"n_layer": NaN'),
    "inf.json": GPT2_CONFIG.replace('"n_embd": 768', '"n_embd": Infinity'),
    "huge.json": GPT2_CONFIG.replace('"vocab_size": 50257', '"vocab_size": 1e400'),
    "negative.json": GPT2_CONFIG.replace('"n_layer": 12', '"n_layer": -12'),
    "absurd.json": GPT2_CONFIG.replace('"n_layer": 12', '"n_layer": 1000000000000'),
    "fraction.json": GPT2_CONFIG.replace('"n_embd": 768', '"n_embd": 7.5'),
    "text.json": GPT2_CONFIG.replace('"n_head": 12', '"n_head": "twelve"'),
    "broken.json": "{not json",
    "list.json": "[1, 2]",
}


def test_bad_arch_rows_never_lose_the_other_rows(tmp_path: Path) -> None:
    """Issue 8 item 1: one bad config.json (non-finite, huge, negative, absurd, not JSON, a
    folder, missing) gives its rows an error cell; every other row still gets its results."""
    (tmp_path / "ok.json").write_text(GPT2_CONFIG, encoding="utf-8")
    for name, text in BAD_CONFIGS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "folder.json").mkdir()
    bad = [*BAD_CONFIGS, "folder.json", "missing.json"]
    lines = ["arch,task,micro_batch"]
    for name in bad:
        lines += ["ok.json,train,1", f"{name},train,1", f"{name},train,2"]
    lines += ["ok.json,infer,"]
    grid = tmp_path / "grid.csv"
    grid.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = list(csv.DictReader(_both(tmp_path, grid).decode().splitlines()))
    assert len(rows) == 3 * len(bad) + 1
    for row in rows:
        if row["arch"] == "ok.json":
            assert row["error"] == ""
            assert row["verdict"] == "fits"
            assert row["params_total"] == "124439808"  # GPT-2 small
        else:
            assert row["error"], row
            # the config reader checks every value at the boundary: a clear message, not a bug
            assert not row["error"].startswith("internal error"), row
            assert row["verdict"] == row["total_bytes"] == ""


@pytest.mark.usefixtures("gpt2_rows_hit_a_bug")
def test_an_unexpected_exception_is_the_rows_error_and_not_fatal(tmp_path: Path) -> None:
    """A bug hit by one row (anything but a CostsimError) becomes that row's 'internal error'
    cell and is counted; the other rows are complete."""
    grid = tmp_path / "grid.csv"
    grid.write_text("model,tp\nllama-2-7b,1\ngpt2,1\nllama-2-7b,2\ngpt2,x\n", encoding="utf-8")
    fast, reference = tmp_path / "fast.csv", tmp_path / "reference.csv"
    counts = run_grid(grid, fast)
    assert counts == run_grid(grid, reference, reference=True) == (4, 2, 1)
    assert fast.read_bytes() == reference.read_bytes()
    rows = list(csv.DictReader(fast.read_text(encoding="utf-8").splitlines()))
    assert rows[1]["error"] == ("internal error (a costsim bug, please report it with this row): "
                                "ZeroDivisionError: division by zero")
    assert "whole number" in rows[3]["error"]  # a bad number is still the user's error
    assert rows[0]["verdict"]
    assert rows[2]["verdict"]


def test_a_result_beyond_int64_is_an_error_not_garbage(tmp_path: Path) -> None:
    """A row whose bytes do not fit a 64-bit whole number used to be written as
    -9223372036854775808; it gets an out-of-range error instead."""
    grid = tmp_path / "grid.csv"
    # every size within its flag's range (docs/inputs.md), yet 10^5 x 131,072-token sequences
    # of the 405B without flash attention hold ~10^20 bytes of attention scores
    grid.write_text("model,task,micro_batch,seq_len,flash_attention\n"
                    "llama-3.1-405b,train,100000,131072,false\n"
                    "llama-2-7b,train,1,4096,true\n", encoding="utf-8")
    rows = list(csv.DictReader(_both(tmp_path, grid).decode().splitlines()))
    assert rows[0]["error"].startswith("the result is out of range: more than 2^63 bytes")
    assert rows[0]["total_bytes"] == rows[0]["params_total"] == ""
    assert rows[1]["error"] == ""
    assert int(rows[1]["total_bytes"]) > 0


@pytest.mark.parametrize("reference", [False, True])
def test_no_output_cell_can_run_in_a_spreadsheet(tmp_path: Path, reference: bool) -> None:
    """An input cell echoed back (or an error message) that starts like a formula is written
    as text, a quote in front (OWASP's CSV-injection rule), on both paths; numbers stay."""
    grid = tmp_path / "in.csv"
    grid.write_text('model,tp\n=HYPERLINK("http://x"),1\ngpt2,-1+2\n@SUM(A1),1\ngpt2,1\n',
                    encoding="utf-8")
    out = tmp_path / "out.csv"
    run_grid(grid, out, reference=reference)
    with out.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["model"], r["tp"]) for r in rows] == [
        ("'=HYPERLINK(\"http://x\")", "1"), ("gpt2", "'-1+2"), ("'@SUM(A1)", "1"), ("gpt2", "1")]
    for row in rows:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row.values())
    assert rows[3]["verdict"] == "fits"
