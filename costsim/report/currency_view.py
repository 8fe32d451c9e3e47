"""A summary document's money in the scenario's display currency, for the files people read.

``summary.json`` stays in USD (DESIGN §5) and names ``currency`` and ``fx_rate_per_usd`` at its
top; the tables (CSV, XLSX), the HTML page and the text views show the same document converted
by :func:`displayed`, with the rule of :mod:`costsim.domain.currency`: each amount converted on
its own and rounded to the currency's minor unit; a total shown beside its lines (a plan's
economic cost beside its ledger, a category's sum, a month's cash beside its capex and opex,
the horizon's cash beside its months) is the sum of its converted lines, so every converted
view adds up as the USD one does. The converted document keeps the ``_usd`` key names (it is
never written as JSON); the tables rename their columns (``amount_eur``) with
:func:`column_key` and :func:`column_label`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from costsim.domain.currency import Currency, currency_of

JsonDict = dict[str, Any]


def displayed(summary: Mapping[str, Any]) -> Mapping[str, Any]:
    """``summary`` with every amount and rate in its display currency (the document itself
    when that is USD)."""
    currency = currency_of(summary)
    if currency.is_usd:
        return summary
    out: JsonDict = copy.deepcopy(dict(summary))
    if out.get("budget_usd") is not None:
        out["budget_usd"] = currency.amount(out["budget_usd"])
    out["plans"] = [displayed_plan(plan, currency) for plan in out.get("plans", [])]
    inputs = out.get("inputs")
    if isinstance(inputs, dict) and isinstance(inputs.get("prices_used"), dict):
        inputs["prices_used"] = {name: [_price(p, currency) for p in used]
                                 for name, used in inputs["prices_used"].items()}
    return out


def displayed_plan(plan: Mapping[str, Any], currency: Currency) -> JsonDict:
    """One summary plan (a ``plan_json`` dict) in ``currency``."""
    out = dict(plan)
    ledger = [{**line, "amount_usd": currency.amount(line["amount_usd"]),
               "rate_usd_per_gpu_hour": currency.rate(line["rate_usd_per_gpu_hour"])}
              for line in plan.get("ledger", [])]
    out["ledger"] = ledger
    monthly = []
    for row in plan.get("monthly", []):
        capex, opex = currency.amount(row["capex_usd"]), currency.amount(row["opex_usd"])
        monthly.append({**row, "capex_usd": capex, "opex_usd": opex,
                        "cash_usd": _sum((capex, opex)),
                        "amortized_usd": currency.amount(row["amortized_usd"])})
    out["monthly"] = monthly
    cost = plan.get("cost_usd")
    if cost:
        out["cost_usd"] = {**{k: currency.amount(v) for k, v in cost.items()},
                           **({"mean": _sum(line["amount_usd"] for line in ledger)}
                              if ledger else {})}
    if plan.get("cash_usd"):
        out["cash_usd"] = {"mean": _sum(row["cash_usd"] for row in monthly) if monthly
                           else currency.amount(plan["cash_usd"]["mean"])}
    if plan.get("npv_usd"):
        out["npv_usd"] = {"mean": currency.amount(plan["npv_usd"]["mean"])}
    for key in ("cost_per_training_run_usd",):
        if plan.get(key) is not None:
            out[key] = currency.amount(plan[key])
    for key in ("cost_per_million_tokens_usd", "cost_per_million_output_tokens_usd"):
        if plan.get(key) is not None:
            out[key] = currency.rate(plan[key])
    if ledger:
        sums: dict[str, list[float]] = {}
        for line in ledger:
            sums.setdefault(str(line["category"]), []).append(line["amount_usd"])
        out["by_category"] = {cat: _sum(amounts) for cat, amounts in sorted(sums.items())}
    out["by_budget_group"] = {k: currency.amount(v)
                              for k, v in plan.get("by_budget_group", {}).items()}
    metrics = plan.get("metrics")
    if metrics and metrics.get("stranded_commitment_usd") is not None:
        out["metrics"] = {**metrics, "stranded_commitment_usd":
                          currency.amount(metrics["stranded_commitment_usd"])}
    out["cumulative_cash_usd"] = [
        {k: v if k == "month" or v is None else currency.amount(v) for k, v in row.items()}
        for row in plan.get("cumulative_cash_usd", [])]
    return out


def _sum(amounts: Any) -> float:
    """Amounts already rounded to a minor unit (at most 3 decimals), summed without drift."""
    return float(sum(round(a * 1000) for a in amounts) / 1000)


def _price(price: Mapping[str, Any], currency: Currency) -> JsonDict:
    out = {**price, "rate_usd_per_gpu_hour": currency.rate(price["rate_usd_per_gpu_hour"])}
    if price.get("upfront_usd") is not None:
        out["upfront_usd"] = currency.amount(price["upfront_usd"])
    if price.get("usd_per_gb") is not None:
        out["usd_per_gb"] = currency.rate(price["usd_per_gb"])
    return out


def column_key(key: str, currency: Currency) -> str:
    """A machine column name in ``currency``: ``amount_usd`` → ``amount_eur``,
    ``rate_usd_per_gpu_hour`` → ``rate_eur_per_gpu_hour`` (unchanged in USD)."""
    return key.replace("_usd", f"_{currency.suffix}")


def column_label(label: str, currency: Currency) -> str:
    """A column's label in ``currency``: ``Amount (USD)`` → ``Amount (EUR)``."""
    return label.replace("(USD", f"({currency.code}")
