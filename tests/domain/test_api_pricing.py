"""The rate-limit and break-even rules of pay-per-token APIs (costsim.domain.api_pricing)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.domain.api_pricing import (
    ApiPrice,
    breakeven_requests_per_s,
    rate_limit_requests_per_s,
)
from costsim.errors import InputError


def test_the_binding_rate_limit_wins() -> None:
    """600 requests/min = 10/s; 360,000 tokens/min over 1,200 tokens = 5/s: the token limit
    binds. No limit at all: infinite."""
    assert rate_limit_requests_per_s(600, 360_000, 1_200) == pytest.approx(5.0)
    assert rate_limit_requests_per_s(600, None, 1_200) == pytest.approx(10.0)
    assert math.isinf(rate_limit_requests_per_s(None, None, 1_200))


def test_breakeven_by_hand() -> None:
    """A replica at $1/h serving 1 request/s against an API at $1.5/h per request/s
    (a = 1.5/3600 $ a request): on (0, 1] the fleet wins from 1/1.5 = 0.667, on (1, 2] only
    from 2/1.5 = 1.333, on (2, 3] from 3/1.5 = 2 (the whole step): λ* = 1.333."""
    assert breakeven_requests_per_s(1.0, 1.0, 1.5 / 3600) == pytest.approx(4 / 3)
    # the API cheaper per request than a full replica: never
    assert breakeven_requests_per_s(1.0, 1.0, 0.9 / 3600) is None


@given(st.floats(0.1, 100), st.floats(0.01, 100), st.floats(1e-6, 1e-2))
def test_above_the_breakeven_self_hosting_never_costs_more(replica_usd: float, capacity: float,
                                                          usd_per_request: float) -> None:
    """For every rate above λ*, ⌈λ/c⌉ replicas cost no more than the API; just below it the
    API is cheaper (λ* is the least such rate)."""
    threshold = breakeven_requests_per_s(replica_usd, capacity, usd_per_request)
    if threshold is None:
        assert replica_usd >= 3600 * usd_per_request * capacity * (1 - 1e-9)
        return
    for factor in (1.0, 1.001, 1.5, 2.0, 3.7, 10.0):
        rate = threshold * factor
        fleet = math.ceil(rate / capacity - 1e-9) * replica_usd
        assert fleet <= 3600 * usd_per_request * rate * (1 + 1e-9)
    below = threshold * (1 - 1e-6)
    assert math.ceil(below / capacity - 1e-12) * replica_usd > 3600 * usd_per_request * below


def test_a_price_row_checks_its_figures() -> None:
    """Both prices 0, a negative price, a zero rate limit: refused, naming the figure."""
    base = {"provider": "p", "model": "m", "source": "s", "effective_date": "2026-01-01"}
    with pytest.raises(InputError, match="both 0"):
        ApiPrice(**base, input_usd_per_million_tokens=0, output_usd_per_million_tokens=0)
    with pytest.raises(InputError, match="input_usd_per_million_tokens"):
        ApiPrice(**base, input_usd_per_million_tokens=-1, output_usd_per_million_tokens=1)
    with pytest.raises(InputError, match="requests_per_minute"):
        ApiPrice(**base, input_usd_per_million_tokens=1, output_usd_per_million_tokens=1,
                 requests_per_minute=0)
    price = ApiPrice(**base, input_usd_per_million_tokens=0.5, output_usd_per_million_tokens=1.5)
    assert price.usd_per_request(1000, 200) == pytest.approx(0.0008)
    assert price.usd_per_million_tokens(1000, 200) == pytest.approx(0.0008 / 1200 * 1e6)
