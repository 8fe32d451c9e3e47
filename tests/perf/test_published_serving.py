"""Issue 18's goal for the serving model on tests/data/serving_published.csv: at least 80 % of
the check half within each row's tolerance, and on every small-vs-large card-ratio row the card
the measurement finds cheaper per token is the one the model picks. The rows outside their band
are listed with the reason (docs/performance.md "Published serving figures"): a row that moves
into or out of its band fails here until the list says so."""

from __future__ import annotations

import pytest

from costsim.domain.performance import PerfDefaults
from scripts.published_table import (
    SERVING_CSV,
    ServingCheck,
    cheaper_agrees,
    check_serving,
    read_rows,
)

CHECK_SHARE_GOAL = 0.80
# Rows outside their tolerance with the shipped model, and why (docs/performance.md).
KNOWN_MISSES = {
    "SP13": "fit: TensorRT-LLM v0.5 FP8 prefill of 2,048 tokens on H100 runs at ~40 % of the "
            "FP8 dense peak; one compute efficiency per engine is taken for every precision",
    "SP35": "check: TGI 1.0.3 on 8 x A100-40GB at 20 users: the eager issue time fitted on one "
            "user (SP36) leaves the 20-user step 32 % fast; per-request Python work in TGI's "
            "generate loop is not separated in the fit half",
    "SP37": "check: TGI 1.0.x ran GPTQ column-parallel layers through its slow Triton kernel "
            "(text-generation-inference issue #1098), not modelled",
    "SP40": "check: the A10G/A100 ratio of SP33 and SP35 inherits SP35's miss (the cheaper card, "
            "A10G, agrees)",
    "SP43": "fit: gpt-fast at TP 8 runs 18 % slower than the model's NCCL latency allows",
    "SP45": "check: llama.cpp's Q8_0 kernel reaches ~70 % of the RTX 4090's bandwidth where F16 "
            "reaches 87 %; no per-format kernel efficiency for llama.cpp",
    "SP51": "fit: llama.cpp Q4_K_M on an H100-PCIe moves ~0.56-0.59 TB/s (28-29 % of the "
            "card); the only fit-half llama.cpp quantized row, which cannot separate a 4-bit "
            "kernel factor from an HBM factor, so neither is set from it (one row)",
    "SP52": "check: llama.cpp's Q4_0 kernel on an RTX 3090 moves ~0.45 TB/s (48 %); no per-format "
            "llama.cpp factor (no fit-half figure that separates it)",
    "SP53": "check: as SP52 on an RTX 4090 (~0.53 TB/s, 53 %)",
}


@pytest.fixture(scope="module")
def checks(defaults: PerfDefaults) -> list[ServingCheck]:
    return check_serving(read_rows(SERVING_CSV), defaults)


def test_check_half_meets_the_goal(checks: list[ServingCheck]) -> None:
    rated = [c for c in checks if c.row["split"] == "check" and c.within is not None]
    within = sum(bool(c.within) for c in rated)
    assert len(rated) >= 25
    assert within / len(rated) >= CHECK_SHARE_GOAL, (within, len(rated))


def test_every_card_ratio_row_picks_the_cheaper_card(checks: list[ServingCheck]) -> None:
    ratios = [c for c in checks if c.row["kind"] == "card-ratio"]
    assert len(ratios) >= 9
    assert [c.row["id"] for c in ratios if not cheaper_agrees(c)] == []


def test_rows_outside_their_band_are_the_explained_ones(checks: list[ServingCheck]) -> None:
    outside = {c.row["id"] for c in checks if c.within is False}
    assert outside == set(KNOWN_MISSES)
    assert all(c.predicted for c in checks), [c.row["id"] for c in checks if not c.predicted]


def test_every_row_has_its_before_prediction(checks: list[ServingCheck]) -> None:
    """The "before" column (commit 8c31d1a's model) covers every row, so the table prints each
    row before -> after."""
    from scripts.published_table import BEFORE_CSV, before_after_cells, read_before

    before = read_before()
    assert set(before) == {c.row["id"] for c in checks}
    assert {row["model_commit"] for row in read_rows(BEFORE_CSV)} == {"8c31d1a"}
    cells = before_after_cells(checks, before)
    assert len(cells) == len(checks)
    by_id = {cell[0]: cell for cell in cells}
    # SP62 (torch.compile int4 on an H100) moved into its band with the kernel's bandwidth factor
    assert by_id["SP62"][11] == "NO"
    assert by_id["SP62"][14] == "yes"


def test_an_offline_burst_is_replayed_at_the_engines_cap(defaults: PerfDefaults) -> None:
    """vLLM's benchmark_throughput (SP50): 1000 equal requests handed over at once run through
    continuous batching at the engine's cap; a few waves of equal requests drain little, so the
    burst's rate lies just under the steady state's."""
    from scripts.published_table import _estimate, _predict_plain

    row = next(r for r in read_rows(SERVING_CSV) if r["id"] == "SP50")
    burst = _predict_plain(row, defaults)
    steady = _estimate(row, defaults).max_requests_per_s
    assert 0.8 * steady < burst <= steady
