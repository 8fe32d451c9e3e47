"""Queue waits as a fixed-bin histogram: the bins, the percentile, an exact merge."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.sim.waits import WaitHistogram

waits_lists = st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 1e9)), max_size=60)


def test_jobs_that_started_on_arrival_count_as_zero_waits() -> None:
    hist = WaitHistogram.of([0.0, 0.0, -1e-12, 0.0])
    assert hist.jobs == 4
    assert hist.waited == 0
    assert hist.percentile(95) == 0.0
    assert hist.max_s == 0.0


def test_a_percentile_inside_the_zero_waits_is_numpys_exactly() -> None:
    waits = [0.0] * 97 + [3600.0, 7200.0, 86400.0]
    assert WaitHistogram.of(waits).percentile(95) == np.percentile(waits, 95) == 0.0


@given(waits=st.lists(st.floats(1e-3, 1e9), min_size=1, max_size=200),
       q=st.floats(0, 100))
@settings(max_examples=200, deadline=None)
def test_a_percentile_is_within_the_documented_resolution(waits: list[float], q: float) -> None:
    """Each wait reads back within 1/256 of itself, so numpy's linear percentile does too."""
    got = WaitHistogram.of(waits).percentile(q)
    want = float(np.percentile(waits, q))
    assert got == pytest.approx(want, rel=1 / 256)


def test_a_bin_is_at_most_one_128th_of_its_lower_edge_wide() -> None:
    """Bin j of octave e is [2^e (1 + j/128), 2^e (1 + (j + 1)/128))."""
    for e, j in ((0, 0), (0, 64), (11, 97), (23, 127), (-3, 5)):
        low, high = 2.0**e * (1 + j / 128), 2.0**e * (1 + (j + 1) / 128)
        assert (high - low) / low <= 1 / 128
        inside = WaitHistogram.of([low, np.nextafter(high, 0.0)])
        across = WaitHistogram.of([low, high])
        assert inside.keys.size == 1
        assert across.keys.size == 2
        assert inside.max_s == (low + high) / 2


def test_waits_on_a_bins_midpoint_give_numpys_percentile() -> None:
    # 3600 s = 2^11 (1 + 97/128): its bin is [3600, 3616), midpoint 3608
    midpoints = [0.0, 1.0 + 1 / 256, 2.0 + 2 / 256, 2048.0 * (1 + 97 / 128 + 1 / 256)]
    hist = WaitHistogram.of(midpoints)
    for q in (0, 10, 50, 95, 100):
        assert hist.percentile(q) == np.percentile(midpoints, q)


@given(parts=st.lists(waits_lists, min_size=1, max_size=8), data=st.data())
@settings(max_examples=100, deadline=None)
def test_any_split_of_the_replications_merges_to_the_same_histogram(
        parts: list[list[float]], data: st.DataObject) -> None:
    """Replications pooled in one go, in chunks, or merged one by one in any order: the same
    bins, the same counts, the same percentile (integer counts add exactly)."""
    hists = [WaitHistogram.of(p) for p in parts]
    whole = WaitHistogram.of([w for p in parts for w in p])
    assert WaitHistogram.pooled(hists) == whole
    order = data.draw(st.permutations(range(len(hists))))
    cut = data.draw(st.integers(0, len(hists)))
    chunks = [WaitHistogram.pooled([hists[i] for i in order[:cut]]),
              WaitHistogram.pooled([hists[i] for i in order[cut:]])]
    assert WaitHistogram.pooled(chunks) == whole
    one_by_one = WaitHistogram.empty()
    for i in reversed(order):
        one_by_one = one_by_one.merged(hists[i])
    assert one_by_one == whole
    if whole.jobs:
        assert WaitHistogram.pooled(chunks).percentile(95) == whole.percentile(95)


def test_no_jobs_has_no_percentile() -> None:
    with pytest.raises(ValueError, match="no queue waits"):
        WaitHistogram.empty().percentile(95)


def test_a_busy_queues_waits_take_a_few_kib() -> None:
    """36,000 jobs (1,200 a day for a month) waiting up to a week: ~1,400 bins, not 36,000
    floats."""
    waits = np.random.default_rng(0).exponential(3600.0, size=36_000)
    hist = WaitHistogram.of(waits)
    assert hist.jobs == 36_000
    assert hist.keys.nbytes + hist.counts.nbytes < 24 * 1024


@pytest.mark.parametrize("waits", [[0.0], [0.0, -0.0, -3.0], [float("nan"), 0.0], [0.0] * 50])
def test_nobody_waiting_is_one_bin_of_every_job(waits: list[float]) -> None:
    hist = WaitHistogram.of(waits)
    assert hist.keys.tolist() == [-1]
    assert hist.counts.tolist() == [len(waits)]
    assert hist == WaitHistogram.pooled([WaitHistogram.of([w]) for w in waits])
    assert not hist.keys.flags.writeable
    assert not hist.counts.flags.writeable
