"""``costsim prices --breakeven --model M --gpu G``: self-hosting a model on a GPU against every
pay-per-token API that prices it, as a table or JSON.

The replica is the simulator's (:func:`costsim.sim.serving_prep.replica_capacities`: the
performance model's size and requests/s under the default SLO and target utilization) on the
cheapest unflagged on-demand offering (whole instances); the API side is each provider's price
per request of ``--prompt-tokens`` + ``--output-tokens`` (costsim/data/api_prices.csv and
``--price-file`` when it holds API rows). Self-hosting wins above the rate of
:func:`costsim.domain.api_pricing.breakeven_requests_per_s`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from costsim.cli.common import EXIT_OK, format_table, print_json

if TYPE_CHECKING:
    from costsim.catalog.prices import PriceBook

DEFAULT_PROMPT_TOKENS = 512  # as estimate serve (costsim.cli.flags)
DEFAULT_OUTPUT_TOKENS = 256


def show_api_breakeven(args: argparse.Namespace, book: PriceBook) -> int:
    """Print the model on ``--gpu`` against the APIs that price it."""
    print_json({"api_breakeven": api_breakeven(args, book)}) if args.json else _print(
        api_breakeven(args, book))
    return EXIT_OK


def api_breakeven(args: argparse.Namespace, book: PriceBook) -> dict[str, Any]:
    """The comparison as the JSON ``api_breakeven`` object."""
    from costsim.catalog.api_prices import api_price_table
    from costsim.catalog.gpus import get_gpu
    from costsim.catalog.models import load_preset
    from costsim.catalog.perf_defaults import perf_defaults
    from costsim.domain.api_pricing import breakeven_requests_per_s
    from costsim.domain.phases import LoadProfile, RequestBucket, ServingPhase
    from costsim.domain.pricing import PurchaseOption
    from costsim.errors import InputError
    from costsim.sim.api_serving import replica_usd_per_hour
    from costsim.sim.pools import rental_pool
    from costsim.sim.serving_prep import replica_capacities

    if args.gpu is None:
        raise InputError("--model", "", "--breakeven --model compares self-hosting on a GPU "
                         "with the APIs: give --gpu too")
    prompt = DEFAULT_PROMPT_TOKENS if args.prompt_tokens is None else args.prompt_tokens
    output = DEFAULT_OUTPUT_TOKENS if args.output_tokens is None else args.output_tokens
    if output < 1:
        raise InputError("--output-tokens", "", f"a request generates at least 1 token, got "
                         f"{output}")
    preset = load_preset(args.model, source="--model")
    gpu = get_gpu(args.gpu, source="--gpu")
    phase = ServingPhase(name="serve", duration_months=1, model=preset.name,
                         load=LoadProfile(peak_requests_per_s=1.0),
                         requests=(RequestBucket(share=1.0, prompt_tokens=prompt,
                                                 output_tokens=output),))
    replica = replica_capacities(preset.architecture, gpu, phase, perf_defaults())
    capacity = replica.sizing_requests_per_s[0]
    tp = replica.gpus_per_replica
    pool = rental_pool(book, gpu.name, tp, PurchaseOption.ON_DEMAND, cloud=args.cloud,
                       region=args.region)
    replica_usd = replica_usd_per_hour(pool, tp) or 0.0
    self_host = (replica_usd / (capacity * 3600) / (prompt + output) * 1e6
                 if capacity > 0 else None)
    rows = [row for row in api_price_table(book.overrides.api_prices) if row.model == preset.name]
    apis = []
    for row in sorted(rows, key=lambda r: (r.usd_per_request(prompt, output), r.provider)):
        per_request = row.usd_per_request(prompt, output)
        apis.append({
            "provider": row.provider, "provider_model_id": row.provider_model_id,
            "input_usd_per_million_tokens": row.input_usd_per_million_tokens,
            "output_usd_per_million_tokens": row.output_usd_per_million_tokens,
            "cost_per_million_tokens_usd": round(row.usd_per_million_tokens(prompt, output), 6),
            "breakeven_requests_per_s": (None if capacity <= 0 else _round(
                breakeven_requests_per_s(replica_usd, capacity, per_request))),
            "requests_per_minute": row.requests_per_minute,
            "tokens_per_minute": row.tokens_per_minute, "ttft_s": row.ttft_s,
            "output_tokens_per_s": row.output_tokens_per_s, "estimate": row.estimate,
            "estimated": list(row.estimated), "source": row.source,
            "effective_date": row.effective_date})
    return {"model": preset.name, "gpu": gpu.name, "prompt_tokens": prompt,
            "output_tokens": output, "gpus_per_replica": tp,
            "replica_requests_per_s": round(capacity, 6),
            "replica_usd_per_hour": round(replica_usd, 6),
            "offering": f"{pool.offering.cloud} {pool.offering.region} "
                        f"{pool.offering.instance_type}",
            "self_host_cost_per_million_tokens_usd_at_full_load": _round(self_host),
            "apis": apis}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _print(result: dict[str, Any]) -> None:
    from costsim.cli.numbers import usd_rate

    print(f"{result['model']} on {result['gpu']}: a replica of {result['gpus_per_replica']} "
          f"GPU(s) serves {result['replica_requests_per_s']:.3g} requests/s of "
          f"{result['prompt_tokens']}+{result['output_tokens']} tokens for "
          f"${usd_rate(result['replica_usd_per_hour'])}/h on-demand ({result['offering']})")
    full = result["self_host_cost_per_million_tokens_usd_at_full_load"]
    print(f"self-hosted at full load: "
          f"{'—' if full is None else '$' + usd_rate(full)} per 1M tokens")
    rows = [(a["provider"], f"{'~' if a['estimate'] else ''}"
             f"${usd_rate(a['cost_per_million_tokens_usd'])}",
             "never" if a["breakeven_requests_per_s"] is None
             else f"{a['breakeven_requests_per_s']:,.2f} req/s",
             "—" if a["requests_per_minute"] is None else f"{a['requests_per_minute']:,.0f}",
             a["effective_date"]) for a in result["apis"]]
    if not rows:
        print(f"no API in the price book prices {result['model']}")
        return
    print(format_table(rows, ("API provider", "$/1M tok", "self-hosting wins above",
                              "limit req/min", "price date"), right_align=(1, 2, 3)))
    print("~ an estimated price (costsim/data/api_prices.csv); 'never': the API costs less per "
          "request than a fully loaded replica")
