"""Measured GPU use summarised (peak, P95, mean utilization, idle share) and the smallest card
that holds a measured peak under the headroom policy (docs/telemetry.md)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu, gpu_catalog
from costsim.domain.telemetry import GpuSample
from costsim.memory.measured import (
    nearest_rank,
    smallest_fitting,
    summarize_usage,
    usable_bytes,
    verdict_on,
)
from costsim.memory.runtime import Verdict

GIB = 2**30


def _sample(used: int | None, util: float | None, total: int | None = None) -> GpuSample:
    return GpuSample(line=1, device="0", gpu_name=None, memory_used_bytes=used,
                     memory_total_bytes=total, utilization_pct=util)


def test_summary_leaves_missing_values_out() -> None:
    samples = [_sample(10 * GIB, 0.0), _sample(None, 60.0), _sample(30 * GIB, None, 80 * GIB),
               _sample(20 * GIB, 0.0)]
    summary = summarize_usage(samples)
    assert summary.samples == 4
    assert (summary.memory_samples, summary.utilization_samples) == (3, 3)
    assert summary.peak_memory_used_bytes == 30 * GIB
    assert summary.memory_total_bytes == 80 * GIB
    assert summary.mean_utilization_pct == 20.0
    assert summary.idle_share == 2 / 3


def test_a_summary_of_no_values_is_none_not_zero() -> None:
    summary = summarize_usage([_sample(None, None)])
    assert summary.peak_memory_used_bytes is None
    assert summary.mean_utilization_pct is None
    assert summary.idle_share is None


def test_p95_is_the_nearest_rank() -> None:
    values = list(range(1, 101))  # 1..100
    assert nearest_rank(values, 95) == 95
    assert nearest_rank([7], 95) == 7
    assert nearest_rank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                         100], 95) == 19  # one spike of 20 samples: in the peak, not the P95


def test_smallest_card_for_a_20_gib_peak_is_the_22_gib_class() -> None:
    # usable = capacity × 0.95; fits when the peak ≤ usable × 0.95: 22886 MiB × 0.9025 = 20.2 GiB
    names = [gpu.name for gpu in smallest_fitting(20 * GIB, gpu_catalog(), inference=False)]
    assert names == ["A10G", "L4"]
    # 0.90 for inference: 22886 MiB × 0.855 = 19.1 GiB is too little
    infer = smallest_fitting(20 * GIB, gpu_catalog(), inference=True)
    assert all(gpu.capacity_bytes > get_gpu("L4").capacity_bytes for gpu in infer)


def test_no_card_holds_a_peak_beyond_the_largest() -> None:
    assert smallest_fitting(400 * GIB, gpu_catalog(), inference=False) == ()


def test_a_peak_within_the_margin_is_tight_on_its_card() -> None:
    h100 = get_gpu("H100")
    usable = usable_bytes(h100, inference=False)
    assert verdict_on(h100, int(usable * 0.97), inference=False) is Verdict.TIGHT
    assert verdict_on(h100, int(usable * 0.90), inference=False) is Verdict.FITS


@given(st.integers(min_value=0, max_value=300 * GIB), st.booleans())
def test_the_smallest_fitting_cards_fit_and_no_smaller_card_does(peak: int,
                                                                 inference: bool) -> None:
    found = smallest_fitting(peak, gpu_catalog(), inference=inference)
    for gpu in gpu_catalog():
        fits = verdict_on(gpu, peak, inference=inference) is Verdict.FITS
        if found and gpu.capacity_bytes < found[0].capacity_bytes:
            assert not fits
        if gpu in found:
            assert fits
    assert len({gpu.capacity_bytes for gpu in found}) <= 1
