"""One measured serving point as a file states it, before names are resolved: what the format
readers (:mod:`costsim.catalog.serving_csv`, :mod:`costsim.catalog.serving_bench`) hand to
:mod:`costsim.catalog.serving_profiles`, which resolves the model, GPU and engine and checks the
numbers."""

from __future__ import annotations

import math
from dataclasses import dataclass

from costsim.errors import InputError


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingDraft:
    """A point with its names unresolved; ``where`` is its place in the file (``row 3``,
    ``line 2``), ``source`` what the file says about where it came from (may be empty)."""

    where: str
    model: str | None
    gpu: str | None
    engine: str | None
    precision: str | None
    quant: str | None
    tp: int | None
    prompt_tokens: float | None
    output_tokens: float | None
    concurrency: int | None
    request_rate_per_s: float | None  # None: offline (every request at once)
    requests_per_s: float | None
    output_tokens_per_s: float | None
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    tpot_p50_s: float | None
    tpot_p95_s: float | None
    source: str


def number(value: object, file: str, where: str, key: str, *,
           positive: bool = False) -> float | None:
    """``value`` (a number, a numeric string, or empty/None) as a finite float >= 0 (> 0 with
    ``positive``); None when empty.

    Raises:
        InputError: not a number, not finite, negative (or 0 where it must be positive).
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InputError(file, where, f"{key} must be a number (got {value!r})")
    try:
        out = float(value)
    except ValueError:
        raise InputError(file, where, f"{key} must be a number (got {value!r})") from None
    if not math.isfinite(out):
        raise InputError(file, where, f"{key} must be finite (got {value!r})")
    if out < 0 or (positive and out == 0):
        raise InputError(file, where, f"{key} must be {'> 0' if positive else '>= 0'} "
                                      f"(got {value!r})")
    return out


def whole(value: object, file: str, where: str, key: str) -> int | None:
    """``value`` as a whole number >= 1, or None when empty.

    Raises:
        InputError: not a whole number >= 1.
    """
    out = number(value, file, where, key, positive=True)
    if out is None:
        return None
    if out != int(out):
        raise InputError(file, where, f"{key} must be a whole number (got {value!r})")
    return int(out)
