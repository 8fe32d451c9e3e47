"""The report's tables (summary, ledger, monthly, assumptions), read from the summary document.

CSV, XLSX and HTML all show these rows, and they are taken from ``summary.json`` itself, so every
file of a report agrees with the JSON to the cent. A column's ``kind`` says how to show its
numbers (money to the cent, shares as percentages); the values stay numbers.

A scenario with a display currency (``currency``, ``fx_rate_per_usd``) gets its tables in that
currency: amounts converted (:mod:`costsim.report.currency_view`), money columns named with its
code (``amount_eur``, ``Amount (EUR)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from costsim.domain.currency import USD, Currency, currency_of
from costsim.report.currency_view import column_key, column_label, displayed

Cell = str | int | float | bool | None


class Kind(StrEnum):
    """How a column's values are shown."""

    TEXT = "text"
    USD = "usd"  # dollars to the cent
    RATE = "rate"  # dollars per unit, to the tenth of a cent
    NUMBER = "number"
    HOURS = "hours"  # GPU-hours: whole from 100 up, else 2 decimals
    SHARE = "share"  # a fraction shown as a percentage, to 0.1 %
    FLAG = "flag"  # yes/no


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its machine name (CSV header), its label (XLSX/HTML header), its kind."""

    key: str
    label: str
    kind: Kind = Kind.TEXT


@dataclass(frozen=True, slots=True)
class Table:
    """A named view: columns and rows of cells."""

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    currency: Currency = USD  # the currency of its money columns


def _table(name: str, title: str, columns: tuple[Column, ...],
           rows: tuple[tuple[Cell, ...], ...], currency: Currency) -> Table:
    """A table whose money columns are named with ``currency``'s code."""
    if not currency.is_usd:
        columns = tuple(Column(column_key(c.key, currency), column_label(c.label, currency),
                               c.kind) for c in columns)
    return Table(name, title, columns, rows, currency)


SUMMARY_COLUMNS = (
    Column("plan", "Plan"), Column("feasible", "Feasible", Kind.FLAG),
    Column("cost_usd_mean", "Cost mean (USD)", Kind.USD),
    Column("cost_usd_p10", "Cost P10 (USD)", Kind.USD),
    Column("cost_usd_p50", "Cost P50 (USD)", Kind.USD),
    Column("cost_usd_p90", "Cost P90 (USD)", Kind.USD),
    Column("cash_usd_mean", "Cash paid in the horizon (USD)", Kind.USD),
    Column("npv_usd_mean", "NPV of cash (USD)", Kind.USD),
    Column("p_over_budget", "P(over budget)", Kind.SHARE),
    Column("p_deadline_missed", "P(deadline missed)", Kind.SHARE),
    Column("cost_per_training_run_usd", "Cost per training run (USD)", Kind.USD),
    Column("cost_per_million_tokens_usd", "Cost per 1M tokens (USD)", Kind.RATE),
    Column("cost_per_million_output_tokens_usd", "Cost per 1M output tokens (USD)", Kind.RATE),
    Column("gpu_hours_used", "GPU-hours used", Kind.HOURS),
    Column("gpu_hours_paid", "GPU-hours paid", Kind.HOURS),
    Column("reserved_utilization", "Reserved utilization", Kind.SHARE),
    Column("stranded_commitment_usd", "Stranded commitment (USD)", Kind.USD),
    Column("queue_wait_p95_s", "Queue wait P95 (s)", Kind.NUMBER),
    Column("slo_attainment", "SLO attainment", Kind.SHARE),
    Column("infeasible_reasons", "Infeasible because"),
)
LEDGER_COLUMNS = (
    Column("plan", "Plan"), Column("phase", "Phase"), Column("pool", "Pool"),
    Column("gpu", "GPU"), Column("option", "Option"), Column("category", "Category"),
    Column("component", "Component"), Column("gpu_hours", "GPU-hours", Kind.HOURS),
    Column("rate_usd_per_gpu_hour", "Rate (USD per GPU-hour)", Kind.RATE),
    Column("amount_usd", "Amount (USD)", Kind.USD),
)
MONTHLY_COLUMNS = (
    Column("plan", "Plan"), Column("month", "Month"),
    Column("cash_usd", "Cash (USD)", Kind.USD), Column("capex_usd", "Capex (USD)", Kind.USD),
    Column("opex_usd", "Opex (USD)", Kind.USD),
    Column("amortized_usd", "Amortized (USD)", Kind.USD),
)
PRICE_COLUMNS = (
    Column("plan", "Plan"), Column("phase", "Phase"), Column("pool", "Pool"),
    Column("gpu", "GPU"), Column("option", "Option"),
    Column("rate_usd_per_gpu_hour", "Rate (USD per GPU-hour)", Kind.RATE),
    Column("upfront_usd", "Upfront (USD)", Kind.USD), Column("source", "Source"),
    Column("effective_date", "Date"), Column("estimate", "Estimate", Kind.FLAG),
    Column("flags", "Flags"),
)
BASIS_COLUMNS = (
    Column("plan", "Plan"), Column("phase", "Phase"), Column("kind", "Kind"),
    Column("basis", "Basis"), Column("sigma", "Log-sd of the error", Kind.NUMBER),
    Column("p10_factor", "P10 factor", Kind.NUMBER),
    Column("p90_factor", "P90 factor", Kind.NUMBER),
    Column("predicted_share", "Predicted share", Kind.SHARE), Column("error", "Error"),
    Column("source", "Source"),
)
DEFAULT_COLUMNS = (
    Column("key", "Default"), Column("value", "Value", Kind.NUMBER),
    Column("source", "Source"), Column("estimate", "Estimate", Kind.FLAG),
)


def summary_table(summary: Mapping[str, Any]) -> Table:
    """One row per plan: the figures of the ranked table."""
    rows = []
    for plan in displayed(summary)["plans"]:
        cost = plan["cost_usd"] or {}
        metrics = plan["metrics"] or {}
        values: dict[str, Cell] = {
            "plan": plan["name"], "feasible": plan["feasible"],
            **{f"cost_usd_{k}": cost.get(k) for k in ("mean", "p10", "p50", "p90")},
            "cash_usd_mean": (plan["cash_usd"] or {}).get("mean"),
            "npv_usd_mean": (plan["npv_usd"] or {}).get("mean"),
            **{k: plan[k] for k in ("p_over_budget", "p_deadline_missed",
                                    "cost_per_training_run_usd", "cost_per_million_tokens_usd",
                                    "cost_per_million_output_tokens_usd")},
            **metrics,
            "infeasible_reasons": "; ".join(plan["infeasible_reasons"]),
        }
        rows.append(tuple(values.get(c.key) for c in SUMMARY_COLUMNS))
    return _table("summary", "Plans", SUMMARY_COLUMNS, tuple(rows), currency_of(summary))


def ledger_table(summary: Mapping[str, Any]) -> Table:
    """One row per plan × ledger line (they add up to each plan's ``cost_usd.mean``)."""
    rows = tuple((plan["name"], *(line[c.key] for c in LEDGER_COLUMNS[1:]))
                 for plan in displayed(summary)["plans"] for line in plan["ledger"])
    return _table("ledger", "Ledger (economic cost, mean over replications)", LEDGER_COLUMNS,
                  rows, currency_of(summary))


def monthly_table(summary: Mapping[str, Any]) -> Table:
    """One row per plan × month of the horizon (cash adds up to each plan's ``cash_usd``)."""
    rows = tuple((plan["name"], *(row[c.key] for c in MONTHLY_COLUMNS[1:]))
                 for plan in displayed(summary)["plans"] for row in plan["monthly"])
    return _table("monthly", "Monthly cash, capex, opex and amortized cost", MONTHLY_COLUMNS,
                  rows, currency_of(summary))


def price_table(summary: Mapping[str, Any]) -> Table:
    """Every price each plan relied on, with its source and date."""
    prices = displayed(summary)["inputs"]["prices_used"]
    rows = tuple((plan, *(_cell(price[c.key]) for c in PRICE_COLUMNS[1:]))
                 for plan, used in prices.items() for price in used)
    return _table("prices", "Prices used", PRICE_COLUMNS, rows, currency_of(summary))


def basis_table(summary: Mapping[str, Any]) -> Table:
    """Per plan and phase, what its performance figure rests on (prior, measured, mixed or
    stated) and the error drawn on it (docs/report.md)."""
    rows = tuple((plan["name"], *(_cell(basis[c.key]) for c in BASIS_COLUMNS[1:]))
                 for plan in summary["plans"] for basis in plan.get("performance_basis", []))
    return Table("performance_basis", "What the performance figures rest on", BASIS_COLUMNS,
                 rows)


def default_table(summary: Mapping[str, Any]) -> Table:
    """Every engine default the run relied on, with its source."""
    rows = tuple(tuple(_cell(default[c.key]) for c in DEFAULT_COLUMNS)
                 for default in summary["inputs"]["defaults_used"])
    return Table("defaults", "Defaults used", DEFAULT_COLUMNS, rows)


def _cell(value: Any) -> Cell:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
