"""``costsim prices --breakeven``: the rent-vs-buy comparison of ``costsim.catalog.breakeven``,
as tables or JSON. The selection and the curves are the engine's; this module only formats."""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING, Any

from costsim.cli.common import EXIT_OK, format_table, print_json

if TYPE_CHECKING:
    from costsim.catalog.prices import PriceBook
    from costsim.domain.breakeven import BreakEven, RentalRate
    from costsim.domain.pricing import PurchaseOption


def show_breakeven(args: argparse.Namespace, book: PriceBook,
                   option: PurchaseOption | None) -> int:
    """Print the comparison for every shipped server matching --gpu/--count."""
    from costsim.catalog.breakeven import break_evens
    from costsim.domain.pricing import RENTAL_OPTIONS
    from costsim.errors import InputError

    results = break_evens(book, gpu=args.gpu, gpu_count=args.count,
                          options=[option] if option else RENTAL_OPTIONS,
                          cloud=args.cloud, region=args.region)
    if not results:
        # an empty report would read as "nothing to compare"; say which servers exist instead
        shipped = ", ".join(f"{o.instance_type} ({o.gpus_per_instance}x{o.gpu})"
                            for o in book.owned_offerings)
        asked = " ".join(f"{flag} {value}" for flag, value in
                         (("--gpu", args.gpu), ("--count", args.count)) if value is not None)
        raise InputError(asked.split()[0] if asked else "--breakeven", "",
                         f"no shipped owned server matches {asked or 'the filters'}; "
                         f"servers: {shipped}")
    if args.json:
        print_json({"breakeven": [_json(result) for result in results]})
        return EXIT_OK
    for result in results:
        _print(result)
    return EXIT_OK


def _rental_json(result: BreakEven, rental: RentalRate) -> dict[str, Any]:
    return {"option": rental.option.value, "cloud": rental.cloud, "region": rental.region,
            "instance_type": rental.instance_type, "instances": rental.instances,
            "price_usd_per_gpu_hour": rental.price_usd_per_gpu_hour,
            "break_even_utilization": result.owning_break_even_utilization(rental),
            "estimate": rental.estimate, "flags": [flag.value for flag in rental.flags],
            "source": rental.source, "effective_date": rental.effective_date}


def _json(result: BreakEven) -> dict[str, Any]:
    server = result.server
    return {
        "server": server.name, "gpu": server.gpu, "gpu_count": server.gpu_count,
        "capex_usd": server.capex_usd, "residual_value_usd": server.residual_value_usd,
        "useful_life_years": server.useful_life_years, "power_kw": server.power_kw,
        "cost_usd_per_year_at_full_use": server.cost_usd_per_year(1.0),
        "owned_cost_estimate": result.owned_cost_estimate,
        "lead_time_weeks": server.lead_time_weeks,
        "owned_cost_curve": [{"utilization": point.utilization,
                              "cost_usd_per_delivered_gpu_hour":
                                  point.cost_usd_per_delivered_gpu_hour}
                             for point in result.owned_curve],
        "rentals": [_rental_json(result, rental) for rental in result.rentals],
    }


def _print(result: BreakEven) -> None:
    from costsim.cli.numbers import kilowatts, percent, usd_amount, usd_rate

    server = result.server
    print(f"{server.name}: {server.gpu_count}x{server.gpu}, capex "
          f"{usd_amount(server.capex_usd)}, {kilowatts(server.power_kw)} kW, life "
          f"{server.useful_life_years:g} y, lead time {server.lead_time_weeks:g} weeks")
    print(format_table(
        [(f"{p.utilization:.0%}", usd_rate(p.cost_usd_per_delivered_gpu_hour))
         for p in result.owned_curve],
        ("utilization", "owned $/delivered GPU-h"), right_align=(0, 1)))
    print()
    rows = []
    for rental in result.rentals:
        u_star = result.owning_break_even_utilization(rental)
        rows.append((rental.option.value,
                     f"{rental.cloud} {rental.region} {rental.instance_type}",
                     # the chosen rental is never blocked, so '~' is its only possible mark
                     f"{usd_rate(rental.price_usd_per_gpu_hour)}{'~' if rental.estimate else ''}",
                     "never" if u_star is None else percent(u_star)))
    print(format_table(rows, ("rental option", "cheapest unflagged offering", "$/GPU-h",
                              "owning wins above"), right_align=(2, 3)))
    if not result.rentals:
        print("no unflagged rental offering with as many GPUs per instance "
              "(marketplaces count only when named with --cloud)")
    for note in _notes(result):
        print(note)
    print()


def _notes(result: BreakEven) -> list[str]:
    """Footnotes saying which rates rest on estimates, so that a "never" is read rightly."""
    from costsim.domain.pricing import PriceFlag

    rentals = result.rentals

    def clouds_with(flag: PriceFlag) -> list[str]:
        return sorted({r.cloud for r in rentals if flag in r.flags})

    contract = clouds_with(PriceFlag.RESERVED_BY_CONTRACT)
    fallback = [c for c in clouds_with(PriceFlag.RESERVED_DISCOUNT_ESTIMATE) if c not in contract]
    notes = []
    if contract:
        one = len(contract) == 1
        notes.append(f"~ estimate: {', '.join(contract)} {'sells' if one else 'sell'} "
                     "reservations only by negotiated contract and "
                     f"{'publishes' if one else 'publish'} no reserved price; the reserved rates "
                     "here are "
                     "costsim's generic fallback discount on the on-demand price "
                     "(price_reserved_discounts.csv), not a quote. Ask for one before deciding "
                     "on these rows.")
    if fallback:
        notes.append(f"~ estimate: no published discount for this {', '.join(fallback)} "
                     "instance family; its reserved rates use the cloud's fallback discount "
                     "(price_reserved_discounts.csv).")
    if result.owned_cost_estimate:
        notes.append("Owned costs are editable estimates (BOM and operating costs, "
                     "docs/pricing.md).")
    return [textwrap.fill(note, width=100, subsequent_indent="  ") for note in notes]
