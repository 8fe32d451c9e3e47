"""Serving phases on a pay-per-token API (``option: api``), and self-host vs API per phase.

Prepared once per plan (:func:`prepare_api`): the provider's price row for the phase's model
(the scenario's price file first, then ``costsim/data/api_prices.csv``), its rate limit as the
capacity bound, its latency (the plan's figure, else the provider's published one) checked
against the phase's SLO. Simulated hour by hour (:func:`run_api_serving`) on the phase's load:
the requests within the rate limit are served, the rest are not (SLO attainment shows them);
each month's served tokens are booked at the provider's prices, input and output apart, as
ledger category ``api-usage``. API prices are held at their published figures over the horizon
(the scenario's ``price_drift_pct_per_year`` moves GPU rental rates only).

Self-host vs API (:func:`api_comparisons_of`): for each serving phase, the simulated cost per 1M
tokens of how the plan serves it beside the other way's, and the request rate above which
self-hosting costs no more (:func:`costsim.domain.api_pricing.breakeven_requests_per_s`).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from costsim.catalog.api_prices import api_price_table, cheapest_api_price, find_api_price
from costsim.domain.api_pricing import (
    ApiPrice,
    ApiUse,
    breakeven_requests_per_s,
    rate_limit_requests_per_s,
)
from costsim.domain.phases import ServingPhase
from costsim.domain.scenario import Scenario
from costsim.errors import CostsimError
from costsim.sim.ledger import Category, Component, line_key
from costsim.sim.load import hourly_rates, resolve_shape
from costsim.sim.occupancy import interval_gpus
from costsim.sim.pools import CommitmentPool, RentalPool
from costsim.sim.results import FleetProfile, ServingRecord
from costsim.units import SECONDS_PER_HOUR

if TYPE_CHECKING:  # the context imports prepare, which imports this module
    from costsim.sim.context import RunContext
    from costsim.sim.prepare import PreparedPlan, ServingPrep


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiPhasePrep:
    """A serving phase on a pay-per-token API: the price row and the figures the plan uses."""

    price: ApiPrice
    use: ApiUse
    prompt_tokens: float  # mean per request over the phase's request sizes
    output_tokens: float
    capacity_requests_per_s: float  # the rate limit (inf: none)
    ttft_s: float | None  # the plan's figure, else the provider's published one
    output_tokens_per_s: float | None
    warnings: tuple[str, ...] = ()

    @property
    def pool(self) -> str:
        """The ledger's pool name of the API."""
        return f"{self.price.provider} API"


def model_keys(scenario: Scenario, phase: ServingPhase) -> tuple[str, ...]:
    """The names an API price row may give the phase's model: its costsim preset, then the
    scenario's own name for it (for a model from a config file)."""
    reference = scenario.model(phase.model).reference
    keys = [reference.split(":", 1)[1]] if reference.startswith("preset:") else []
    return (*keys, phase.model)


def table_for(scenario: Scenario) -> tuple[ApiPrice, ...]:
    """The API price table of ``scenario``: shipped rows with its price file's."""
    return api_price_table(scenario.prices.overrides.api_prices)


def mean_request(phase: ServingPhase) -> tuple[float, float]:
    """The share-weighted mean prompt and output tokens of the phase's requests."""
    total = math.fsum(b.share for b in phase.requests)
    prompt = math.fsum(b.share * b.prompt_tokens for b in phase.requests) / total
    output = math.fsum(b.share * b.output_tokens for b in phase.requests) / total
    return prompt, output


def prepare_api(scenario: Scenario, plan_name: str, phase: ServingPhase, use: ApiUse,
                reasons: list[str]) -> ApiPhasePrep | None:
    """The API phase's price, rate limit and latency; None (with the reason) when the provider
    has no price for the model or its latency breaks the phase's SLO."""
    where = f"plan '{plan_name}', phase '{phase.name}'"
    table = table_for(scenario)
    price: ApiPrice | None = None
    problem = ""
    keys = model_keys(scenario, phase)
    for key in keys:
        try:
            price = find_api_price(table, use.provider, key)
            break
        except CostsimError as error:
            problem = str(error)
    if price is None:
        reasons.append(f"{where}: {problem}")
        return None
    prompt, output = mean_request(phase)
    rpm = use.requests_per_minute or price.requests_per_minute
    tpm = use.tokens_per_minute or price.tokens_per_minute
    ttft = use.ttft_s or price.ttft_s
    speed = use.output_tokens_per_s or price.output_tokens_per_s
    slo = phase.slo
    bad = []
    # the providers publish medians; with no published tail the median is held to the p95
    # objective (a median that alone breaks it cannot meet it)
    if slo.ttft_p95_s is not None and ttft is not None and ttft > slo.ttft_p95_s:
        bad.append(f"time to first token {ttft:g} s > the SLO's {slo.ttft_p95_s:g} s")
    if slo.tpot_p95_s is not None and speed is not None and 1 / speed > slo.tpot_p95_s:
        bad.append(f"time per output token {1 / speed:.4g} s ({speed:g} tokens/s) > the "
                   f"SLO's {slo.tpot_p95_s:g} s")
    if bad:
        reasons.append(f"{where}: the {price.provider} API's median latency cannot meet the "
                       f"SLO: {'; '.join(bad)}")
        return None
    warnings = []
    unknown = [name for name, value, objective in (
        ("time to first token", ttft, slo.ttft_p95_s),
        ("output speed", speed, slo.tpot_p95_s)) if objective is not None and value is None]
    if unknown:
        warnings.append(f"phase '{phase.name}': the {price.provider} API publishes no "
                        f"{' or '.join(unknown)}, so its SLO is not checked (give ttft_s / "
                        f"output_tokens_per_s on the use entry)")
    return ApiPhasePrep(price=price, use=use, prompt_tokens=prompt, output_tokens=output,
                        capacity_requests_per_s=rate_limit_requests_per_s(rpm, tpm,
                                                                          prompt + output),
                        ttft_s=ttft, output_tokens_per_s=speed, warnings=tuple(warnings))


def run_api_serving(ctx: RunContext, prep: ServingPrep) -> Generator[Any, Any, float]:
    """Serve the phase on the API hour by hour; returns the end time (as run_serving does)."""
    env, phase, api = ctx.env, prep.phase, prep.api
    assert api is not None
    start = env.now
    duration = ctx.prep.scenario.calendar.months_s(phase.duration_months)
    natural_end = start + duration
    end = min(natural_end, ctx.horizon_s)
    h0, cover = interval_gpus(ctx.hours, start, end, 1.0)
    growth = ctx.draws.get("demand_growth_pct_per_month")
    shape = resolve_shape(phase.load, ctx.prep.sim_defaults, growth)
    rates = hourly_rates(shape, ctx.prep.scenario.calendar.start, start, cover.size)
    seconds = cover * SECONDS_PER_HOUR
    offered = rates * seconds
    served = np.minimum(rates, api.capacity_requests_per_s) * seconds
    book_api_usage(ctx, phase.name, api, h0, served)
    total = float(served.sum())
    ctx.serving.append(ServingRecord(
        phase=phase.name, requests=float(offered.sum()), served_within_slo=total,
        tokens_served=total * (api.prompt_tokens + api.output_tokens),
        output_tokens_served=total * api.output_tokens, replica_hours=0.0, cost_usd=0.0,
        replicas_by_hour=tuple(0 for _ in range(cover.size)) if ctx.keep_fleet else (),
        fleet=FleetProfile.of(h0, np.zeros(cover.size, dtype=np.int64))))
    yield env.timeout(end - start)
    return natural_end


def book_api_usage(ctx: RunContext, phase: str, api: ApiPhasePrep, h0: int,
                   served: np.ndarray) -> None:
    """Book ``served[i]`` requests of hour ``h0 + i``: per month, their input tokens × the
    input price + their output tokens × the output price."""
    end = min(ctx.hours, h0 + len(served))
    if end <= h0:
        return
    per_month = np.bincount(ctx.month_of_hour[h0:end], weights=served[: end - h0],
                            minlength=len(ctx.month_hours))
    key = line_key(phase, api.pool, "", "api", Category.API_USAGE, Component.API_TOKENS)
    for month in np.nonzero(per_month)[0]:
        requests = float(per_month[month])
        ctx.book.spend(key, int(month), requests * api.price.usd_per_request(
            api.prompt_tokens, api.output_tokens))


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiComparison:
    """Self-host vs API for one serving phase of one plan (mean over the replications).

    ``plan_serves_on``: ``api`` or ``self-host``; the simulated side is the plan's own, the
    other is the cheapest published API for the model (when the plan self-hosts) or absent
    (when the plan calls an API: no GPU to price). ``breakeven_requests_per_s``: the rate above
    which self-hosting on the plan's first GPU entry costs no more than the API at every rate
    (None: the API is cheaper at every rate, or the entry has no hourly price: owned or a plan
    commitment)."""

    phase: str
    model: str
    plan_serves_on: str
    self_host_cost_per_million_tokens_usd: float | None
    api_provider: str | None
    api_cost_per_million_tokens_usd: float | None
    api_price_estimate: bool
    self_host_gpu: str | None = None
    replica_usd_per_hour: float | None = None
    replica_requests_per_s: float | None = None
    breakeven_requests_per_s: float | None = None
    peak_requests_per_s: float = 0.0


def api_comparisons_of(prep: PreparedPlan, served: Mapping[str, tuple[float, float]]
                       ) -> tuple[ApiComparison, ...]:
    """Self-host vs API for every serving phase of a simulated plan, from each serving
    phase's tokens served and cost, each summed exactly (``math.fsum``) over the replications
    (a phase absent from ``served``: none)."""
    from costsim.sim.prepare import ServingPrep

    scenario = prep.scenario
    table = table_for(scenario)
    out = []
    for name, phase_prep in prep.phases.items():
        if not isinstance(phase_prep, ServingPrep):
            continue
        phase = phase_prep.phase
        tokens, cost = served.get(name, (0.0, 0.0))
        simulated = cost / tokens * 1e6 if tokens > 0 else None
        prompt, output = mean_request(phase)
        peak = phase.load.peak_requests_per_s
        model = model_keys(scenario, phase)[0]
        if phase_prep.api is not None:
            api = phase_prep.api
            out.append(ApiComparison(
                phase=name, model=model, plan_serves_on="api",
                self_host_cost_per_million_tokens_usd=None, api_provider=api.price.provider,
                api_cost_per_million_tokens_usd=simulated,
                api_price_estimate=api.price.estimate, peak_requests_per_s=peak))
            continue
        best = None
        for key in model_keys(scenario, phase):
            best = cheapest_api_price(table, key, prompt, output)
            if best is not None:
                break
        entry = phase_prep.entries[0] if phase_prep.entries else None
        replica_usd = (None if entry is None
                       else replica_usd_per_hour(entry.source.price_pool, entry.gpus_per_replica))
        capacity = None if entry is None else entry.sizing_capacity_s
        breakeven = None
        if best is not None and replica_usd is not None and capacity is not None:
            breakeven = breakeven_requests_per_s(replica_usd, capacity,
                                                 best.usd_per_request(prompt, output))
        out.append(ApiComparison(
            phase=name, model=model, plan_serves_on="self-host",
            self_host_cost_per_million_tokens_usd=simulated,
            api_provider=None if best is None else best.provider,
            api_cost_per_million_tokens_usd=(None if best is None
                                             else best.usd_per_million_tokens(prompt, output)),
            api_price_estimate=best is not None and best.estimate,
            self_host_gpu=None if entry is None else entry.source.gpu,
            replica_usd_per_hour=replica_usd, replica_requests_per_s=capacity,
            breakeven_requests_per_s=breakeven, peak_requests_per_s=peak))
    return tuple(out)


def api_warnings(prep: PreparedPlan) -> tuple[str, ...]:
    """What the plan's API phases need a reader to know (latency not checked)."""
    from costsim.sim.prepare import ServingPrep

    return tuple(w for p in prep.phases.values()
                 if isinstance(p, ServingPrep) and p.api is not None for w in p.api.warnings)


def replica_usd_per_hour(pool: RentalPool | CommitmentPool | None,
                         gpus_per_replica: int) -> float | None:
    """What one replica costs an hour as billed (whole instances when rented); None for
    capacity without an hourly price (owned servers, the plan's own commitments)."""
    if pool is None:
        return None
    if isinstance(pool, RentalPool):
        return pool.rate_usd_per_gpu_hour * pool.gpus_paid_for(gpus_per_replica)
    return pool.rate_usd_per_gpu_hour * gpus_per_replica
