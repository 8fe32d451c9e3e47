"""Deterministic request lengths for a benchmark replay (issue 18, fifth serving round).

A benchmark that samples its prompts from a dataset (ShareGPT in vLLM's and SGLang's scripts)
sends requests of varied lengths; when all of them arrive at once, the run lasts until the
longest outputs have decoded, at a small batch once the short ones have left. The replay draws
no random numbers: ``count`` lengths are the (i + 1/2)/count quantiles of the dataset's
distribution (:class:`~costsim.domain.request_lengths.LengthDistribution`, exponential between
the benchmark's filters), its scale set so that the mean equals the stated mean, and they are
paired and ordered by the additive recurrence R2 (Roberts 2018: the points frac(k·(1/ρ, 1/ρ²)),
ρ the plastic number), a low-discrepancy sequence, so that prompt and output lengths are
unrelated and the longest requests are spread over the arrival order as a random sample's are.
"""

from __future__ import annotations

import math

from costsim.domain.request_lengths import LengthDistribution
from costsim.errors import InputError

# The plastic number ρ, the real root of x³ = x + 1 (R2's generator).
_PLASTIC = 1.324717957244746
_R2 = (1.0 / _PLASTIC, 1.0 / _PLASTIC**2)


def _truncated_mean(scale: float, width: float) -> float:
    """Mean of an exponential of ``scale`` truncated to [0, width]."""
    ratio = width / scale
    if ratio < 1e-6:
        return width / 2.0
    if ratio > 700.0:  # e^ratio overflows; the truncation no longer matters
        return scale
    return scale - width / math.expm1(ratio)


def _scale_for_mean(excess: float, width: float) -> float:
    """The exponential scale whose truncation to [0, width] has mean ``excess`` (bisection in
    log scale: the truncated mean rises with the scale, from 0 to width/2)."""
    low, high = excess * 1e-3, excess * 1e6
    for _ in range(200):
        mid = math.sqrt(low * high)
        if _truncated_mean(mid, width) < excess:
            low = mid
        else:
            high = mid
    return math.sqrt(low * high)


def quantile_lengths(mean_tokens: float, count: int, *, low: int, high: int) -> list[int]:
    """``count`` lengths in [low, high], ascending: the (i + 1/2)/count quantiles of
    low + an exponential truncated at high, its scale set so that the mean is ``mean_tokens``
    (and the quantiles' excesses over ``low`` scaled so that their own mean is, too); rounded
    to whole tokens by largest remainders so that they sum to round(mean · count).

    Raises:
        InputError: ``count`` < 1, or a mean outside (low, (low + high)/2) (a truncated
            exponential's mean never reaches the interval's middle).
    """
    if count < 1:
        raise InputError("", "requests", f"need at least one request, got {count}")
    width = float(high - low)
    if not low < mean_tokens < low + width / 2.0:
        raise InputError("", "mean length", f"an exponential length between {low} and {high} "
                                            f"tokens has a mean in ({low}, {low + width / 2:g}); "
                                            f"got {mean_tokens:g}")
    scale = _scale_for_mean(mean_tokens - low, width)
    mass = -math.expm1(-width / scale)
    quantiles = [-scale * math.log1p(-(i + 0.5) / count * mass) for i in range(count)]
    # A finite set of mid-quantiles under-samples the tail (one request is the median): the
    # excesses over ``low`` are scaled until their mean is the stated one (cut at ``high``).
    factor = 1.0
    exact = [float(low)] * count
    for _ in range(50):
        exact = [min(low + factor * q, float(high)) for q in quantiles]
        shortfall = (mean_tokens - low) / max(sum(exact) / count - low, 1e-12)
        if abs(shortfall - 1.0) < 1e-12:
            break
        factor *= shortfall
    floors = [math.floor(x) for x in exact]
    short = round(mean_tokens * count) - sum(floors)
    by_remainder = sorted(range(count), key=lambda i: floors[i] - exact[i])
    for i in by_remainder[:max(short, 0)]:
        floors[i] += 1
    return sorted(min(max(x, low), high) for x in floors)


def _r2_ranks(count: int, axis: int) -> list[int]:
    """Rank of frac((k + 1) · α_axis + 1/2) among k = 0..count-1 (a permutation)."""
    points = [((k + 1) * _R2[axis] + 0.5) % 1.0 for k in range(count)]
    order = sorted(range(count), key=lambda k: points[k])
    ranks = [0] * count
    for rank, k in enumerate(order):
        ranks[k] = rank
    return ranks


def benchmark_requests(dist: LengthDistribution, count: int, mean_prompt_tokens: float,
                       mean_output_tokens: float) -> tuple[list[int], list[int]]:
    """(prompt lengths, output lengths) of ``count`` requests in arrival order, means as
    stated, every pair within the dataset's filters (an output is cut to the total's limit
    less its prompt; the output scale is then raised until the mean is met again)."""
    prompts_sorted = quantile_lengths(mean_prompt_tokens, count, low=dist.min_tokens,
                                      high=dist.max_prompt_tokens)
    prompt_rank, output_rank = _r2_ranks(count, 0), _r2_ranks(count, 1)
    prompts = [prompts_sorted[prompt_rank[k]] for k in range(count)]
    target = float(mean_output_tokens)
    outputs: list[int] = []
    for _ in range(8):
        outputs_sorted = quantile_lengths(target, count, low=dist.min_tokens,
                                          high=dist.max_total_tokens - dist.min_tokens)
        outputs = [min(outputs_sorted[output_rank[k]], dist.max_total_tokens - prompts[k])
                   for k in range(count)]
        deficit = mean_output_tokens - sum(outputs) / count
        if abs(deficit) * count < 1.0:
            break
        target += deficit
    return prompts, outputs
