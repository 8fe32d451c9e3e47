"""Quoted reservations: a sales quote's reserved price replaces the table's estimated discount.

A quote is per instance (upfront and recurring $/h, as a quote states them). The most specific
quote wins (one naming the instance type over one naming the region over one for any of the
cloud's offerings of the GPU); the break-even is measured against the on-demand rate the book
would charge, and no negotiated discount is applied on top of a quote.
"""

from __future__ import annotations

from collections.abc import Iterable

from costsim.domain.pricing import Offering, PurchaseOption, QuotedReservation
from costsim.domain.reservation import ReservationTerms
from costsim.units import HOURS_PER_YEAR


def best_quote(quotes: Iterable[QuotedReservation], offering: Offering,
               option: PurchaseOption) -> QuotedReservation | None:
    """The most specific quote for ``offering`` and ``option`` (None where none applies)."""
    best: tuple[int, QuotedReservation] | None = None
    for quote in quotes:
        if quote.option is not option:
            continue
        level = quote.specificity(offering)
        if level is not None and (best is None or level > best[0]):
            best = (level, quote)
    return None if best is None else best[1]


def quoted_terms(quote: QuotedReservation, option: PurchaseOption,
                 on_demand_usd_per_hour: float, offering_date: str) -> ReservationTerms:
    """A quote as commitment terms; its discount is measured against ``on_demand_usd_per_hour``
    (for the break-even), never applied on top of the quote."""
    term_hours = quote.term_years * HOURS_PER_YEAR
    effective = quote.upfront_usd / term_hours + quote.recurring_usd_per_hour
    return ReservationTerms(
        option=option, term_hours=term_hours,
        discount_fraction=1 - effective / on_demand_usd_per_hour,
        on_demand_usd_per_hour=on_demand_usd_per_hour, upfront_usd=quote.upfront_usd,
        recurring_usd_per_hour=quote.recurring_usd_per_hour,
        # the report shows this text beside the rate: it must say the price is a quote
        source=quote.source if quote.source.lower().startswith("quote")
        else f"quote: {quote.source}",
        effective_date=quote.effective_date or offering_date, estimate=False)
