"""Further published memory figures (tests/data/memory_cases_extra.csv, a source in each row),
all through ``costsim memory`` with default assumptions.

* P2: exact parameter counts of the architectures added for the extra training rows.
* F1–F5: llm-foundry benchmark runs that completed: the memory engine must not call their
  published configuration (FSDP full shard, micro-batch, checkpointing) out of memory. These
  bound the estimate from above only.
* B1: the BLOOM-176B replica's published per-GPU figure (about 60 GB), both ways.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.memory.conftest import run_json

DATA = Path(__file__).resolve().parents[1] / "data"
ARCH = DATA / "architectures"
with (DATA / "memory_cases_extra.csv").open(encoding="utf-8") as _handle:
    CASES = {row["id"]: row for row in csv.DictReader(_handle)}


EXACT_PARAMS = {"mpt-1b": 1315950592, "mpt-3b": 2651837440, "mpt-13b": 12853954560,
                "mpt-30b": 29975214080, "mpt-70b": 64862437376, "bloom-176b": 176247271424}
PUBLISHED_BILLIONS = {"megatron-gpt-39b": 39.1, "megatron-gpt-530b": 529.6}


@pytest.mark.parametrize("name", sorted(EXACT_PARAMS))
def test_p2_exact_parameter_counts(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "--arch", str(ARCH / f"{name}.json"))
    assert payload["params_total"] == EXACT_PARAMS[name]


@pytest.mark.parametrize("name", sorted(PUBLISHED_BILLIONS))
def test_p2_megatron_parameter_counts(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "--arch", str(ARCH / f"{name}.json"))
    params = payload["params_total"]
    assert isinstance(params, int)
    assert params / 1e9 == pytest.approx(PUBLISHED_BILLIONS[name], abs=0.05)


# id -> (architecture, GPU, data-parallel GPUs, micro-batch, recompute): the published run.
COMPLETED_RUNS = {
    "F1": ("mpt-13b", "A100-80GB", 8, 2, "none"),
    "F2": ("mpt-3b", "A100-80GB", 8, 10, "none"),
    "F3": ("mpt-1b", "A100-80GB", 8, 14, "none"),
    "F4": ("mpt-30b", "H100", 32, 14, "full"),
    "F5": ("mpt-70b", "H100", 64, 8, "full"),
    "F6": ("mpt-7b-2k", "A100-80GB", 8, 6, "none"),
    "F7": ("mpt-7b-2k", "H100", 8, 6, "none"),
}


@pytest.mark.parametrize("case_id", sorted(COMPLETED_RUNS))
def test_completed_fsdp_runs_are_not_called_out_of_memory(
        case_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    name, gpu, dp, micro, recompute = COMPLETED_RUNS[case_id]
    payload = run_json(capsys, "--arch", str(ARCH / f"{name}.json"), "--gpu", gpu,
                       "--precision", "bf16", "--zero", "3", "--dp", str(dp),
                       "--micro-batch", str(micro), "--seq-len", "2048",
                       "--recompute", recompute)
    assert payload["verdict"] in ("fits", "tight"), (case_id, payload["per_gpu_bytes"])


BLOOM_REPORTED_BYTES = 60e9


def test_b1_bloom_176b_replica_per_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "--arch", str(ARCH / "bloom-176b.json"), "--gpu", "A100-80GB",
                       "--precision", "bf16", "--tp", "4", "--pp", "12", "--dp", "8",
                       "--zero", "1", "--micro-batch", "2", "--grad-accum", "128",
                       "--seq-len", "2048", "--recompute", "full")
    per_gpu = payload["per_gpu_bytes"]
    assert isinstance(per_gpu, dict)
    assert payload["verdict"] == "fits"
    assert per_gpu["total"] == pytest.approx(BLOOM_REPORTED_BYTES, rel=0.25)


def test_every_case_has_a_check() -> None:
    assert set(CASES) == {"P2", *COMPLETED_RUNS, "B1"}
