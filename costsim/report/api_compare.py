"""Self-host vs API per serving phase, as the text and HTML reports show it (the figures are
the run JSON's ``plans[].api_comparison``; costsim.sim.api_serving computes them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from costsim.domain import display
from costsim.domain.currency import USD, Currency


def _per_million(value_usd: float | None, currency: Currency, estimate: bool = False) -> str:
    if value_usd is None:
        return "—"
    rate = display.money_rate(currency.rate(value_usd), currency)
    return f"{'~' if estimate else ''}{currency.symbol}{rate}"


def breakeven_text(row: Mapping[str, Any]) -> str:
    """The rate above which self-hosting wins, or why there is none."""
    if row["plan_serves_on"] == "api":
        return "—"
    if row["api_provider"] is None:
        return "no API prices the model"
    if row["replica_usd_per_hour"] is None:
        return "no hourly price (owned or committed GPUs)"
    value = row["breakeven_requests_per_s"]
    if value is None:
        return "never: the API is cheaper at every rate"
    return f"above {value:,.2f} req/s"


def api_comparison_rows(plans: Iterable[Mapping[str, Any]], currency: Currency = USD
                        ) -> list[dict[str, str]]:
    """One row per (plan, serving phase) of the summary's plans (their figures in USD, as
    the run JSON has them): how the plan serves it, the cost per 1M tokens self-hosted and on
    an API in the display ``currency``, and the break-even request rate."""
    rows = []
    for plan in plans:
        for row in plan.get("api_comparison") or ():
            self_host = _per_million(row["self_host_cost_per_million_tokens_usd"], currency)
            if row["self_host_gpu"]:
                self_host += f" ({row['self_host_gpu']})"
            api = _per_million(row["api_cost_per_million_tokens_usd"], currency,
                               row["api_price_estimate"])
            if row["api_provider"]:
                api += f" ({row['api_provider']})"
            rows.append({"plan": str(plan["name"]), "phase": str(row["phase"]),
                         "serves_on": str(row["plan_serves_on"]), "self_host": self_host,
                         "api": api, "breakeven": breakeven_text(row),
                         "peak": f"{row['peak_requests_per_s']:,.2f} req/s"})
    return rows
