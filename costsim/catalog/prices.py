"""The price book: every purchase option's rule over the shipped offerings, with overrides.

:class:`PriceBook` turns offerings into quotes (on-demand with billing minimums, spot with its
hazard, 1y/3y reservations from the discount tables, owned servers from their BOMs) and picks the
cheapest unflagged one (docs/pricing.md). The tables come from :mod:`costsim.catalog.price_tables`,
owned servers from :mod:`costsim.catalog.servers`. Pure: no printing, no environment reads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cache, lru_cache

from costsim.catalog.gpus import get_gpu
from costsim.catalog.price_quotes import best_quote, quoted_terms
from costsim.catalog.price_tables import (
    RESERVED_BY_CONTRACT,
    RESERVED_NONE,
    billing_rules,
    discount_rule,
    payment_rule,
    reserved_terms,
    shipped_offerings,
    spot_hazard,
)
from costsim.catalog.resources import csv_bool
from costsim.catalog.servers import OWNED_CLOUD, owned_offerings, server_bom
from costsim.domain.gpu import GPUS_PER_NODE
from costsim.domain.pricing import (
    HOURLY_OPTIONS,
    RENTAL_OPTIONS,
    BillingRule,
    Offering,
    PriceFlag,
    PriceOverrides,
    PurchaseOption,
    Quote,
    QuotedReservation,
    Selection,
)
from costsim.domain.reservation import ReservationTerms
from costsim.domain.spot import spot_expected_hours
from costsim.errors import CatalogError, InfeasibleError, InputError
from costsim.units import HOURS_PER_YEAR

# the arguments of PriceBook.offerings: gpu, cloud, region, gpus per instance, option,
# marketplaces included
OfferingQuery = tuple[str | None, str | None, str | None, int | None, PurchaseOption | None, bool]


class PriceBook:
    """The shipped price book with user overrides applied. Immutable once built."""

    def __init__(self, overrides: PriceOverrides | None = None) -> None:
        self.overrides = overrides or PriceOverrides()
        custom = {o.key: o for o in self.overrides.custom_offerings}
        shipped = [o for o in shipped_offerings() if o.key not in custom]
        self.rental_offerings: tuple[Offering, ...] = (*shipped, *custom.values())
        self.owned_offerings: tuple[Offering, ...] = owned_offerings()
        self.all_offerings: tuple[Offering, ...] = (*self.rental_offerings,
                                                    *self.owned_offerings)
        # memo of quotes, "not sold" (None) included; keyed by name, so the offering is kept to
        # tell a custom row from the shipped one of the same key
        self._quotes: dict[tuple[str, PurchaseOption], tuple[Offering, Quote | None]] = {}
        # memo of offering queries by their arguments (the book is immutable): the optimizer
        # and the simulator's preparation ask the same few hundred times per search
        self._selected: dict[OfferingQuery, tuple[Offering, ...]] = {}
        known = set(billing_rules())
        for cloud, _ in self.overrides.cloud_discount_pct:
            if cloud not in known:
                raise CatalogError("cloud", cloud, sorted(known),
                                   source="prices.overrides.cloud_discount_pct")

    # -- names ---------------------------------------------------------------------------------
    def clouds(self) -> tuple[str, ...]:
        """Every cloud in the book (``owned`` included), sorted."""
        return tuple(sorted({o.cloud for o in self.all_offerings}))

    def regions(self, cloud: str | None = None) -> tuple[str, ...]:
        """Regions of ``cloud`` (of every cloud when None), sorted."""
        return tuple(sorted({o.region for o in self.all_offerings
                             if cloud is None or o.cloud == cloud}))

    def check_cloud(self, cloud: str, source: str = "--cloud") -> str:
        """Return ``cloud`` normalised to lower case, or raise with "did you mean"."""
        name = cloud.strip().lower()
        if name not in self.clouds():
            raise CatalogError("cloud", cloud, self.clouds(), source=source)
        return name

    def check_region(self, region: str, cloud: str | None = None,
                     source: str = "--region") -> str:
        """Return ``region`` as spelled in the book, or raise with "did you mean"."""
        known = self.regions(cloud)
        for name in known:
            if name.lower() == region.strip().lower():
                return name
        kind = f"{cloud} region" if cloud else "region"
        raise CatalogError(kind, region, known, source=source)

    # -- queries -------------------------------------------------------------------------------
    def offerings(self, gpu: str | None = None, cloud: str | None = None,
                  region: str | None = None, gpus_per_instance: int | None = None,
                  option: PurchaseOption | None = None,
                  include_marketplaces: bool = True) -> tuple[Offering, ...]:
        """Offerings matching every given filter; names are validated ("did you mean").

        ``option`` keeps offerings that have a price for it (``owned`` → owned servers only,
        any rental option → rentals only).
        """
        query = (gpu, cloud, region, gpus_per_instance, option, include_marketplaces)
        selected = self._selected.get(query)
        if selected is None:
            selected = self._selected[query] = self._offerings(*query)
        return selected

    def _offerings(self, gpu: str | None, cloud: str | None, region: str | None,
                   gpus_per_instance: int | None, option: PurchaseOption | None,
                   include_marketplaces: bool) -> tuple[Offering, ...]:
        gpu_name = get_gpu(gpu).name if gpu is not None else None
        cloud_name = self.check_cloud(cloud) if cloud is not None else None
        region_name = self.check_region(region, cloud_name) if region is not None else None
        pool = self.all_offerings
        if option is PurchaseOption.OWNED:
            pool = self.owned_offerings
        elif option is not None:
            pool = self.rental_offerings
        return tuple(
            o for o in pool
            if (gpu_name is None or o.gpu == gpu_name)
            and (cloud_name is None or o.cloud == cloud_name)
            and (region_name is None or o.region == region_name)
            and (gpus_per_instance is None or o.gpus_per_instance == gpus_per_instance)
            and (include_marketplaces or not o.marketplace)
            and (option is None or self.rate_usd_per_hour(o, option) is not None)
        )

    def billing_rule(self, cloud: str) -> BillingRule:
        """Billing granularity of ``cloud`` (custom clouds get a 60-s minimum, per second)."""
        rules = billing_rules()
        if cloud in rules:
            return rules[cloud]
        return BillingRule(cloud=cloud, increment_s=1, minimum_s=60, spot_notice_s=0,
                           marketplace=False, source="costsim default for a custom cloud",
                           effective_date="2026-05-20")

    def _user_factor(self, offering: Offering) -> float:
        if PriceFlag.USER_OVERRIDE in offering.flags or offering.cloud == OWNED_CLOUD:
            return 1.0
        return 1.0 - self.overrides.discount_fraction(offering.cloud)

    @staticmethod
    def _reserved_terms(cloud: str) -> str:
        # a custom cloud from a price file publishes nothing costsim knows: treat its
        # reservations like a tier-2 cloud's (negotiated, generic fallback discount)
        return reserved_terms().get(cloud, RESERVED_BY_CONTRACT)

    def quoted(self, offering: Offering, option: PurchaseOption) -> QuotedReservation | None:
        """The user's quoted reservation for ``offering`` and ``option``, if any."""
        return best_quote(self.overrides.quoted_reservations, offering, option)

    def reservation(self, offering: Offering, option: PurchaseOption) -> ReservationTerms | None:
        """The 1y/3y commitment terms of one instance, or None where not sold.

        A quoted reservation (``PriceOverrides.quoted_reservations``) wins over the tables.
        Not sold: marketplaces, rows without an on-demand price, payment plans the cloud does
        not offer (GCP upfront, Azure partial).
        """
        term, payment = option.term_years, option.payment
        if term is None or payment is None or offering.on_demand_usd_per_hour is None:
            return None
        quote = self.quoted(offering, option)
        if quote is not None:
            return quoted_terms(quote, option, offering.on_demand_usd_per_hour
                                 * self._user_factor(offering), offering.effective_date)
        if offering.marketplace or self._reserved_terms(offering.cloud) == RESERVED_NONE:
            return None
        pay = payment_rule(offering.cloud, term, payment)
        if not csv_bool(pay["offered"]):
            return None
        rule = discount_rule(offering, term)
        discount = (float(rule["discount_pct"]) + float(pay["extra_discount_pct_points"])) / 100
        on_demand = offering.on_demand_usd_per_hour * self._user_factor(offering)
        term_hours = term * HOURS_PER_YEAR
        total = on_demand * (1 - discount) * term_hours
        upfront_fraction = float(pay["upfront_fraction"])
        upfront = round(total * upfront_fraction, 2)
        return ReservationTerms(
            option=option, term_hours=term_hours, discount_fraction=discount,
            on_demand_usd_per_hour=on_demand, upfront_usd=upfront,
            # upfront is rounded to the cent, so all-upfront can leave -1e-8 $/h: clamp to 0
            recurring_usd_per_hour=max(0.0, (total - upfront) / term_hours) + 0.0,
            source=rule["source"] + ("" if pay["source"] == "default" else
                                     f"; payment: {pay['source']}"),
            effective_date=rule["effective_date"],
            estimate=csv_bool(rule["estimate"]) or csv_bool(pay["estimate"]),
        )

    def quote(self, offering: Offering, option: PurchaseOption) -> Quote | None:
        """The price of ``option`` for ``offering``, or None where it is not sold."""
        memo_key = (offering.key, option)
        memo = self._quotes.get(memo_key)
        if memo is not None and memo[0] is offering:
            return memo[1]
        quote = self._quote(offering, option)
        self._quotes[memo_key] = (offering, quote)
        return quote

    def _quote(self, offering: Offering, option: PurchaseOption) -> Quote | None:
        flags = list(offering.flags)
        upfront = 0.0
        reservation = None
        hazard = None
        source = offering.source
        if option is PurchaseOption.API:
            return None  # per-token prices are not an offering's (catalog/api_prices.py)
        if option is PurchaseOption.OWNED:
            if offering.cloud != OWNED_CLOUD:
                return None
            server = server_bom(offering.instance_type)
            rate = server.cost_usd_per_year(1.0) / HOURS_PER_YEAR
            upfront = server.capex_usd
        elif offering.cloud == OWNED_CLOUD:
            return None
        elif option is PurchaseOption.ON_DEMAND:
            if offering.on_demand_usd_per_hour is None:
                return None
            rate = offering.on_demand_usd_per_hour * self._user_factor(offering)
        elif option is PurchaseOption.SPOT:
            if offering.spot_usd_per_hour is None:
                return None
            rate = offering.spot_usd_per_hour * self._user_factor(offering)
            hazard = spot_hazard(offering.gpu)
            if hazard.estimate:
                flags.append(PriceFlag.SPOT_HAZARD_ESTIMATE)
        else:
            reservation = self.reservation(offering, option)
            if reservation is None:
                return None
            rate = reservation.effective_usd_per_hour
            upfront = reservation.upfront_usd
            if self.quoted(offering, option) is not None:
                flags.append(PriceFlag.QUOTED_RESERVATION)
                return Quote(offering=offering, option=option, price_usd_per_hour=rate,
                             upfront_usd=upfront, flags=tuple(flags), source=reservation.source,
                             effective_date=reservation.effective_date,
                             reservation=reservation)
            source = f"{offering.source}; discount: {reservation.source}"
            if reservation.estimate:
                flags.append(PriceFlag.RESERVED_DISCOUNT_ESTIMATE)
            if self._reserved_terms(offering.cloud) == RESERVED_BY_CONTRACT:
                flags.append(PriceFlag.RESERVED_BY_CONTRACT)
        return Quote(offering=offering, option=option, price_usd_per_hour=rate,
                     upfront_usd=upfront, flags=tuple(flags), source=source,
                     effective_date=offering.effective_date, reservation=reservation,
                     spot_hazard=hazard)

    def quotes(self, offering: Offering,
               options: Iterable[PurchaseOption] = HOURLY_OPTIONS) -> tuple[Quote, ...]:
        """Quotes of ``offering`` for every option it is sold with."""
        found = (self.quote(offering, option) for option in options)
        return tuple(q for q in found if q is not None)

    def rate_usd_per_hour(self, offering: Offering, option: PurchaseOption) -> float | None:
        """Effective $/instance-hour of ``option`` (None where not sold)."""
        quote = self.quote(offering, option)
        return None if quote is None else quote.price_usd_per_hour

    def rate_usd_per_gpu_hour(self, offering: Offering, option: PurchaseOption) -> float | None:
        """Effective $/GPU-hour of ``option`` (None where not sold)."""
        quote = self.quote(offering, option)
        return None if quote is None else quote.price_usd_per_gpu_hour

    # -- option rules --------------------------------------------------------------------------
    def on_demand_cost_usd(self, offering: Offering, used_s: float) -> float:
        """On-demand charge of one instance run of ``used_s`` seconds (billing minimum applied)."""
        quote = self.quote(offering, PurchaseOption.ON_DEMAND)
        if quote is None:
            raise InputError("", offering.key, "has no on-demand price")
        billed_h = self.billing_rule(offering.cloud).billed_hours(used_s)
        return round(quote.price_usd_per_hour * billed_h, 2)

    def spot_expected_cost_usd(self, offering: Offering, work_hours: float,
                               checkpoint_interval_hours: float | None = None,
                               restart_hours: float = 0.0, checkpoint_hours: float = 0.0,
                               hazard_per_hour: float | None = None) -> float:
        """Expected spot charge of one instance doing ``work_hours`` of work under the hazard.

        Uses :func:`costsim.domain.spot.spot_expected_hours`; the hazard defaults to the
        GPU class's.
        """
        quote = self.quote(offering, PurchaseOption.SPOT)
        if quote is None or quote.spot_hazard is None:
            raise InputError("", offering.key, "has no spot price")
        rate = quote.spot_hazard.hazard_per_hour if hazard_per_hour is None else hazard_per_hour
        hours = spot_expected_hours(work_hours, rate, checkpoint_interval_hours, restart_hours,
                                    checkpoint_hours)
        return round(quote.price_usd_per_hour * hours, 2)

    # -- selection (docs/pricing.md) --------------------------------------------------------------
    def cheapest_offering(self, gpu: str, count: int, option: PurchaseOption,
                          cloud: str | None = None, region: str | None = None,
                          min_gpus_per_instance: int = 1,
                          min_host_ram_gib_per_gpu: float = 0.0) -> Selection:
        """The cheapest unflagged offering for ``count`` GPUs of ``gpu`` under ``option``.

        Ranked by the hourly price of all instances needed (``count`` rounded up to whole
        instances), then $/GPU-hour, then name. Instances with less host RAM per GPU than
        ``min_host_ram_gib_per_gpu`` are left out (a job's data loading and checkpoint copy
        live there). Without ``cloud``, marketplaces (vast,
        hyperbolic, mithril) are left out; a named cloud is always searched. Offerings whose
        flags block ``option`` (``BLOCKING_FLAGS``) are never chosen unless the overrides'
        ``allowed_flags`` lift every such flag; cheaper blocked ones are listed in
        ``passed_over``.

        Raises:
            CatalogError: unknown GPU, cloud or region ("did you mean").
            InfeasibleError: nothing sells ``option`` for this GPU there.
        """
        if count < 1:
            raise InputError("", "count", f"must be >= 1 GPU, got {count}")
        candidates = self.offerings(gpu=gpu, cloud=cloud, region=region, option=option,
                                    include_marketplaces=cloud is not None)
        ranked: list[tuple[float, float, str, Quote, int]] = []
        for offering in candidates:
            if offering.gpus_per_instance < min_gpus_per_instance:
                continue
            if offering.host_ram_gib < min_host_ram_gib_per_gpu * offering.gpus_per_instance:
                continue
            quote = self.quote(offering, option)
            if quote is None:
                continue
            instances = math.ceil(count / offering.gpus_per_instance)
            ranked.append((quote.price_usd_per_hour * instances, quote.price_usd_per_gpu_hour,
                           offering.key, quote, instances))
        ranked.sort(key=lambda item: item[:3])
        passed: list[Quote] = []
        for _, _, _, quote, instances in ranked:
            if quote.blocking_flags(self.overrides.allowed_flags):
                passed.append(quote)
                continue
            return Selection(quote=quote, gpu_count=count, instances=instances,
                             passed_over=tuple(passed))
        where = " ".join(part for part in (cloud, region) if part) or "any non-marketplace cloud"
        reason = " (only flagged offerings)" if passed else ""
        raise InfeasibleError(f"no {option.value} offering of {get_gpu(gpu).name} in {where}"
                              f"{reason}")

    def cheapest_offering_for_job(self, gpu: str, count: int, option: PurchaseOption,
                                  cloud: str | None = None, region: str | None = None,
                                  min_host_ram_gib_per_gpu: float = 0.0) -> Selection:
        """The cheapest offering for one job on ``count`` GPUs that talk to each other.

        The job's GPUs must sit in instances of min(count, GPUS_PER_NODE) GPUs (NVLink inside,
        the cluster network between), so a 64-GPU training run is never priced as 64
        single-GPU machines. Where no offering that large exists, the rule is relaxed to any
        instance size; callers compare ``selection.offering.gpus_per_instance`` with
        ``min(count, GPUS_PER_NODE)`` to warn.

        Raises:
            CatalogError: unknown GPU, cloud or region.
            InfeasibleError: nothing sells ``option`` for this GPU there.
        """
        try:
            return self.cheapest_offering(gpu, count, option, cloud, region,
                                          min_gpus_per_instance=min(count, GPUS_PER_NODE),
                                          min_host_ram_gib_per_gpu=min_host_ram_gib_per_gpu)
        except InfeasibleError:
            return self.cheapest_offering(gpu, count, option, cloud, region,
                                          min_host_ram_gib_per_gpu=min_host_ram_gib_per_gpu)


@cache
def _default_book() -> PriceBook:
    return PriceBook()


def price_book(overrides: PriceOverrides | None = None) -> PriceBook:
    """The shipped price book, with ``overrides`` applied when given (one book per distinct
    overrides, kept: a book is immutable, and the simulator prepares every plan of a scenario,
    the optimizer's dozens of candidates included, against the scenario's overrides; a book of
    its own each time would build and quote every offering anew)."""
    if overrides is None or overrides == PriceOverrides():
        return _default_book()
    return _book_with(overrides)


# distinct overrides kept: a sweep's price variants; a book and its quotes are a few MB at most
_BOOKS_KEPT = 32


@lru_cache(maxsize=_BOOKS_KEPT)
def _book_with(overrides: PriceOverrides) -> PriceBook:
    return PriceBook(overrides)


def offerings(gpu: str | None = None, cloud: str | None = None, region: str | None = None,
              gpus_per_instance: int | None = None, option: PurchaseOption | None = None,
              book: PriceBook | None = None) -> tuple[Offering, ...]:
    """Offerings of the (default) book matching the filters; see :meth:`PriceBook.offerings`."""
    return (book or price_book()).offerings(gpu, cloud, region, gpus_per_instance, option)


def cheapest_offering(gpu: str, count: int, option: PurchaseOption, cloud: str | None = None,
                      region: str | None = None, book: PriceBook | None = None,
                      min_gpus_per_instance: int = 1) -> Selection:
    """The selection of docs/pricing.md on the (default) book; see PriceBook.cheapest_offering."""
    return (book or price_book()).cheapest_offering(gpu, count, option, cloud, region,
                                                    min_gpus_per_instance)


def cheapest_offering_for_job(gpu: str, count: int, option: PurchaseOption,
                              cloud: str | None = None, region: str | None = None,
                              book: PriceBook | None = None) -> Selection:
    """One job's GPUs on the (default) book; see :meth:`PriceBook.cheapest_offering_for_job`."""
    return (book or price_book()).cheapest_offering_for_job(gpu, count, option, cloud, region)


def rate_usd_per_gpu_hour(offering: Offering, option: PurchaseOption,
                          book: PriceBook | None = None) -> float | None:
    """Effective $/GPU-hour of ``option`` for ``offering`` (None where not sold)."""
    return (book or price_book()).rate_usd_per_gpu_hour(offering, option)


def reservation_terms(offering: Offering, option: PurchaseOption,
                      book: PriceBook | None = None) -> ReservationTerms | None:
    """1y/3y commitment terms (upfront, effective rate, break-even) of one instance."""
    return (book or price_book()).reservation(offering, option)


def find_offering(cloud: str, region: str, instance_type: str,
                  book: PriceBook | None = None) -> Offering:
    """The offering with this exact key, or a CatalogError with "did you mean"."""
    the_book = book or price_book()
    cloud_name = the_book.check_cloud(cloud)
    region_name = the_book.check_region(region, cloud_name)
    matches = [o for o in the_book.all_offerings
               if o.cloud == cloud_name and o.region == region_name]
    for offering in matches:
        if offering.instance_type.lower() == instance_type.lower():
            return offering
    raise CatalogError(f"instance type in {cloud_name} {region_name}", instance_type,
                       [o.instance_type for o in matches], source="--instance-type")


__all__ = [
    "RENTAL_OPTIONS",
    "PriceBook",
    "billing_rules",
    "cheapest_offering",
    "find_offering",
    "offerings",
    "price_book",
    "rate_usd_per_gpu_hour",
    "reservation_terms",
    "shipped_offerings",
    "spot_hazard",
]
