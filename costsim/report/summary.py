"""``summary.json``: the ``run --json`` document (docs/report.md), plus what a later ``diff`` needs.

Built from a :class:`~costsim.sim.run_result.RunResult` only. Amounts are the simulator's, already
rounded to the cent (the ledger's lines add up to ``cost_usd.mean`` exactly); they are copied, never
re-rounded. Derived figures that are not money (GPU-hours, rates, shares) are rounded for reading.
The document is deterministic for the same inputs and seed, except ``wall_s`` and
``generated_at``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from datetime import date
from enum import Enum
from typing import Any

from costsim.domain.currency import currency_json
from costsim.sim.api_serving import ApiComparison
from costsim.sim.ledger import Ledger, LedgerLine
from costsim.sim.montecarlo import PlanMetrics, PlanResult, Stats
from costsim.sim.results import DefaultUsed, PerformanceBasis, PriceUsed
from costsim.sim.run_result import RunResult
from costsim.units import SECONDS_PER_DAY

JsonDict = dict[str, Any]

GPU_HOURS_DIGITS = 3  # a thousandth of a GPU-hour: 3.6 s, below any billing granularity
RATE_DIGITS = 4  # price books quote to the tenth of a cent per hour at most
FACTOR_DIGITS = 4  # the shipped log-sds have 4 digits (costsim/data/allin_loss.csv)


def summary_json(run: RunResult, *, generated_at: str) -> JsonDict:
    """The summary of a run (``run --json`` and ``summary.json``, docs/report.md)."""
    return {
        "scenario": run.scenario.name,
        "scenario_sha256": run.scenario_sha256,
        "costsim_version": run.costsim_version,
        "price_book_date": run.price_book_date,
        # the display currency (DESIGN §5): every _usd key stays in USD
        **currency_json(run.scenario.currency),
        "seed": run.seed,
        "replications": run.replications,
        "baseline": run.baseline,
        "recommended": {
            "plan": run.recommendation.plan,
            "reason": run.recommendation.reason,
            "passed_over": [{"plan": plan, "reason": reason}
                            for plan, reason in run.recommendation.passed_over],
        },
        "horizon": {"start": run.scenario.calendar.start.isoformat(),
                    "months": run.scenario.calendar.horizon_months},
        "budget_usd": run.scenario.budget_usd,
        "discount_rate_pct_per_year": run.scenario.discount_rate_pct_per_year,
        "warnings": list(run.warnings),
        "plans": [plan_json(plan) for plan in run.plans],
        "inputs": inputs_json(run),
        "stats": {"events": run.events, "wall_s": run.wall_s, "replications": run.replications,
                  "seed": run.seed},
        "generated_at": generated_at,
    }


def plan_json(plan: PlanResult) -> JsonDict:
    """One plan of the summary (an infeasible plan: its reasons, every figure null)."""
    ledger = plan.ledger
    return {
        "name": plan.name,
        "feasible": plan.feasible,
        "infeasible_reasons": list(plan.infeasible_reasons),
        "warnings": list(plan.warnings),
        "replications": plan.replications,
        "cost_usd": stats_json(plan.cost_usd),
        "cash_usd": None if plan.cash_usd_mean is None else {"mean": plan.cash_usd_mean},
        "npv_usd": None if plan.npv_usd_mean is None else {"mean": round(plan.npv_usd_mean, 2)},
        "p_over_budget": plan.p_over_budget,
        "p_deadline_missed": plan.p_deadline_missed,
        "cost_per_training_run_usd": plan.cost_per_training_run_usd,
        "cost_per_million_tokens_usd": _round(plan.cost_per_million_tokens_usd, RATE_DIGITS),
        "cost_per_million_output_tokens_usd": _round(plan.cost_per_million_output_tokens_usd,
                                                     RATE_DIGITS),
        "finish_days": stats_json(plan.finish_s, scale=1 / SECONDS_PER_DAY, digits=2),
        "training_gpu_hours": stats_json(plan.training_gpu_hours, digits=GPU_HOURS_DIGITS),
        "ledger": [] if ledger is None else [_line(line) for line in ledger.lines],
        "monthly": [] if ledger is None else _monthly(ledger),
        "by_category": {} if ledger is None else {
            str(cat): usd for cat, usd in sorted(ledger.by_category().items())},
        "by_budget_group": {} if ledger is None else dict(sorted(
            ledger.by_budget_group().items())),
        "metrics": None if plan.metrics is None else _metrics(plan.metrics),
        "pools": [{"pool": p.pool, "gpu": p.gpu, "option": p.option,
                   "paid_gpu_hours": round(p.paid_gpu_hours, GPU_HOURS_DIGITS),
                   "used_gpu_hours": round(p.used_gpu_hours, GPU_HOURS_DIGITS),
                   "utilization": round(p.utilization, 6)} for p in plan.pools],
        "reserved_by_month": [
            {"month": month, "committed_gpu_hours": round(committed, GPU_HOURS_DIGITS),
             "used_gpu_hours": round(used, GPU_HOURS_DIGITS)}
            for month, committed, used in plan.reserved_by_month],
        "cumulative_cash_usd": [{"month": month, **(stats_json(stats, digits=2) or {})}
                                for month, stats in plan.cumulative_cash_usd_by_month],
        "events": plan.events,
        "estimated_inputs": estimated_inputs_json(plan),
        "api_comparison": [api_comparison_json(c) for c in plan.api_comparison],
        "performance_basis": [performance_basis_json(b) for b in plan.performance_basis],
        # the training phases' steady rates and their basis (DESIGN §12), when the scenario
        # has measured training runs
        **({"training_rates": [
            {"phase": r.phase, "gpu": r.gpu, "gpus": r.gpus,
             "tokens_per_s": round(r.tokens_per_s, 3), "basis": r.basis,
             "profile_source": r.profile_source or None} for r in plan.training_rates]}
           if plan.training_rates else {}),
    }


def api_comparison_json(c: ApiComparison) -> JsonDict:
    """Self-host vs API for one serving phase (docs/pricing.md "Pay-per-token APIs")."""
    return {
        "phase": c.phase, "model": c.model, "plan_serves_on": c.plan_serves_on,
        "self_host_gpu": c.self_host_gpu,
        "self_host_cost_per_million_tokens_usd": _round(
            c.self_host_cost_per_million_tokens_usd, RATE_DIGITS),
        "api_provider": c.api_provider,
        "api_cost_per_million_tokens_usd": _round(c.api_cost_per_million_tokens_usd,
                                                  RATE_DIGITS),
        "api_price_estimate": c.api_price_estimate,
        "replica_usd_per_hour": _round(c.replica_usd_per_hour, RATE_DIGITS),
        "replica_requests_per_s": _round(c.replica_requests_per_s, RATE_DIGITS),
        "breakeven_requests_per_s": _round(c.breakeven_requests_per_s, RATE_DIGITS),
        "peak_requests_per_s": c.peak_requests_per_s,
    }


def estimated_inputs_json(plan: PlanResult) -> list[JsonDict]:
    """What the plan's figures rest on that is costsim's estimate, not a price (its figures
    are marked ``~`` in the tables): phase, pool, option, flag and source of each."""
    return [{"phase": e.phase, "pool": e.pool, "option": e.option, "flag": e.flag,
             "source": e.source} for e in plan.estimated_inputs]


def performance_basis_json(basis: PerformanceBasis) -> JsonDict:
    """What one phase's performance figure rests on and the error drawn on it (docs/report.md
    "What the performance figures rest on"); log-sd and factors to 4 digits."""
    return {"phase": basis.phase, "kind": basis.kind, "basis": basis.basis,
            "sigma": _round(basis.sigma, FACTOR_DIGITS),
            "p10_factor": round(basis.p10_factor, FACTOR_DIGITS),
            "p90_factor": round(basis.p90_factor, FACTOR_DIGITS),
            "predicted_share": round(basis.predicted_share, FACTOR_DIGITS),
            "error": basis.error, "source": basis.source}


def inputs_json(run: RunResult) -> JsonDict:
    """What the run rested on, for ``diff``: the resolved scenario (as the loader gave it, or
    built from the domain objects when the run was not loaded from a file), and per plan the
    prices and the engine defaults used, each with its source."""
    scenario = dict(run.inputs) if run.inputs else jsonable(run.scenario)
    out = {
        **scenario,
        "prices_used": {plan.name: [price_json(price) for price in plan.prices]
                        for plan in run.plans},
        "defaults_used": [default_json(default) for default in run.defaults],
    }
    measured = measured_inputs_json(run)
    if measured is not None:
        out["measured_inputs"] = measured
    return out


def measured_inputs_json(run: RunResult) -> JsonDict | None:
    """The measurement files a run read and, per plan, the figures they replaced (DESIGN §12);
    None when the scenario names no measurement file."""
    m = run.scenario.measurements
    if not m.serving_files and not m.training_files:
        return None
    return {
        "files": {"serving": list(m.serving_files), "training": list(m.training_files)},
        "points": {"serving": len(m.serving), "training": len(m.training)},
        "used": {plan.name: [{"phase": u.phase, "gpu": u.gpu, "figure": u.figure,
                              "basis": u.basis, "source": u.source} for u in plan.measured]
                 for plan in run.plans},
    }


def price_json(price: PriceUsed) -> JsonDict:
    """One price a plan used; ``name`` identifies it within the plan (diff paths use it)."""
    return {
        "name": " ".join(part for part in (price.phase or "plan", price.pool, price.option)
                         if part),
        "phase": price.phase, "pool": price.pool, "gpu": price.gpu, "option": price.option,
        "rate_usd_per_gpu_hour": price.rate_usd_per_gpu_hour, "upfront_usd": price.upfront_usd,
        "source": price.source, "effective_date": price.effective_date,
        "estimate": price.estimate, "flags": list(price.flags),
        **({} if price.usd_per_gb is None else {"usd_per_gb": price.usd_per_gb}),
        **({} if price.input_usd_per_million_tokens is None else {
            "input_usd_per_million_tokens": price.input_usd_per_million_tokens,
            "output_usd_per_million_tokens": price.output_usd_per_million_tokens}),
    }


def default_json(default: DefaultUsed) -> JsonDict:
    """One engine default the run used, with its source."""
    return {"key": default.key, "value": default.value, "source": default.source,
            "estimate": default.estimate}


def jsonable(value: object) -> Any:
    """A domain value as JSON: dataclasses as objects, enums as their values, dates as ISO
    strings, tuples as lists; non-finite floats as null (JSON has no infinity)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return jsonable(value.value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        items = sorted(value, key=str) if isinstance(value, frozenset | set) else value
        return [jsonable(item) for item in items]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _line(line: LedgerLine) -> JsonDict:
    key = line.key
    return {"phase": key.phase, "pool": key.pool, "gpu": key.gpu, "option": key.option,
            "category": str(key.category), "component": str(key.component),
            "gpu_hours": round(line.gpu_hours, GPU_HOURS_DIGITS),
            "rate_usd_per_gpu_hour": round(line.rate_usd_per_gpu_hour, RATE_DIGITS),
            "amount_usd": line.amount_usd}


def _monthly(ledger: Ledger) -> list[JsonDict]:
    return [{"month": row.month, "cash_usd": row.cash_usd, "capex_usd": row.capex_usd,
             "opex_usd": row.opex_usd, "amortized_usd": row.amortized_usd}
            for row in ledger.months]


def _metrics(metrics: PlanMetrics) -> JsonDict:
    return {
        "gpu_hours_used": round(metrics.gpu_hours_used, GPU_HOURS_DIGITS),
        "gpu_hours_paid": round(metrics.gpu_hours_paid, GPU_HOURS_DIGITS),
        "reserved_utilization": _round(metrics.reserved_utilization, 6),
        "stranded_commitment_usd": metrics.stranded_commitment_usd,
        "queue_wait_p95_s": _round(metrics.queue_wait_p95_s, 1),
        "slo_attainment": _round(metrics.slo_attainment, 6),
    }


def stats_json(stats: Stats | None, *, scale: float = 1.0, digits: int | None = None
               ) -> JsonDict | None:
    """Mean and P10/P50/P90 (scaled, rounded to ``digits`` when given); None stays None."""
    if stats is None:
        return None
    values = {"mean": stats.mean, "p10": stats.p10, "p50": stats.p50, "p90": stats.p90}
    return {key: value * scale if digits is None else round(value * scale, digits)
            for key, value in values.items()}


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
