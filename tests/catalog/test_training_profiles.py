"""Readers of measured training runs on samples written in each tool's real output format:
the training run CSV (good and bad rows), Megatron-LM / NeMo iteration lines (warm-up, ANSI
colour codes, a garbled line), NeMo 1 progress bars, torchtitan metric lines and HF Trainer's
trainer_state.json."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from costsim.catalog.training_fields import FRAMEWORK_ALIASES
from costsim.catalog.training_profiles import read_training_profile
from costsim.cli.estimate_cmd import FRAMEWORK_ALIASES as CLI_ALIASES
from costsim.domain.measurements import RunDetails
from costsim.domain.precision import Dtype
from costsim.domain.workload import TrainingFramework
from costsim.errors import InputError

HEADER = "model,gpu,gpus,framework,precision,seq_len,global_batch_tokens,tokens_per_s," \
         "step_time_s,mfu,source\n"
LOG = RunDetails(model="llama-3-8b", gpu="H100", gpus=64, seq_len=8192)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _megatron(step: int, ms: float, batch: int = 512, colour: bool = False) -> str:
    # Megatron-LM training_log(): a timestamp, then " | "-separated fields
    line = (f" [2025-03-02 09:14:{step % 60:02d}] iteration {step:8d}/    2000 | consumed "
            f"samples: {step * batch:12d} | elapsed time per iteration (ms): {ms:.1f} | "
            f"throughput per GPU (TFLOP/s/GPU): 401.2 | learning rate: 3.000000E-04 | global "
            f"batch size: {batch:5d} | lm loss: 7.1E+00 | loss scale: 1.0 | number of skipped "
            "iterations:   0 | number of nan iterations:   0 |")
    return f"\x1b[32m{line}\x1b[0m" if colour else line


def test_csv_rows_read_with_nvidia_smi_names_aliases_and_percent_mfu(tmp_path: Path) -> None:
    path = _write(tmp_path, "runs.csv", HEADER
                  + "llama-3-8b,NVIDIA H100 80GB HBM3,64,nemo,bf16,8192,4194304,401000,,,run A\n"
                  + "\n"
                  + "llama-3-8b,H100,128,,,8192,4194304,,5.6,,\n"
                  + "llama-3-8b,H100,8,torchtitan,,8192,,,,41%,\n")
    a, b, c = read_training_profile(path)
    assert (a.gpu, a.gpus, a.framework, a.precision) == ("H100", 64, TrainingFramework.MEGATRON_LM,
                                                         Dtype.BF16)
    assert a.tokens_per_s == 401000
    assert a.source == f"{path} line 2 (run A)"
    assert b.step_time_s == 5.6
    assert b.framework is None
    assert b.source == f"{path} line 4"
    assert c.mfu == pytest.approx(0.41)
    assert c.framework is TrainingFramework.PYTORCH_FSDP


def test_csv_model_config_path_is_relative_to_the_csv(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    config = {"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 4,
              "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 32000,
              "max_position_embeddings": 2048}
    (folder / "tiny.json").write_text(json.dumps(config))
    path = _write(folder, "runs.csv", "model,gpu,gpus,tokens_per_s\ntiny.json,A100,8,90000\n")
    (point,) = read_training_profile(path)
    assert point.architecture.hidden_size == 512


@pytest.mark.parametrize(("row", "fragment"), [
    ("llama-3-8b,H100,-8,,,,,1000,,,", "gpus: must be > 0"),
    ("llama-3-8b,H100,8,,,,,nan,,,", "expected a finite number"),
    ("llama-3-8b,H100,8.5,,,,,1000,,,", "whole number"),
    ("llama-3-8b,H1000,8,,,,,1000,,,", "unknown GPU 'H1000'; did you mean 'H100'"),
    ("lama-3-8b,H100,8,,,,,1000,,,", "did you mean 'llama-3-8b'"),
    ("llama-3-8b,H100,8,,,,,,,1.5,", "mfu: must be in (0, 1]"),
    ("llama-3-8b,H100,8,,,,,,,0.4,", "an MFU needs seq_len"),
    ("llama-3-8b,H100,8,,,,,,2.0,,", "needs global_batch_tokens"),
    ("llama-3-8b,H100,8,,,,,,,,", "a run needs tokens_per_s"),
    ("llama-3-8b,H100,,,,,,1000,,,", "gpus: a value is required"),
    ("llama-3-8b,V100,8,,bf16,,,1000,,,", "V100 has no bf16 compute"),
    ("llama-3-8b,H100,8,jax,,,,1000,,,", "unknown framework 'jax'"),
])
def test_a_bad_csv_row_names_file_line_and_rule(tmp_path: Path, row: str,
                                                fragment: str) -> None:
    good = "llama-3-8b,H100,8,,,,,1000,,,\n"
    path = _write(tmp_path, "runs.csv", HEADER + good + row + "\n")
    with pytest.raises(InputError) as error:
        read_training_profile(path)
    assert f"{path}:3" in str(error.value)
    assert fragment in str(error.value)


def test_csv_header_problems(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="missing required column"):
        read_training_profile(_write(tmp_path, "a.csv", "model,gpu,tokens_per_s\nx,H100,1\n"))
    with pytest.raises(InputError, match="unknown column; did you mean 'tokens_per_s'"):
        read_training_profile(_write(tmp_path, "b.csv", "model,gpu,gpus,tokens_per_sec\n"))
    with pytest.raises(InputError, match="need a tokens_per_s, step_time_s or mfu column"):
        read_training_profile(_write(tmp_path, "c.csv", "model,gpu,gpus\nllama-3-8b,H100,8\n"))


def test_megatron_log_drops_warm_up_skips_a_garbled_line_and_takes_the_median(
        tmp_path: Path) -> None:
    times = [30000.0] + [10000.0 + 10 * i for i in range(1, 20)]
    times[10] = 18000.0  # a checkpoint save: the median does not move with it
    lines = ["> building GPT model ...", "NCCL INFO Bootstrap : Using eth0"]
    lines += [_megatron(i + 1, ms, colour=i % 2 == 0) for i, ms in enumerate(times)]
    lines.insert(8, "[rank3] iteration       7/    2000 | consumed samples: 35 | elapsed time "
                    "per itera[rank5] tion (ms): 1x.2 |")
    (point,) = read_training_profile(_write(tmp_path, "train.log", "\n".join(lines) + "\n"),
                                     LOG)
    steady = times[2:]  # 20 steps: the first 2 (10 %) are warm-up
    expected = 512 * 8192 / (statistics.median(steady) / 1000)
    assert point.tokens_per_s == pytest.approx(expected)
    assert point.framework is TrainingFramework.MEGATRON_LM
    assert point.global_batch_tokens == 512 * 8192
    assert point.gpus == 64
    assert point.gpu == "H100"
    assert "median of 18 steps 3-20" in point.source
    assert "1 unreadable line(s) skipped" in point.source


def test_megatron_batch_ramp_up_steps_are_not_steady(tmp_path: Path) -> None:
    lines = [_megatron(i, 5000.0, batch=256) for i in range(1, 11)]
    lines += [_megatron(i, 10000.0, batch=512) for i in range(11, 21)]
    (point,) = read_training_profile(_write(tmp_path, "ramp.log", "\n".join(lines)), LOG)
    assert point.tokens_per_s == pytest.approx(512 * 8192 / 10.0)


def test_nemo2_lines_give_step_timing_and_batch(tmp_path: Path) -> None:
    lines = [f"[NeMo I 2025-01-01 nemo_logging:393] Training epoch 0, iteration {i}/99 | lr: "
             f"1.5e-05 | global_batch_size: 128 | global_step: {i} | reduced_train_loss: 6.2 | "
             f"train_step_timing in s: {9.0 if i == 0 else 3.2} | consumed_samples: "
             f"{(i + 1) * 128}" for i in range(12)]
    details = RunDetails(model="llama-3-8b", gpu="H100", gpus=16, seq_len=8192)
    (point,) = read_training_profile(_write(tmp_path, "nemo.out", "\n".join(lines)), details)
    assert point.tokens_per_s == pytest.approx(128 * 8192 / 3.2)


def test_nemo1_progress_bars_give_the_batch_from_consumed_samples(tmp_path: Path) -> None:
    bars = "\r".join(
        f"Epoch 0: : {i * 2}%|##| {i}/50 [01:{i:02d}<00:00, reduced_train_loss=6.1, "
        f"global_step={i}.0, consumed_samples={i * 1536}.0, train_step_timing in s="
        f"{20.0 if i == 1 else 5.9}, val_loss=6.2]" for i in range(1, 11))
    details = RunDetails(model="llama-3-70b", gpu="H100", gpus=128, seq_len=2048)
    (point,) = read_training_profile(_write(tmp_path, "nemo1.out", bars + "\n"), details)
    assert point.tokens_per_s == pytest.approx(1536 * 2048 / 5.9)


def test_torchtitan_tps_is_per_gpu_and_validation_lines_are_left_out(tmp_path: Path) -> None:
    lines = [f"[rank0]:[titan] 2025-03-02 10:00:{i:02d},412 - root - INFO - \x1b[31mstep: "
             f"{i:2}  \x1b[32mloss:  7.9876  \x1b[33mmemory: 30.52GiB(38.62%)  \x1b[34mtps: "
             f"{2000 if i == 1 else 6543:,}  \x1b[36mtflops: 301.20  \x1b[35mmfu: 30.45%\x1b[39m"
             for i in range(1, 11)]
    lines.append("[rank0]:[titan] validate step: 10  loss: 7.1  memory: 30.52GiB(38.62%)  "
                 "tps: 99,999")
    details = RunDetails(model="llama-3-8b", gpu="H100", gpus=8)
    (point,) = read_training_profile(_write(tmp_path, "titan.log", "\n".join(lines)), details)
    assert point.tokens_per_s == pytest.approx(6543 * 8)
    assert point.framework is TrainingFramework.PYTORCH_FSDP
    assert point.seq_len is None


def _trainer_state(tokens_seen: int = 0) -> dict[str, object]:
    return {"epoch": 1.0, "global_step": 100, "max_steps": 100, "logging_steps": 10,
            "num_input_tokens_seen": tokens_seen, "train_batch_size": 4, "total_flos": 1e18,
            "log_history": [
                {"epoch": 0.1, "grad_norm": 1.2, "learning_rate": 2e-5, "loss": 2.1, "step": 10},
                {"epoch": 1.0, "step": 100, "total_flos": 1e18, "train_loss": 1.9,
                 "train_runtime": 1000.0, "train_samples_per_second": 12.8,
                 "train_steps_per_second": 0.1}]}


def test_trainer_state_whole_run_average(tmp_path: Path) -> None:
    path = _write(tmp_path, "trainer_state.json", json.dumps(_trainer_state()))
    details = RunDetails(model="llama-3-8b", gpu="A100-80GB", gpus=8, seq_len=4096)
    (point,) = read_training_profile(path, details)
    assert point.tokens_per_s == pytest.approx(12.8 * 4096)
    assert point.framework is TrainingFramework.HF_TRAINER
    counted = _write(tmp_path, "counted.json", json.dumps(_trainer_state(2_000_000)))
    (point,) = read_training_profile(counted, RunDetails(model="llama-3-8b", gpu="A100-80GB",
                                                         gpus=8))
    assert point.tokens_per_s == pytest.approx(2000.0)


@pytest.mark.parametrize(("name", "text", "details", "fragment"), [
    ("a.log", "hello\nworld\n", LOG, "no iteration line found"),
    ("b.log", "\n".join(_megatron(i, 1000.0) for i in range(1, 4)), LOG,
     "only 2 steady step(s)"),
    ("c.log", "\n".join(_megatron(i, 1000.0) for i in range(1, 11)),
     RunDetails(model="llama-3-8b", gpu="H100"), "give --gpus"),
    ("d.log", "\n".join(_megatron(i, 1000.0) for i in range(1, 11)),
     RunDetails(gpu="H100", gpus=8, seq_len=4096, where="measurements.training.0"),
     "give measurements.training.0.model"),
    ("e.log", "\n".join(_megatron(i, 1000.0) for i in range(1, 11)),
     RunDetails(model="llama-3-8b", gpu="H100", gpus=8), "give the sequence length"),
    ("f.json", "{\"log_history\": 3}", LOG, "not a Hugging Face trainer_state.json"),
    ("g.json", json.dumps({"log_history": [{"loss": 1.0, "step": 1}]}), LOG,
     "no entry with train_runtime"),
    ("h.json", "{not json", LOG, "not valid JSON"),
])
def test_bad_files_are_refused_whole(tmp_path: Path, name: str, text: str,
                                     details: RunDetails, fragment: str) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(InputError) as error:
        read_training_profile(path, details)
    assert str(path) in str(error.value)
    assert fragment in str(error.value)


def test_framework_aliases_match_the_command_line() -> None:
    assert FRAMEWORK_ALIASES == CLI_ALIASES
