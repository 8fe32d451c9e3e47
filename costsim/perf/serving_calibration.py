"""Measured serving points beside the model's prediction for the same case (``costsim
calibrate serve``): ratio = measured / predicted per figure, and a verdict.

Throughput is compared where the point measured the replica's maximum: an offline point, or an
online one that served less than 90 % of the offered rate (saturated). Below saturation a
replica serves what it is offered, so its throughput says nothing of the model; its latencies
do: p95 TTFT and TPOT at the offered rate against the model's p95 at that rate, p50 against the
model's mean (the model has no median). A latency ratio above 1 means the stack is slower than
predicted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from costsim.domain.measurements import ServingPoint
from costsim.perf.serving import ServingEstimate

SATURATED_SHARE = 0.9  # served / offered below this: the point measured the maximum
CLOSE_ENOUGH = 0.05  # a median ratio within ±5 % of 1: the model matches the stack
THROUGHPUT_FIGURES = ("requests_per_s", "output_tokens_per_s")


@dataclass(frozen=True, slots=True, kw_only=True)
class FigureComparison:
    """One figure of one point: measured, predicted and their ratio (None where predicted 0)."""

    figure: str
    measured: float
    predicted: float
    ratio: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class RatioSummary:
    """The spread of one figure's ratios over the points."""

    figure: str
    points: int
    median: float
    low: float  # P10 with 5 or more points, else the minimum
    high: float  # P90 with 5 or more points, else the maximum
    spread: str  # "P10-P90" or "min-max"


def saturated(point: ServingPoint) -> bool:
    """True when the point measured the replica's maximum throughput."""
    if point.request_rate_per_s is None:
        return True
    served = point.requests_per_s
    return served is not None and served < SATURATED_SHARE * point.request_rate_per_s


def compare_point(point: ServingPoint, est: ServingEstimate,
                  latency: tuple[float, float, float, float] | None
                  ) -> tuple[FigureComparison, ...]:
    """The point's figures beside ``est`` (the model's estimate of the same replica and request
    size) and ``latency`` (the model's TTFT, TPOT, p95 TTFT, p95 TPOT at the point's offered
    rate; None for an offline point)."""
    pairs: list[tuple[str, float | None, float]] = []
    if saturated(point):
        pairs += [("requests_per_s", point.requests_per_s, est.max_requests_per_s),
                  ("output_tokens_per_s", point.output_tokens_per_s, est.output_tokens_per_s)]
    if latency is not None:
        ttft, tpot, ttft95, tpot95 = latency
        pairs += [("ttft_p50_s", point.ttft_p50_s, ttft), ("ttft_p95_s", point.ttft_p95_s, ttft95),
                  ("tpot_p50_s", point.tpot_p50_s, tpot), ("tpot_p95_s", point.tpot_p95_s, tpot95)]
    return tuple(FigureComparison(figure=f, measured=m, predicted=p,
                                  ratio=m / p if p > 0 and np.isfinite(p) else None)
                 for f, m, p in pairs if m is not None)


def summarize(comparisons: Sequence[FigureComparison]) -> tuple[RatioSummary, ...]:
    """Median and spread of the ratio per figure, in a fixed figure order."""
    order = ("requests_per_s", "output_tokens_per_s", "ttft_p50_s", "ttft_p95_s", "tpot_p50_s",
             "tpot_p95_s")
    out = []
    for figure in order:
        ratios = np.array([c.ratio for c in comparisons if c.figure == figure
                           and c.ratio is not None], dtype=np.float64)
        if ratios.size == 0:
            continue
        wide = ratios.size >= 5
        out.append(RatioSummary(
            figure=figure, points=int(ratios.size), median=float(np.median(ratios)),
            low=float(np.percentile(ratios, 10) if wide else ratios.min()),
            high=float(np.percentile(ratios, 90) if wide else ratios.max()),
            spread="P10-P90" if wide else "min-max"))
    return tuple(out)


def verdict(summaries: Sequence[RatioSummary]) -> str:
    """One line: how far the model is from the measured stack, from throughput where measured,
    else from p95 TPOT, else p95 TTFT."""
    by_figure = {s.figure: s for s in summaries}
    for figure in ("requests_per_s", "output_tokens_per_s"):
        if figure in by_figure:
            s = by_figure[figure]
            r = s.median
            head = (f"measured {figure} is {r:.2f} x the prediction (median of {s.points}, "
                    f"{s.spread} {s.low:.2f}-{s.high:.2f})")
            if abs(r - 1) <= CLOSE_ENOUGH:
                return f"{head}: the model matches your stack within ~{CLOSE_ENOUGH:.0%}"
            if r < 1:
                return (f"{head}: the model is optimistic by ~{1 - r:.0%} on your stack "
                        f"(a fleet sized by it is ~{1 / r:.1f}x too small; give the profile "
                        "to estimate serve --profile or a scenario's measurements)")
            return f"{head}: the model is pessimistic by ~{r - 1:.0%} on your stack"
    for figure in ("tpot_p95_s", "ttft_p95_s"):
        if figure in by_figure:
            s = by_figure[figure]
            r = s.median
            head = (f"measured {figure} is {r:.2f} x the prediction (median of {s.points}, "
                    f"{s.spread} {s.low:.2f}-{s.high:.2f}); no point measured the maximum "
                    "throughput")
            if abs(r - 1) <= CLOSE_ENOUGH:
                return f"{head}: the model's latency matches your stack within ~5 %"
            word = "optimistic" if r > 1 else "pessimistic"
            return f"{head}: the model's latency is {word} by ~{abs(r - 1):.0%} on your stack"
    return "no figure could be compared (no point the model could predict)"
