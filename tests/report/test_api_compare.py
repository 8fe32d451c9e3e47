"""The self-host vs API table as people read it: figures from the run JSON (USD) shown in the
scenario's display currency."""

from __future__ import annotations

from typing import Any

from costsim.domain.currency import USD, Currency
from costsim.report.api_compare import api_comparison_rows


def _plan(**row: Any) -> dict[str, Any]:
    base = {"phase": "serve", "plan_serves_on": "self-host",
            "self_host_cost_per_million_tokens_usd": 0.2, "self_host_gpu": "H100-80GB",
            "api_cost_per_million_tokens_usd": 0.5, "api_price_estimate": False,
            "api_provider": "deepinfra", "replica_usd_per_hour": 3.0,
            "breakeven_requests_per_s": 1.25, "peak_requests_per_s": 4.0}
    return {"name": "rent", "api_comparison": [{**base, **row}]}


def test_usd_rows_show_dollars_and_the_breakeven() -> None:
    (row,) = api_comparison_rows([_plan()], USD)
    assert row["self_host"] == "$0.200 (H100-80GB)"
    assert row["api"] == "$0.500 (deepinfra)"
    assert row["breakeven"] == "above 1.25 req/s"


def test_rows_in_euro_are_the_usd_figures_times_the_rate() -> None:
    eur = Currency(code="EUR", fx_rate_per_usd=0.9)
    (row,) = api_comparison_rows([_plan(api_price_estimate=True)], eur)
    assert row["self_host"] == "€0.180 (H100-80GB)"  # 0.2 × 0.9
    assert row["api"] == "~€0.450 (deepinfra)"  # 0.5 × 0.9, an estimated price
    assert row["breakeven"] == "above 1.25 req/s"  # a request rate: no currency
