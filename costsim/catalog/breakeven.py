"""Which owned servers and which rentals a rent-vs-reserve-vs-buy comparison puts side by side.

Like for like (docs/pricing.md, worked example 2): for each shipped server with the GPU asked
for, and each rental purchase option, the cheapest unflagged offering of that GPU in instances
of at least the server's GPU count (the same NVLink fabric inside the box), chosen by the price
book's selection rule (:meth:`PriceBook.cheapest_offering`: marketplaces only when the cloud is
named). The result (:class:`costsim.domain.breakeven.BreakEven`) carries no price book.
"""

from __future__ import annotations

from collections.abc import Sequence

from costsim.catalog.prices import PriceBook
from costsim.catalog.servers import server_bom
from costsim.domain.breakeven import UTILIZATION_GRID, BreakEven, RentalRate
from costsim.domain.owned import OwnedServer
from costsim.domain.pricing import RENTAL_OPTIONS, PurchaseOption
from costsim.errors import InfeasibleError


def owned_servers(book: PriceBook, gpu: str | None = None,
                  gpu_count: int | None = None) -> tuple[OwnedServer, ...]:
    """The shipped servers (default configuration) with ``gpu`` and ``gpu_count`` GPUs, in the
    book's order; empty when none matches.

    Raises:
        CatalogError: unknown GPU name ("did you mean").
    """
    found = book.offerings(gpu=gpu, option=PurchaseOption.OWNED, gpus_per_instance=gpu_count)
    return tuple(server_bom(offering.instance_type) for offering in found)


def rental_rates(book: PriceBook, server: OwnedServer,
                 options: Sequence[PurchaseOption] = RENTAL_OPTIONS, cloud: str | None = None,
                 region: str | None = None) -> tuple[RentalRate, ...]:
    """The cheapest unflagged rental of each of ``options`` for ``server``'s GPUs, like for
    like; an option nobody sells there is left out.

    Raises:
        ValueError: ``options`` holds 'owned'.
        CatalogError: unknown cloud or region ("did you mean").
    """
    if PurchaseOption.OWNED in options:
        raise ValueError("owning is compared with rental options; 'owned' is not one")
    rates: list[RentalRate] = []
    for option in options:
        try:
            chosen = book.cheapest_offering(server.gpu, server.gpu_count, option, cloud=cloud,
                                            region=region, min_gpus_per_instance=server.gpu_count)
        except InfeasibleError:
            continue
        quote = chosen.quote
        rates.append(RentalRate(
            option=option, cloud=chosen.offering.cloud, region=chosen.offering.region,
            instance_type=chosen.offering.instance_type, instances=chosen.instances,
            price_usd_per_gpu_hour=quote.price_usd_per_gpu_hour, flags=quote.flags,
            source=quote.source, effective_date=quote.effective_date, estimate=quote.estimate))
    return tuple(rates)


def break_even(book: PriceBook, server: OwnedServer,
               options: Sequence[PurchaseOption] = RENTAL_OPTIONS, cloud: str | None = None,
               region: str | None = None,
               utilizations: tuple[float, ...] = UTILIZATION_GRID) -> BreakEven:
    """``server`` against renting its GPUs under each of ``options`` (see :func:`rental_rates`).

    The owned costs are always marked as estimates: the BOM prices and operating costs are
    editable assumptions (servers.csv, server_components.csv, owned_defaults.csv).
    """
    return BreakEven(server=server, utilizations=utilizations,
                     rentals=rental_rates(book, server, options, cloud, region),
                     owned_cost_estimate=True)


def break_evens(book: PriceBook, gpu: str | None = None, gpu_count: int | None = None,
                options: Sequence[PurchaseOption] = RENTAL_OPTIONS, cloud: str | None = None,
                region: str | None = None,
                utilizations: tuple[float, ...] = UTILIZATION_GRID) -> tuple[BreakEven, ...]:
    """:func:`break_even` for every shipped server of :func:`owned_servers`; empty when no
    server has ``gpu`` (and ``gpu_count``)."""
    return tuple(break_even(book, server, options, cloud, region, utilizations)
                 for server in owned_servers(book, gpu, gpu_count))
