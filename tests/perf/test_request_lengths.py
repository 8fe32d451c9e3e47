"""Deterministic request lengths of a benchmark replay (costsim/perf/request_lengths.py) and
what a tail of long requests does to a burst (costsim/perf/burst.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.request_lengths import DatasetKind, LengthDistribution
from costsim.domain.workload import InferenceSetup, ParallelLayout, ServingEngine
from costsim.errors import InputError
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.perf.burst import burst_throughput
from costsim.perf.request_lengths import benchmark_requests, quantile_lengths
from costsim.perf.roofline import ReplicaTerms, replica_terms
from tests.perf.conftest import arch

SHAREGPT = LengthDistribution(dataset=DatasetKind.SHAREGPT, min_tokens=4,
                              max_prompt_tokens=1024, max_total_tokens=2048, source="test")


@given(mean=st.floats(min_value=5.0, max_value=500.0), count=st.integers(1, 600))
@settings(max_examples=60, deadline=None)
def test_quantile_lengths_reproduce_the_stated_mean(mean: float, count: int) -> None:
    lengths = quantile_lengths(mean, count, low=4, high=2044)
    assert len(lengths) == count
    assert lengths == sorted(lengths)
    assert all(4 <= x <= 2044 for x in lengths)
    assert sum(lengths) == round(mean * count)


def test_quantile_lengths_are_an_exponential_tail() -> None:
    """Mean 223 between 4 and 2044: the median of an exponential sits at ln 2 of its scale past
    the minimum, and the longest of 320 at about ln(640) scales."""
    lengths = quantile_lengths(223.0, 320, low=4, high=2044)
    scale = 223.0 - 4.0  # the truncation at 2044 moves the scale by < 0.1 %
    assert lengths[160] == pytest.approx(4 + scale * math.log(2), abs=3)
    assert lengths[-1] == pytest.approx(4 + scale * math.log(640), rel=0.02)


@pytest.mark.parametrize("mean", [4.0, 1024.0, 3000.0])
def test_a_mean_outside_the_truncated_range_is_refused(mean: float) -> None:
    with pytest.raises(InputError, match="mean"):
        quantile_lengths(mean, 10, low=4, high=2044)


def test_benchmark_requests_keep_means_filters_and_no_pairing() -> None:
    prompts, outputs = benchmark_requests(SHAREGPT, 320, 230.0, 223.0)
    assert sum(prompts) == 230 * 320
    assert abs(sum(outputs) - 223 * 320) < 320
    assert all(p <= 1024 and p + o <= 2048 and min(p, o) >= 4
               for p, o in zip(prompts, outputs, strict=True))
    # prompt and output lengths unrelated; the longest outputs spread over the arrival order
    n = len(prompts)
    mp, mo = sum(prompts) / n, sum(outputs) / n
    cov = sum((p - mp) * (o - mo) for p, o in zip(prompts, outputs, strict=True)) / n
    sp = math.sqrt(sum((p - mp) ** 2 for p in prompts) / n)
    so = math.sqrt(sum((o - mo) ** 2 for o in outputs) / n)
    assert abs(cov / (sp * so)) < 0.15
    longest = sorted(range(n), key=lambda k: outputs[k])[-32:]
    assert 0.3 * n < sum(longest) / len(longest) < 0.7 * n
    assert benchmark_requests(SHAREGPT, 320, 230.0, 223.0) == (prompts, outputs)


def _terms(defaults: PerfDefaults) -> ReplicaTerms:
    setup = InferenceSetup(precision=Dtype.BF16, layout=ParallelLayout(), context_tokens=2048)
    return replica_terms(arch("llama-3-8b"), get_gpu("H100"), setup,
                         defaults.serving.engine(ServingEngine.VLLM), defaults.serving,
                         DEFAULT_POLICY)


@given(outputs=st.lists(st.integers(4, 600), min_size=2, max_size=24),
       prompt=st.integers(4, 400))
@settings(max_examples=40, deadline=None)
def test_a_burst_of_varied_lengths_is_slower_than_one_of_their_mean(
        defaults: PerfDefaults, outputs: list[int], prompt: int) -> None:
    """Same requests and total output tokens: the burst of varied outputs lasts until the
    longest has decoded, at a shrinking batch, so it takes at least as long as equal ones."""
    n = len(outputs)
    outputs[-1] += (-sum(outputs)) % n  # a total divisible by n: equal lengths exist
    mean = sum(outputs) // n
    terms = _terms(defaults)
    varied = burst_throughput(terms, [prompt] * n, outputs, n)
    equal = burst_throughput(terms, [prompt] * n, [mean] * n, n)
    assert varied.makespan_s >= equal.makespan_s * (1 - 1e-9)
    if max(outputs) > 2 * mean:
        assert varied.output_tokens_per_s < equal.output_tokens_per_s


def test_a_sharegpt_burst_is_well_below_one_of_mean_lengths(defaults: PerfDefaults) -> None:
    """320 requests at once, ShareGPT-like lengths (mean 230 + 223): the drain of the longest
    outputs costs more than a third of the mean-length burst's rate."""
    prompts, outputs = benchmark_requests(SHAREGPT, 320, 230.0, 223.0)
    terms = _terms(defaults)
    varied = burst_throughput(terms, prompts, outputs, 256)
    equal = burst_throughput(terms, [230] * 320, [223] * 320, 256)
    assert varied.output_tokens_per_s < 0.67 * equal.output_tokens_per_s
