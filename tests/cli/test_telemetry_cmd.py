"""``costsim telemetry``: measured memory and utilization per GPU type, advice, the memory
engine's prediction beside the measured peak, and bad input (docs/telemetry.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Cli

MIB = 2**20
GIB = 2**30
HEADER = "index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"


def _a100_log(tmp_path: Path, utils: list[int], used_mib: list[int],
              name: str = "NVIDIA A100-SXM4-80GB") -> Path:
    """Two GPUs polled together, as nvidia-smi -l writes them."""
    rows = [f"{gpu}, {name}, {u} %, {m + gpu} MiB, 81920 MiB\n"
            for u, m in zip(utils, used_mib, strict=True) for gpu in (0, 1)]
    path = tmp_path / "a100.csv"
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    return path


def _json(cli: Cli, *argv: str) -> dict[str, object]:
    code, out, err = cli("telemetry", *argv, "--json")
    assert code == 0, err
    result: dict[str, object] = json.loads(out)
    return result


def test_json_has_the_documented_keys_per_gpu_type(cli: Cli, tmp_path: Path) -> None:
    path = _a100_log(tmp_path, [0, 50, 100, 50], [1000, 20000, 21000, 20500])
    payload = _json(cli, str(path))
    [gpu] = payload["gpus"]  # type: ignore[misc]
    assert {"gpu", "samples", "peak_memory_used_bytes", "p95_memory_used_bytes",
            "memory_total_bytes", "mean_utilization_pct", "idle_share", "advice"} <= set(gpu)
    assert gpu["gpu"] == "A100-80GB"
    assert gpu["samples"] == 8
    assert gpu["peak_memory_used_bytes"] == 21001 * MIB
    assert gpu["memory_total_bytes"] == 81920 * MIB
    assert gpu["mean_utilization_pct"] == 50.0
    assert gpu["idle_share"] == 0.25
    assert [d["device"] for d in gpu["per_gpu"]] == ["0", "1"]
    assert gpu["per_gpu"][1]["peak_memory_used_bytes"] == 21001 * MIB
    assert "predicted_memory_bytes" not in gpu


def test_advice_names_the_smallest_card_and_idle_cores(cli: Cli, tmp_path: Path) -> None:
    # ~20 GiB peak on an 80 GB card at 20 % mean utilization: the seed's "card too big" case
    path = _a100_log(tmp_path, [10, 20, 30, 20], [20000, 20400, 20480, 20300])
    [gpu] = _json(cli, str(path))["gpus"]  # type: ignore[misc]
    assert gpu["smallest_fitting_gpus"] == ["A10G", "L4"]
    assert gpu["verdict"] == "fits"
    memory, idle = gpu["advice"]
    assert "smallest catalog card that holds the measured peak of 20.00 GiB" in memory
    assert "A10G or L4 (22.35 GiB, usable 21.23 GiB)" in memory
    assert "memory mostly unused" in memory
    assert idle.startswith("cores mostly idle: mean utilization 20.0% is under 30%")


def test_a_busy_right_sized_card_gets_no_idle_advice(cli: Cli, tmp_path: Path) -> None:
    path = _a100_log(tmp_path, [95, 97, 99, 96], [70000, 70500, 70400, 70300])
    [gpu] = _json(cli, str(path))["gpus"]  # type: ignore[misc]
    # the H100's 79.65 GiB is the smallest that holds 68.85 GiB, but it is the same 80 GB class
    assert gpu["smallest_fitting_gpus"] == ["H100", "H100-PCIe"]
    assert len(gpu["advice"]) == 1
    assert gpu["advice"][0].startswith("right-sized for memory")


def test_the_prediction_stands_beside_the_measured_peak(cli: Cli, tmp_path: Path) -> None:
    path = _a100_log(tmp_path, [60, 70, 80, 70], [25000, 26000, 26500, 26200])
    flags = ("--model", "llama-2-7b", "--task", "finetune", "--lora-rank", "16",
             "--micro-batch", "1", "--seq-len", "2048")
    payload = _json(cli, str(path), *flags)
    code, out, _ = cli("memory", *flags, "--gpu", "A100-80GB", "--json")
    assert code == 0
    predicted = json.loads(out)["per_gpu_bytes"]["total"]
    [gpu] = payload["gpus"]  # type: ignore[misc]
    assert payload["model"] == "llama-2-7b"
    assert gpu["predicted_memory_bytes"] == predicted
    assert gpu["prediction_gap_bytes"] == 26501 * MIB - predicted
    assert gpu["prediction_gap_pct"] == pytest.approx(100 * (26501 * MIB - predicted) / predicted)
    assert gpu["advice"][-1].startswith("memory engine: llama-2-7b finetune needs 24.23 GiB")
    # text: the prediction and the gap are columns of the table
    code, out, _ = cli("telemetry", str(path), *flags)
    assert code == 0
    assert "predicted GiB" in out
    assert "24.23" in out


def test_text_output_rounds_gib_and_shares(cli: Cli, tmp_path: Path) -> None:
    path = _a100_log(tmp_path, [0, 50, 100, 50], [1000, 20000, 21000, 20500])
    code, out, _ = cli("telemetry", str(path))
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("A100-80GB "))
    assert row.split() == ["A100-80GB", "2", "8", "20.51", "20.51", "80.00", "50.0%", "25.0%"]
    assert "upper bound of what the job needs" in out


def test_types_are_reported_apart_and_a_card_outside_the_catalog_is_kept(
        cli: Cli, tmp_path: Path) -> None:
    a100 = _a100_log(tmp_path, [50, 50], [1000, 2000])
    h800 = tmp_path / "h800.csv"
    h800.write_text(HEADER + "0, NVIDIA H800, 40 %, 3000 MiB, 81559 MiB\n", encoding="utf-8")
    gpus = _json(cli, str(a100), str(h800))["gpus"]
    assert [g["gpu"] for g in gpus] == ["A100-80GB", "NVIDIA H800"]  # type: ignore[union-attr,index]
    h800_entry = gpus[1]  # type: ignore[index]
    assert h800_entry["in_catalog"] is False
    assert "not in the catalog" in h800_entry["advice"][0]


DMON = ("#Entity   GPUTL           FBUSD           FBTTL\n"
        "ID\n"
        "GPU 0     90              60000           81559\n"
        "GPU 1     N/A             61000           81559\n")


def test_dcgmi_needs_a_gpu_name_from_the_flag(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "dmon.txt"
    path.write_text(DMON, encoding="utf-8")
    code, out, err = cli("telemetry", str(path))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "dmon.txt: line 3: the log names no GPU; give --gpu NAME" in err
    [gpu] = _json(cli, str(path), "--gpu", "NVIDIA H100 80GB HBM3")["gpus"]  # type: ignore[misc]
    assert gpu["gpu"] == "H100"
    assert gpu["samples"] == 2
    assert gpu["mean_utilization_pct"] == 90.0
    assert gpu["peak_memory_used_bytes"] == 61000 * MIB


def test_garbled_rows_are_listed_on_stderr_and_the_rest_reported(cli: Cli,
                                                                 tmp_path: Path) -> None:
    path = tmp_path / "gpu.csv"
    path.write_text(HEADER + "0, NVIDIA L4, 50 %, 1000 MiB, 22888 MiB\n"
                    "0, NVIDIA L4, x %, 1000 MiB, 22888 MiB\n"
                    "0, NVIDIA L4, 5", encoding="utf-8")
    code, out, err = cli("telemetry", str(path), "--json")
    assert code == 0
    assert f"costsim telemetry: {path} line 3: utilization.gpu: 'x %' is not a number" in err
    assert f"costsim telemetry: {path} line 4: 3 cells where the header has 5" in err
    payload = json.loads(out)
    assert payload["gpus"][0]["samples"] == 1
    assert [p["line"] for p in payload["files"][0]["problems"]] == [3, 4]


@pytest.mark.parametrize(("argv", "message"), [
    (["missing.csv"], "missing.csv: cannot read the file"),
    (["{log}", "--micro-batch", "4"], "--micro-batch: describes the job for the memory "
                                      "engine's prediction: it needs --model or --arch"),
    (["{log}", "--gpu", "H100"], "the log names 'NVIDIA A100-SXM4-80GB' (A100-80GB) but --gpu "
                                 "says H100"),
    (["{log}", "--gpu", "H1OO"], "unknown GPU 'H1OO'"),
    (["{noheader}"], "is not an nvidia-smi CSV header"),
    (["{log}", "--columns", " , "], "--columns: no field names"),
    (["{log}", "--model", "llama-2-7b", "--tp", "3"], "--tp"),
    (["{log}", "{log}"], "given twice"),
])
def test_bad_input_is_one_line_and_exit_2(cli: Cli, tmp_path: Path, argv: list[str],
                                          message: str) -> None:
    log = _a100_log(tmp_path, [50], [1000])
    noheader = tmp_path / "noheader.csv"
    noheader.write_text("0, NVIDIA L4, 50 %, 1000 MiB\n", encoding="utf-8")
    argv = [a.format(log=log, noheader=noheader) for a in argv]
    code, out, err = cli("telemetry", *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_noheader_csv_with_columns(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "noheader.csv"
    path.write_text("0, NVIDIA L4, 50 %, 10000 MiB\n1, NVIDIA L4, 0 %, [N/A]\n",
                    encoding="utf-8")
    [gpu] = _json(cli, str(path), "--columns", "index,name,utilization.gpu,memory.used"
                  )["gpus"]  # type: ignore[misc]
    assert gpu["gpu"] == "L4"
    assert gpu["samples"] == 2
    assert gpu["peak_memory_used_bytes"] == 10000 * MIB
    assert gpu["memory_total_bytes"] == 22886 * MIB  # the log has none: the catalog's capacity


def test_inference_task_uses_the_inference_cap(cli: Cli, tmp_path: Path) -> None:
    path = _a100_log(tmp_path, [50, 50], [20000, 20000])
    train = _json(cli, str(path))
    infer = _json(cli, str(path), "--task", "infer")
    assert train["headroom_policy"]["utilization_cap"] == 0.95  # type: ignore[index]
    assert infer["headroom_policy"]["utilization_cap"] == 0.90  # type: ignore[index]
    assert train["gpus"][0]["smallest_fitting_gpus"] == ["A10G", "L4"]  # type: ignore[index]
    assert "L4" not in infer["gpus"][0]["smallest_fitting_gpus"]  # type: ignore[index]


def test_the_worked_examples_in_the_docs_are_what_the_command_prints(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).parents[2]
    monkeypatch.chdir(root)
    text = (root / "docs" / "telemetry.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0] for block in text.split("```console\n")[1:]]
    assert len(blocks) == 2
    for block in blocks:
        command, _, expected = block.partition("\n")
        assert command.startswith("$ costsim telemetry ")
        code, out, _ = cli(*command.split()[2:])
        assert code == 0
        assert out == expected
