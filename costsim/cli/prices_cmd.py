"""``costsim prices``: the price book per purchase option, with sources, dates and flags."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costsim.cli.common import EXIT_OK, add_json_flag, examples, format_table, print_json
from costsim.cli.flags import value_argtype
from costsim.cli.ranges import CLOUD_NAMES, FLAG_RANGES

if TYPE_CHECKING:
    from costsim.catalog.prices import PriceBook
    from costsim.domain.pricing import Offering, PurchaseOption, Quote

# The table fits a 120-column terminal (long regions and instance types are cut); --json has all.
TABLE_WIDTH = 120

_SHORT = {
    "on-demand": "on-demand",
    "spot": "spot",
    "reserved-1y-no-upfront": "1y-no",
    "reserved-1y-partial-upfront": "1y-part",
    "reserved-1y-all-upfront": "1y-all",
    "reserved-3y-no-upfront": "3y-no",
    "reserved-3y-partial-upfront": "3y-part",
    "reserved-3y-all-upfront": "3y-all",
    "owned": "owned",
}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``costsim prices``."""
    prices = commands.add_parser(
        "prices", help="the price book: $/GPU-hour per purchase option, with sources",
        description=(
            "List offerings with their $/GPU-hour for every purchase option (on-demand, spot, "
            "reserved 1y/3y with no/partial/all upfront, owned), sorted by price, with source, "
            "effective date and data-quality flags. --breakeven compares owning a server with "
            "renting."),
        epilog=examples("costsim prices --gpu H100 --option on-demand --limit 10",
                        "costsim prices --gpu A100 --cloud aws --region us-east-1 --json",
                        "costsim prices --breakeven --gpu H100 --discount-pct 10",
                        "costsim prices --breakeven --model llama-3.1-8b --gpu L4"),
    )
    prices.add_argument("--gpu", metavar="NAME",
                        help="canonical GPU name, alias, or the name nvidia-smi prints "
                             "(default: all)")
    prices.add_argument("--cloud", metavar="CLOUD",
                        help=f"{' | '.join(CLOUD_NAMES)} (default: all; marketplaces such as "
                             "vast only when named)")
    prices.add_argument("--region", metavar="REGION",
                        help="a provider region as this table lists it, e.g. us-east-1 "
                             "(default: all)")
    prices.add_argument("--option", metavar="OPTION",
                        help="on-demand | spot | reserved-{1y,3y}-{no,partial,all}-upfront | "
                             "owned (default: all)")
    prices.add_argument("--count", type=int, metavar="N",
                        help="only instances with N GPUs, N >= 1 (default: any)")
    prices.add_argument("--breakeven", action="store_true",
                        help="owned cost per delivered GPU-hour vs utilization, and the "
                             "break-even utilization against each rental option (default off)")
    prices.add_argument("--model", metavar="PRESET",
                        help="with --breakeven and --gpu: self-host the model on the GPU vs "
                             "every pay-per-token API that prices it (default: none)")
    prices.add_argument("--prompt-tokens", type=value_argtype("prompt-tokens"), metavar="N",
                        help="with --model: prompt tokens per request, "
                             f"{FLAG_RANGES['--prompt-tokens'].describe()} (default 512)")
    prices.add_argument("--output-tokens", type=value_argtype("output-tokens"), metavar="N",
                        help="with --model: output tokens per request, "
                             f"{FLAG_RANGES['--output-tokens'].describe()} (default 256)")
    prices.add_argument("--price-file", type=Path, metavar="CSV",
                        help="custom prices that replace or add rows, see docs/pricing.md "
                             "(default: none)")
    prices.add_argument("--discount-pct", type=float, default=0.0, metavar="PCT",
                        help="flat negotiated discount on every shipped rental price, "
                             "0 <= PCT < 100 (default 0)")
    prices.add_argument("--cloud-discount", action="append", default=[], metavar="CLOUD=PCT",
                        help="negotiated discount for one cloud, 0 <= PCT < 100 (repeatable; "
                             "replaces the flat one there; default: none)")
    prices.add_argument("--limit", type=int, metavar="N",
                        help="show the N cheapest rows only, N >= 1 (default: all)")
    add_json_flag(prices)
    prices.set_defaults(handler=_prices)


def _number(value: float) -> float | int:
    return int(value) if value == int(value) else value


def quote_row(book: PriceBook, quote: Quote) -> dict[str, Any]:
    """One ``prices --json`` row (the documented keys first, then extras)."""
    from costsim.catalog.servers import server_bom
    from costsim.domain.pricing import PurchaseOption

    offering = quote.offering
    row: dict[str, Any] = {
        "cloud": offering.cloud, "region": offering.region,
        "instance_type": offering.instance_type, "gpu": offering.gpu,
        "provider_gpu_name": offering.provider_gpu_name,
        "gpus_per_instance": offering.gpus_per_instance, "vcpus": offering.vcpus,
        "host_ram_gib": _number(offering.host_ram_gib), "option": quote.option.value,
        "price_usd_per_hour": _number(quote.price_usd_per_hour),
        "price_usd_per_gpu_hour": _number(quote.price_usd_per_gpu_hour),
        "upfront_usd": _number(quote.upfront_usd),  # whole cents (prices.py)
        "source": quote.source, "effective_date": quote.effective_date,
        "flags": [flag.value for flag in quote.flags],
        "date_note": offering.date_note, "note": offering.note,
        "marketplace": offering.marketplace,
        "blocked_from_selection": quote.blocked, "estimate": quote.estimate,
    }
    if quote.option is PurchaseOption.ON_DEMAND:
        rule = book.billing_rule(offering.cloud)
        row.update(billing_increment_s=rule.increment_s, billing_minimum_s=rule.minimum_s)
    if quote.spot_hazard is not None:
        hazard = quote.spot_hazard
        row.update(monthly_interruption_probability=hazard.monthly_interruption_probability,
                   hazard_per_hour=hazard.hazard_per_hour,
                   interruption_bucket=hazard.bucket,
                   notice_s=book.billing_rule(offering.cloud).spot_notice_s)
    if quote.reservation is not None:
        terms = quote.reservation
        row.update(discount_pct=terms.discount_fraction * 100,
                   term_months=terms.term_months,
                   recurring_usd_per_hour=terms.recurring_usd_per_hour,
                   total_obligation_usd=terms.total_obligation_usd,
                   break_even_utilization=terms.break_even_utilization,
                   break_even_months=terms.break_even_months,
                   payback_months=terms.payback_months,
                   discount_effective_date=terms.effective_date)
    if quote.option is PurchaseOption.OWNED:
        server = server_bom(offering.instance_type)
        row.update(capex_usd=server.capex_usd, power_kw=server.power_kw,
                   useful_life_years=server.useful_life_years,
                   residual_value_usd=server.residual_value_usd,
                   lead_time_weeks=server.lead_time_weeks, utilization_assumed=1.0)
    return row


def _sort_key(quotes: dict[PurchaseOption, Quote], wanted: PurchaseOption | None,
              offering: Offering) -> tuple[float, str]:
    from costsim.domain.pricing import PurchaseOption

    order = [wanted] if wanted else [PurchaseOption.ON_DEMAND, PurchaseOption.OWNED,
                                     *PurchaseOption]
    for option in order:
        if option in quotes:
            return quotes[option].price_usd_per_gpu_hour, offering.key
    return float("inf"), offering.key


def _mark(quote: Quote) -> str:
    """'!' blocked from selection, '~' rests on an estimate, 'q' a quoted reservation (your
    price file's sales quote; both tables use these marks)."""
    from costsim.domain.pricing import PriceFlag

    if quote.blocked:
        return "!"
    return "~" if quote.estimate else "q" if PriceFlag.QUOTED_RESERVATION in quote.flags else ""


def _cell(quote: Quote) -> str:
    from costsim.cli.numbers import usd_rate

    return f"{usd_rate(quote.price_usd_per_gpu_hour)}{_mark(quote)}"


def _table(table: list[tuple[Offering, dict[PurchaseOption, Quote]]],
           option: PurchaseOption | None) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """Rows and header of the ``prices`` table: the headline option per instance and per GPU,
    then (without --option) spot and the no-upfront reservations per GPU."""
    from costsim.cli.numbers import usd_rate
    from costsim.domain.pricing import PurchaseOption

    extra = () if option else (PurchaseOption.SPOT, PurchaseOption.RESERVED_1Y_NO_UPFRONT,
                               PurchaseOption.RESERVED_3Y_NO_UPFRONT)
    rows = []
    for offering, quotes in table:
        headline = next((quotes[o] for o in ((option,) if option else
                                             (PurchaseOption.ON_DEMAND, PurchaseOption.OWNED))
                         if o in quotes), None)
        rows.append((
            offering.cloud + ("*" if offering.marketplace else ""), offering.region,
            offering.instance_type, f"{offering.gpus_per_instance}x{offering.gpu}",
            "-" if headline is None else usd_rate(headline.price_usd_per_hour),
            "-" if headline is None else _cell(headline),
            *(_cell(quotes[o]) if o in quotes else "-" for o in extra),
        ))
    header = ("cloud", "region", "instance", "gpus", "inst $/h", "$/GPU-h",
              *(_SHORT[o.value] for o in extra))
    return rows, header


def _prices(args: argparse.Namespace) -> int:
    from costsim.cli.prices_args import book_from_args, check_counts, check_option_and_cloud
    from costsim.domain.pricing import HOURLY_OPTIONS, PriceFlag, PurchaseOption
    from costsim.errors import InputError

    check_counts(args)
    option = PurchaseOption.parse(args.option) if args.option else None
    check_option_and_cloud(option, args.cloud, args.breakeven)
    book = book_from_args(args)
    if args.model is not None or args.prompt_tokens is not None or (
            args.output_tokens is not None):
        if not args.breakeven or args.model is None:
            raise InputError("--model", "", "--model, --prompt-tokens and --output-tokens go "
                             "with --breakeven --model PRESET --gpu NAME")
        from costsim.cli.prices_api import show_api_breakeven

        return show_api_breakeven(args, book)
    if args.breakeven:
        from costsim.cli.prices_breakeven import show_breakeven

        return show_breakeven(args, book, option)
    found = book.offerings(gpu=args.gpu, cloud=args.cloud, region=args.region,
                           gpus_per_instance=args.count, option=option)
    options = [option] if option else list(HOURLY_OPTIONS)
    table: list[tuple[Offering, dict[PurchaseOption, Quote]]] = []
    for offering in found:
        quotes = {q.option: q for q in book.quotes(offering, options)}
        if quotes:
            table.append((offering, quotes))
    table.sort(key=lambda item: _sort_key(item[1], option, item[0]))
    unpriced = len(found) - len(table)
    if args.limit is not None:
        table = table[: args.limit]
    if args.json:
        print_json({"rows": [quote_row(book, quotes[o]) for _, quotes in table
                             for o in options if o in quotes]})
        return EXIT_OK
    print(format_table(*_table(table, option), right_align=range(4, 9), max_width=TABLE_WIDTH,
                       shrink=(1, 2)))
    print(textwrap.fill(
        f"{len(table)} offerings"
        + (f" ({unpriced} with no price for the options asked not shown)" if unpriced else "")
        + ". Prices in $: 'inst $/h' per instance-hour and '$/GPU-h' per GPU-hour of "
        + (f"{option.value}" if option else "on-demand (owned servers: yearly cost at 100 % "
           "utilization / 8760), then spot and reserved 1y/3y no upfront per GPU-hour; every "
           "payment option: --option or --json")
        + ". '!' = blocked by a data-quality flag (never auto-selected); '~' = rests on an "
        "estimate (fallback reservation discount, reservations sold only by contract, owned-cost "
        "assumptions); "
        + ("'q' = your quoted reservation (price file); " if any(
            PriceFlag.QUOTED_RESERVATION in q.flags for _, quotes in table
            for q in quotes.values()) else "")
        + "'*' = marketplace (used only when named with --cloud). Long regions and "
        "instance types are cut to fit 120 columns; every column in full, with sources, dates "
        "and flags: --json.", width=TABLE_WIDTH))
    if any(PriceFlag.REGION_UNSPECIFIED in offering.flags for offering, _ in table):
        print(textwrap.fill("Region 'unspecified': the source gives none; the price is real and "
                            "selectable, but check where the capacity is before relying on it "
                            "(--json: note).", width=TABLE_WIDTH))
    return EXIT_OK
