"""Which servers and rentals the shipped book's rent-vs-buy comparison picks
(costsim.catalog.breakeven); the worked example's figures are in test_pricing_docs.py."""

from __future__ import annotations

import pytest

from costsim.catalog.breakeven import break_even, break_evens, owned_servers, rental_rates
from costsim.catalog.prices import price_book
from costsim.catalog.servers import server_bom
from costsim.domain.breakeven import UTILIZATION_GRID
from costsim.domain.pricing import RENTAL_OPTIONS, PriceFlag, PriceOverrides, PurchaseOption
from costsim.errors import CatalogError


def test_servers_are_picked_by_gpu_and_count() -> None:
    book = price_book()
    assert [s.name for s in owned_servers(book, "RTX4090")] == ["rtx4090-4", "rtx4090-8"]
    assert [s.name for s in owned_servers(book, "RTX 4090", 8)] == ["rtx4090-8"]
    assert [s.name for s in owned_servers(book, "NVIDIA H100 80GB HBM3")] == ["hgx-h100-8"]
    assert owned_servers(book, "T4") == ()
    assert break_evens(book, "H100", 3) == ()
    assert len(owned_servers(book)) == len(book.owned_offerings)
    with pytest.raises(CatalogError, match="did you mean 'H100'"):
        owned_servers(book, "H10")


def test_rentals_are_like_for_like_and_unflagged() -> None:
    """Every rental holds at least the server's GPUs per instance, none is blocked, marketplaces
    stay out unless named, and each option appears at most once in the fixed order."""
    book = price_book()
    for result in break_evens(book):
        server = result.server
        options = [r.option for r in result.rentals]
        assert options == [o for o in RENTAL_OPTIONS if o in options]
        for rental in result.rentals:
            offering = next(o for o in book.offerings(gpu=server.gpu, cloud=rental.cloud,
                                                      region=rental.region)
                            if o.instance_type == rental.instance_type)
            assert offering.gpus_per_instance >= server.gpu_count
            assert not offering.marketplace
            quote = book.quote(offering, rental.option)
            assert quote is not None
            assert not quote.blocked
            assert rental.price_usd_per_gpu_hour == quote.price_usd_per_gpu_hour
            assert rental.estimate == quote.estimate
            assert rental.flags == quote.flags


def test_each_rental_is_the_cheapest_of_its_option() -> None:
    """No unflagged like-for-like offering of the option is cheaper per hour for the server."""
    book = price_book()
    server = server_bom("hgx-h100-8")
    for rental in rental_rates(book, server):
        for offering in book.offerings(gpu="H100", option=rental.option):
            quote = book.quote(offering, rental.option)
            if (quote is None or quote.blocked or offering.marketplace
                    or offering.gpus_per_instance < server.gpu_count):
                continue
            assert quote.price_usd_per_gpu_hour >= rental.price_usd_per_gpu_hour - 1e-12


def test_cloud_region_and_options_narrow_the_search() -> None:
    book = price_book()
    server = server_bom("hgx-h100-8")
    aws = rental_rates(book, server, cloud="aws", region="us-east-1")
    assert {(r.cloud, r.region) for r in aws} == {("aws", "us-east-1")}
    (spot,) = rental_rates(book, server, [PurchaseOption.SPOT])
    assert spot.option is PurchaseOption.SPOT
    marketplace = rental_rates(book, server, [PurchaseOption.ON_DEMAND], cloud="vast")
    assert all(r.cloud == "vast" for r in marketplace)
    with pytest.raises(ValueError, match="owned"):
        rental_rates(book, server, [PurchaseOption.OWNED])
    with pytest.raises(CatalogError, match="did you mean 'aws'"):
        rental_rates(book, server, cloud="awz")


def test_reservations_carry_their_estimate_flags() -> None:
    """Tier-2 reserved rates rest on the generic contract discount and say so."""
    result = break_even(price_book(), server_bom("hgx-h100-8"))
    reserved = result.rental(PurchaseOption.RESERVED_1Y_NO_UPFRONT)
    assert reserved is not None
    assert reserved.cloud == "hyperstack"
    assert reserved.estimate
    assert PriceFlag.RESERVED_BY_CONTRACT in reserved.flags
    on_demand = result.rental(PurchaseOption.ON_DEMAND)
    assert on_demand is not None
    assert not on_demand.estimate
    assert result.owned_cost_estimate
    assert result.utilizations == UTILIZATION_GRID


def test_a_discount_moves_the_break_even() -> None:
    """A negotiated AWS discount makes renting cheaper, so owning needs more use to win."""
    server = server_bom("hgx-h100-8")
    od = [PurchaseOption.ON_DEMAND]
    plain = break_even(price_book(), server, od, cloud="aws")
    discounted = break_even(price_book(PriceOverrides(cloud_discount_pct=(("aws", 30.0),))),
                            server, od, cloud="aws")
    (rate,), (cheaper,) = plain.rentals, discounted.rentals
    assert cheaper.price_usd_per_gpu_hour == pytest.approx(0.7 * rate.price_usd_per_gpu_hour)
    low, high = (plain.owning_break_even_utilization(rate),
                 discounted.owning_break_even_utilization(cheaper))
    assert low is not None
    assert high is not None
    assert high > low


def test_reserving_beats_aws_on_demand_above_its_committed_share() -> None:
    """Within one cloud the reserved-vs-on-demand crossing is the reservation's own u* (r_c/r_od
    of the same instance, ReservationTerms)."""
    book = price_book()
    result = break_even(book, server_bom("hgx-h100-8"), cloud="aws", region="us-east-1")
    for rental in result.rentals:
        if not rental.committed:
            assert result.reserving_break_even_utilization(rental) is None
            continue
        offering = next(o for o in book.offerings(gpu="H100", cloud="aws", region="us-east-1")
                        if o.instance_type == rental.instance_type)
        terms = book.reservation(offering, rental.option)
        assert terms is not None
        assert result.reserving_break_even_utilization(rental) == pytest.approx(
            terms.break_even_utilization)
