"""Where an axis puts its ticks and how far it reaches.

Linear axes tick at 1, 2, 2.5 or 5 times a power of ten (the steps of matplotlib's default
locator, which readers of these charts know), as many as the axis length leaves room for; log
axes at chosen multiples of each power of the base (1, 2 and 5 of each decade by default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
MARGIN = 0.05  # share of the data span added on each side of an automatic limit


def nice_ticks(low: float, high: float, most: int, *, integer: bool = False) -> list[float]:
    """At most ``most`` evenly spaced round ticks covering [low, high] (ticks inside it only)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high < low:
        low, high = high, low
    if high == low:
        return [low]
    most = max(2, most)
    # the smallest round step that puts at most ``most`` ticks inside the reach
    exponent = math.floor(math.log10((high - low) / (most - 1)))
    candidates = sorted(s * 10.0 ** e for e in (exponent - 1, exponent, exponent + 1)
                        for s in NICE_STEPS[:-1])
    if integer:
        candidates = [c for c in candidates if c >= 1 and c == math.floor(c)] or [1.0]
    step = next((c for c in candidates
                 if math.floor(high / c + 1e-9) - math.ceil(low / c - 1e-9) + 1 <= most),
                candidates[-1])
    first = math.ceil(low / step - 1e-9) * step
    digits = max(0, 3 - math.floor(math.log10(step)))  # 0.6, not 0.6000000000000001
    ticks: list[float] = []
    value = first
    while value <= high + 1e-9 * step:
        ticks.append(0.0 if abs(value) < 1e-12 * step else round(value, digits))
        value = first + step * len(ticks)
    return ticks


def log_ticks(low: float, high: float, base: float = 10.0,
              subs: Sequence[float] = (1.0, 2.0, 5.0), most: int = 12) -> list[float]:
    """Ticks at ``subs`` × base^k inside [low, high]; only the powers themselves when the subs
    would give more than ``most`` ticks (every other power when even those are too many)."""
    if low <= 0 or high <= 0:
        return []
    first = math.floor(math.log(low, base))
    last = math.ceil(math.log(high, base))
    inside = [sub * base ** k for k in range(first, last + 1) for sub in subs
              if low * (1 - 1e-9) <= sub * base ** k <= high * (1 + 1e-9)]
    if len(inside) <= most:
        return inside
    powers = [base ** k for k in range(first, last + 1) if low <= base ** k <= high]
    stride = max(1, math.ceil(len(powers) / most))
    return powers[::stride]


def auto_limits(values: Sequence[float], sticky: Sequence[float] = (), *,
                log: bool = False, margin: float = MARGIN) -> tuple[float, float]:
    """The data's range widened by ``margin`` of its span on each side (on log10 for a log
    axis), but never past a sticky value inside the data (a bar's base at 0 stays the edge)."""
    finite = [v for v in values if math.isfinite(v) and (not log or v > 0)]
    if not finite:
        return (1.0, 10.0) if log else (0.0, 1.0)
    low, high = min(finite), max(finite)
    if log:
        a, b = math.log10(low), math.log10(high)
        pad = margin * (b - a) if b > a else 0.5
        return 10 ** (a - pad), 10 ** (b + pad)
    pad = margin * (high - low) if high > low else (abs(high) * 0.05 or 0.5)
    new_low, new_high = low - pad, high + pad
    for edge in sticky:
        if edge == low:
            new_low = edge
        if edge == high:
            new_high = edge
    return new_low, new_high
