"""Pay-per-token APIs: a provider's price for an open model, its rate limit and latency, and
the break-even rate between such an API and a self-hosted replica.

An API phase pays ``tokens × price`` (input and output tokens at their own prices per 1M); the
provider's rate limit bounds the requests it serves (requests per minute, or tokens per minute
over the request's prompt and output tokens, whichever binds first); its latency is a scenario
input or the provider's published figure. The shipped prices are in
``costsim/data/api_prices.csv`` (read by :mod:`costsim.catalog.api_prices`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from costsim.errors import InputError
from costsim.units import SECONDS_PER_HOUR

TOKENS_PER_MILLION = 1_000_000
SECONDS_PER_MINUTE = 60
# Bounds of a price row (docs/pricing.md "Pay-per-token APIs"): the dearest open-model API
# price published is ~$16 per 1M output tokens (Llama 3.1 405B on Azure); 1000 is ~60x that.
MAX_USD_PER_MILLION_TOKENS = 1_000.0
# ~1000x the largest published default limits (Fireworks 600 requests/min; Together tier 5
# 20M tokens/min): a negotiated limit fits, a typo such as a daily figure in the wrong column
# does not go unnoticed at the top end only.
MAX_REQUESTS_PER_MINUTE = 10_000_000.0
MAX_TOKENS_PER_MINUTE = 100_000_000_000.0
# A minute to the first token is a batch API, not a serving one; 100,000 tokens/s is ~100x the
# fastest published decode speed (Groq ~800 tokens/s on Mixtral 8x7B).
MAX_TTFT_S = 60.0
MAX_OUTPUT_TOKENS_PER_S = 100_000.0
# the figures of a row that can be marked as estimates (``~`` in the CSV)
ESTIMATE_FIELDS = ("input_usd_per_million_tokens", "output_usd_per_million_tokens",
                   "requests_per_minute", "tokens_per_minute", "ttft_s", "output_tokens_per_s")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiPrice:
    """One provider's price for one open model (a costsim preset name), with its published
    rate limit and latency where there are any. ``estimated`` names the figures that are
    costsim's estimates rather than the provider's published ones."""

    provider: str
    model: str
    input_usd_per_million_tokens: float
    output_usd_per_million_tokens: float
    source: str
    effective_date: str
    provider_model_id: str = ""
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    ttft_s: float | None = None
    output_tokens_per_s: float | None = None
    estimated: tuple[str, ...] = ()
    note: str = ""
    user_row: bool = False  # from the scenario's price file

    def __post_init__(self) -> None:
        for key in ("input_usd_per_million_tokens", "output_usd_per_million_tokens"):
            value = getattr(self, key)
            if not (math.isfinite(value) and 0 <= value <= MAX_USD_PER_MILLION_TOKENS):
                raise InputError("", key, f"must be in [0, {MAX_USD_PER_MILLION_TOKENS:g}] USD "
                                 f"per 1M tokens, got {value}")
        if self.input_usd_per_million_tokens == 0 and self.output_usd_per_million_tokens == 0:
            raise InputError("", "input_usd_per_million_tokens", "an API row needs a price: "
                             "input and output are both 0")
        _check_limits(self)
        for key in self.estimated:
            if key not in ESTIMATE_FIELDS:
                raise InputError("", "estimated", f"unknown figure '{key}'")

    @property
    def key(self) -> tuple[str, str]:
        """(provider, model): a user row with the same key replaces a shipped one."""
        return (self.provider, self.model)

    @property
    def estimate(self) -> bool:
        """Whether either price is an estimate (the figure is then shown with ``~``)."""
        return any(k in self.estimated for k in ESTIMATE_FIELDS[:2])

    def usd_per_request(self, prompt_tokens: float, output_tokens: float) -> float:
        """What one request costs: its input and output tokens at their prices."""
        return (prompt_tokens * self.input_usd_per_million_tokens
                + output_tokens * self.output_usd_per_million_tokens) / TOKENS_PER_MILLION

    def usd_per_million_tokens(self, prompt_tokens: float, output_tokens: float) -> float:
        """The blended price per 1M tokens (prompt + output) for requests of this size."""
        total = prompt_tokens + output_tokens
        return self.usd_per_request(prompt_tokens, output_tokens) / total * TOKENS_PER_MILLION


def _check_limits(figures: object) -> None:
    """A row's or a use entry's optional rate limits and latencies: each None or in (0, max]."""
    for key, high in (("requests_per_minute", MAX_REQUESTS_PER_MINUTE),
                      ("tokens_per_minute", MAX_TOKENS_PER_MINUTE),
                      ("ttft_s", MAX_TTFT_S),
                      ("output_tokens_per_s", MAX_OUTPUT_TOKENS_PER_S)):
        value = getattr(figures, key)
        if value is not None and not (math.isfinite(value) and 0 < value <= high):
            raise InputError("", key, f"must be in (0, {high:g}], got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiUse:
    """How a plan calls an API for a serving phase: the provider, and what the plan states
    instead of the provider's published figures (a negotiated rate limit, a measured latency).
    None: the price row's figure (no rate limit, no latency when the row has none)."""

    provider: str
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    ttft_s: float | None = None
    output_tokens_per_s: float | None = None

    def __post_init__(self) -> None:
        if not self.provider.strip():
            raise InputError("", "provider", "an API use entry needs a provider")
        _check_limits(self)


def rate_limit_requests_per_s(requests_per_minute: float | None, tokens_per_minute: float | None,
                              tokens_per_request: float) -> float:
    """The requests per second a rate limit lets through: the lower of the request limit and
    the token limit over the request's tokens (providers count prompt + output tokens against a
    tokens-per-minute limit); infinite when there is no limit."""
    bounds = [math.inf]
    if requests_per_minute is not None:
        bounds.append(requests_per_minute / SECONDS_PER_MINUTE)
    if tokens_per_minute is not None and tokens_per_request > 0:
        bounds.append(tokens_per_minute / SECONDS_PER_MINUTE / tokens_per_request)
    return min(bounds)


def breakeven_requests_per_s(replica_usd_per_hour: float, replica_requests_per_s: float,
                             api_usd_per_request: float) -> float | None:
    """The request rate above which a self-hosted fleet costs no more than the API at every
    rate; None when the API is cheaper at every rate.

    The fleet runs ⌈λ/c⌉ replicas at R $/h each (c requests/s per replica); the API costs
    x·λ $/h with x = 3600·a (a $ per request). At full replicas the fleet costs R/c per unit of
    rate against the API's x, so when R ≥ x·c the API is never dearer. Otherwise, on the k-th
    step (kc, (k+1)c] the fleet wins once x·λ ≥ (k+1)R, i.e. from λ = (k+1)R/x; that threshold
    lies inside the step only while k(x·c − R) < R, so the last step where the API still wins
    somewhere is K = ⌈R/(x·c − R)⌉ − 1, and above λ* = (K+1)·R/x the fleet wins everywhere.
    """
    if replica_usd_per_hour <= 0:
        return 0.0
    if replica_requests_per_s <= 0 or api_usd_per_request <= 0:
        return None
    x = SECONDS_PER_HOUR * api_usd_per_request
    margin = x * replica_requests_per_s - replica_usd_per_hour
    if margin <= 0:
        return None
    steps = max(0, math.ceil(replica_usd_per_hour / margin - 1e-12) - 1)
    return (steps + 1) * replica_usd_per_hour / x
