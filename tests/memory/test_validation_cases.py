"""Every row of tests/data/memory_cases.csv (copied from the shared validation folder; each row
names its source) as a test: ``api`` rows through the engine, ``cli`` rows through the command."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from costsim.domain.precision import Dtype
from costsim.domain.workload import BytesPreset, OptimizerKind, Recompute
from costsim.memory.activations import layer_activation_bytes
from costsim.memory.states import model_state_bytes, optimizer_state_bytes
from costsim.units import BYTES_PER_GB, BYTES_PER_GIB, BYTES_PER_MIB
from tests.memory.conftest import run_json

DATA = Path(__file__).resolve().parents[1] / "data"
ARCH = DATA / "architectures"
CASES = {row["id"]: row for row in csv.DictReader((DATA / "memory_cases.csv").open())}


def case_z1(capsys: pytest.CaptureFixture[str]) -> None:
    expected_gb = {0: 120.0, 1: 31.4, 2: 16.6, 3: 1.9}
    for zero, gb in expected_gb.items():
        states = model_state_bytes(7.5e9, dp=64, zero=zero, precision=Dtype.FP16,
                                   preset=BytesPreset.PAPER, optimizer=OptimizerKind.ADAMW)
        assert states.total_bytes / BYTES_PER_GB == pytest.approx(gb, abs=0.1), zero


def _kv(capsys: pytest.CaptureFixture[str], arch: str, *extra: str) -> dict[str, object]:
    return run_json(capsys, "--arch", str(ARCH / arch), "--task", "infer", *extra)


def case_k1(capsys: pytest.CaptureFixture[str]) -> None:
    payload = _kv(capsys, "llama-2-7b.json", "--kv-dtype", "fp16", "--context", "4096")
    assert payload["kv_cache_bytes_per_token"] == 524288
    per_gpu = payload["per_gpu_bytes"]
    assert isinstance(per_gpu, dict)
    assert per_gpu["kv_cache"] == 2 * BYTES_PER_GIB


def case_k2(capsys: pytest.CaptureFixture[str]) -> None:
    payload = _kv(capsys, "llama-3-8b.json")
    assert payload["kv_dtype"] == "bf16"
    assert payload["kv_cache_bytes_per_token"] == 131072


def case_k3(capsys: pytest.CaptureFixture[str]) -> None:
    payload = _kv(capsys, "mistral-7b-v0.1.json", "--context", "32768")
    per_gpu = payload["per_gpu_bytes"]
    assert isinstance(per_gpu, dict)
    assert per_gpu["kv_cache"] == 536870912


def case_a1(capsys: pytest.CaptureFixture[str]) -> None:
    shape = {"seq_len": 2048, "micro_batch": 1, "hidden_size": 12288, "num_heads": 96}
    expected_mib = [
        (1, False, Recompute.NONE, 2736),
        (8, False, Recompute.NONE, 552),
        (8, True, Recompute.NONE, 342),
        (8, False, Recompute.SELECTIVE, 312),
        (8, True, Recompute.SELECTIVE, 102),
        (1, False, Recompute.FULL, 48),
    ]
    for tp, sp, recompute, mib in expected_mib:
        got = layer_activation_bytes(**shape, tp=tp, sp=sp, recompute=recompute)
        assert got == mib * BYTES_PER_MIB, (tp, sp, recompute)


def case_o1(capsys: pytest.CaptureFixture[str]) -> None:
    assert optimizer_state_bytes(3e9, OptimizerKind.ADAMW) == pytest.approx(24e9, rel=0.05)
    assert optimizer_state_bytes(3e9, OptimizerKind.ADAMW_8BIT) == pytest.approx(6e9, rel=0.05)


E1_MEASURED_MIB = 14949


def case_e1(capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "--model", "bert-large-uncased", "--gpu", "V100",
                       "--precision", "fp32", "--optimizer", "adamw", "--micro-batch", "4",
                       "--seq-len", "512")
    per_gpu = payload["per_gpu_bytes"]
    assert isinstance(per_gpu, dict)
    predicted_mib = per_gpu["total"] / BYTES_PER_MIB
    assert predicted_mib == pytest.approx(E1_MEASURED_MIB, rel=0.15)
    assert payload["verdict"] in ("fits", "tight")  # the measured run did fit


def case_l1(capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "--arch", str(ARCH / "llama-2-7b.json"), "--task", "finetune",
                       "--lora-rank", "8", "--lora-targets", "q_proj,v_proj")
    assert payload["params_adapter"] == 4194304
    assert payload["params_trainable"] == 4194304
    assert payload["params_total"] == 6738415616
    assert payload["params_total"] + payload["params_adapter"] == 6742609920  # type: ignore[operator]


CHECKS: dict[str, Callable[[pytest.CaptureFixture[str]], None]] = {
    "Z1": case_z1, "K1": case_k1, "K2": case_k2, "K3": case_k3, "A1": case_a1, "O1": case_o1,
    "E1": case_e1, "L1": case_l1,
}


def test_every_case_has_a_check() -> None:
    assert set(CASES) == set(CHECKS)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_case(case_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert CASES[case_id]["level"] in ("api", "cli")
    CHECKS[case_id](capsys)
