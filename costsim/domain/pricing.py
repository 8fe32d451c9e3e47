"""Prices: purchase options, data-quality flags, offerings, quotes, selection and overrides.

The value objects every purchase option's rule is expressed in (docs/pricing.md). The rules
themselves live beside them: :mod:`costsim.domain.reservation` (1y/3y commitments),
:mod:`costsim.domain.spot` (interruption hazard), :mod:`costsim.domain.owned` (servers) and
:mod:`costsim.domain.storage`. The shipped numbers live in ``costsim/data`` and are loaded by
``costsim.catalog``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from costsim.domain.api_pricing import ApiPrice
from costsim.domain.reservation import ReservationTerms
from costsim.domain.spot import SpotHazard
from costsim.errors import CatalogError, InputError
from costsim.units import SECONDS_PER_HOUR


class Payment(StrEnum):
    """How a reservation is paid."""

    NO_UPFRONT = "no-upfront"
    PARTIAL_UPFRONT = "partial-upfront"
    ALL_UPFRONT = "all-upfront"


class PurchaseOption(StrEnum):
    """The closed set of purchase options (docs/pricing.md); the values are the CLI/JSON strings."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED_1Y_NO_UPFRONT = "reserved-1y-no-upfront"
    RESERVED_1Y_PARTIAL_UPFRONT = "reserved-1y-partial-upfront"
    RESERVED_1Y_ALL_UPFRONT = "reserved-1y-all-upfront"
    RESERVED_3Y_NO_UPFRONT = "reserved-3y-no-upfront"
    RESERVED_3Y_PARTIAL_UPFRONT = "reserved-3y-partial-upfront"
    RESERVED_3Y_ALL_UPFRONT = "reserved-3y-all-upfront"
    OWNED = "owned"
    API = "api"  # pay-per-token (serving only): priced per 1M tokens, not per hour

    @property
    def is_reserved(self) -> bool:
        """True for the six reserved / committed-use options."""
        return self.value.startswith("reserved-")

    @property
    def term_years(self) -> int | None:
        """1 or 3 for reserved options, else None."""
        if not self.is_reserved:
            return None
        return 1 if self.value.startswith("reserved-1y") else 3

    @property
    def payment(self) -> Payment | None:
        """The payment plan of a reserved option, else None."""
        if not self.is_reserved:
            return None
        return Payment(self.value.split("-", 2)[2])

    @classmethod
    def reserved(cls, term_years: int, payment: Payment) -> PurchaseOption:
        """The option for ``option: reserved`` with ``term`` and ``payment`` (scenario files)."""
        if term_years not in (1, 3):
            raise InputError("", "term", f"must be 1y or 3y, got {term_years}y")
        return cls(f"reserved-{term_years}y-{payment.value}")

    @classmethod
    def parse(cls, text: str, source: str = "--option") -> PurchaseOption:
        """Parse one of the exact option strings; the error lists the valid ones."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            error = CatalogError("purchase option", text, [o.value for o in cls], source=source)
            if error.suggestions:
                raise error from None
            raise InputError(source, "", f"unknown purchase option '{text}'; choose one of "
                             f"{', '.join(o.value for o in cls)}") from None


RENTAL_OPTIONS: tuple[PurchaseOption, ...] = tuple(
    o for o in PurchaseOption if o not in (PurchaseOption.OWNED, PurchaseOption.API))
# the options an instance offering is priced with (per hour): every option but per-token APIs
HOURLY_OPTIONS: tuple[PurchaseOption, ...] = tuple(o for o in PurchaseOption
                                                   if o is not PurchaseOption.API)


class PriceFlag(StrEnum):
    """Data-quality flags on an offering. Blocking flags keep it out of automatic selection."""

    SPOT_ABOVE_ON_DEMAND = "spot-above-on-demand"
    SPOT_SUSPICIOUSLY_LOW = "spot-suspiciously-low"
    PLACEHOLDER_PRICE = "placeholder-price"
    ANOMALOUS_LOW_REGION = "anomalously-low-region"
    ANOMALOUS_LOW_PRICE = "anomalously-low-price"
    MISSING_ON_DEMAND = "missing-on-demand"
    REGION_UNSPECIFIED = "region-unspecified"
    LISTED_EVERYWHERE = "listed-in-every-region"
    GPU_VARIANT_ASSUMED = "gpu-variant-assumed"
    RESERVED_DISCOUNT_ESTIMATE = "reserved-discount-estimate"
    # the cloud sells commitments only by negotiated contract: its reserved rate is costsim's
    # generic discount on the list price, not a price anyone published
    RESERVED_BY_CONTRACT = "reserved-by-contract"
    SPOT_HAZARD_ESTIMATE = "spot-hazard-estimate"
    OWNED_COST_ESTIMATE = "owned-cost-estimate"
    USER_OVERRIDE = "user-override"
    # the reserved rate is a sales quote the user gave (it replaced the table's estimate)
    QUOTED_RESERVATION = "quoted-reservation"
    # a pay-per-token API's price is costsim's estimate (``~`` in costsim/data/api_prices.csv)
    API_PRICE_ESTIMATE = "api-price-estimate"

    @property
    def is_estimate(self) -> bool:
        """True when the flagged price rests on costsim's assumption rather than a list price."""
        return self in _ESTIMATES

    def blocks(self, option: PurchaseOption) -> bool:
        """True when this flag keeps an offering's ``option`` out of automatic selection
        (:data:`BLOCKING_FLAGS`)."""
        blocked = BLOCKING_FLAGS.get(self)
        return blocked is not None and (not blocked or option in blocked)

    @property
    def is_blocking(self) -> bool:
        """True for the flags of :data:`BLOCKING_FLAGS` (``prices.allow_flags`` may name them)."""
        return self in BLOCKING_FLAGS


# The one list of blocking flags (docs/pricing.md "Data-quality flags" and pricing/README.md
# print it; tests/catalog/test_pricing_docs.py keeps them equal): flag -> the options it keeps
# out of automatic selection, empty = every option of the row. A scenario lifts a flag with
# ``prices.allow_flags``. ``missing-on-demand`` blocks the whole row: without an on-demand
# price its spot price cannot be checked (the two spot flags compare spot with on-demand) and
# an on-demand fallback on the same instance is impossible.
BLOCKING_FLAGS: dict[PriceFlag, frozenset[PurchaseOption]] = {
    PriceFlag.PLACEHOLDER_PRICE: frozenset(),
    PriceFlag.ANOMALOUS_LOW_REGION: frozenset(),
    PriceFlag.ANOMALOUS_LOW_PRICE: frozenset(),
    PriceFlag.MISSING_ON_DEMAND: frozenset(),
    PriceFlag.SPOT_ABOVE_ON_DEMAND: frozenset({PurchaseOption.SPOT}),
    PriceFlag.SPOT_SUSPICIOUSLY_LOW: frozenset({PurchaseOption.SPOT}),
}
# Flags that change the quoted rate itself (a plan resting on one is marked `~`), in the order
# a report names one: the most specific reason first (a contract cloud's rate is also a fallback
# discount). The spot hazard is left out: the spot rate shown is the catalog's list price, and
# the hazard only enters expected-hours costing.
ESTIMATE_FLAGS: tuple[PriceFlag, ...] = (PriceFlag.RESERVED_BY_CONTRACT,
                                         PriceFlag.RESERVED_DISCOUNT_ESTIMATE,
                                         PriceFlag.OWNED_COST_ESTIMATE,
                                         PriceFlag.API_PRICE_ESTIMATE)
_ESTIMATES = frozenset(ESTIMATE_FLAGS)


@dataclass(frozen=True, slots=True, kw_only=True)
class Offering:
    """One rentable instance type in one region of one cloud, with its list prices.

    Prices are per instance-hour; ``None`` where the provider sells no such price.
    """

    cloud: str
    region: str
    instance_type: str
    gpu: str
    provider_gpu_name: str
    gpus_per_instance: int
    vcpus: int
    host_ram_gib: float
    gpu_memory_gib: float
    on_demand_usd_per_hour: float | None
    spot_usd_per_hour: float | None
    marketplace: bool
    flags: tuple[PriceFlag, ...]
    source: str
    effective_date: str
    date_note: str = ""
    # why the flags were set, where the build knows more than the flag name says
    note: str = ""

    def __post_init__(self) -> None:
        if self.gpus_per_instance < 1:
            raise ValueError(f"{self.key}: gpus_per_instance must be >= 1")
        for price in (self.on_demand_usd_per_hour, self.spot_usd_per_hour):
            # zero is refused too: break-even and discount arithmetic divide by list prices
            if price is not None and (price <= 0 or not math.isfinite(price)):
                raise ValueError(f"{self.key}: prices must be finite and > 0")
        if not self.source or not self.effective_date:
            raise ValueError(f"{self.key}: every offering needs a source and an effective date")

    @property
    def key(self) -> str:
        """``cloud region instance_type`` (the ledger's ``pool``)."""
        return f"{self.cloud} {self.region} {self.instance_type}"


@dataclass(frozen=True, slots=True, kw_only=True)
class BillingRule:
    """On-demand billing granularity of a cloud (per-second billing with a minimum)."""

    cloud: str
    increment_s: float
    minimum_s: float
    spot_notice_s: float
    marketplace: bool
    source: str
    effective_date: str
    note: str = ""

    def billed_hours(self, used_s: float) -> float:
        """Hours billed for one instance run of ``used_s`` seconds (minimum, then increments)."""
        if used_s <= 0:
            return 0.0
        billed_s = max(used_s, self.minimum_s)
        billed_s = math.ceil(billed_s / self.increment_s - 1e-9) * self.increment_s
        return billed_s / SECONDS_PER_HOUR



@dataclass(frozen=True, slots=True, kw_only=True)
class QuotedReservation:
    """A reservation price from a sales quote, per instance: it replaces costsim's estimated
    discount for the matching offerings (``region``/``instance_type`` None: any of the cloud's
    offerings of ``gpu``). ``source`` says where the quote came from (a file and line, or the
    scenario key), for the report's assumptions."""

    cloud: str
    gpu: str
    term_years: int
    payment: Payment
    upfront_usd: float
    recurring_usd_per_hour: float
    source: str
    region: str | None = None
    instance_type: str | None = None
    effective_date: str = ""  # the quote's date (empty: undated)

    def __post_init__(self) -> None:
        where = f"quote {self.cloud} {self.gpu}"
        if self.term_years not in (1, 3):
            raise InputError(self.source, "term", f"must be 1y or 3y, got {self.term_years}y")
        for key in ("upfront_usd", "recurring_usd_per_hour"):
            value = getattr(self, key)
            if not (math.isfinite(value) and value >= 0):
                raise InputError(self.source, key, f"{where}: must be a finite number >= 0, "
                                 f"got {value!r}")
        if self.upfront_usd == 0 and self.recurring_usd_per_hour == 0:
            raise InputError(self.source, "upfront_usd", f"{where}: a quote of $0 upfront and "
                             "$0/h is not a price")

    @property
    def option(self) -> PurchaseOption:
        """The purchase option the quote prices."""
        return PurchaseOption.reserved(self.term_years, self.payment)

    def specificity(self, offering: Offering) -> int | None:
        """How closely the quote names ``offering`` (2: its instance type, 1: its region,
        0: any of the cloud's ``gpu`` offerings), or None where it does not apply."""
        if offering.cloud != self.cloud.lower() or offering.gpu != self.gpu:
            return None
        if self.region is not None and self.region.lower() != offering.region.lower():
            return None
        if self.instance_type is not None and (self.instance_type.lower()
                                               != offering.instance_type.lower()):
            return None
        return 2 if self.instance_type is not None else int(self.region is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceOverrides:
    """User changes on top of the shipped book.

    ``discount_pct`` is a flat negotiated discount on every shipped rental price;
    ``cloud_discount_pct`` replaces it for the clouds it names. ``custom_offerings`` replace
    shipped rows with the same (cloud, region, instance_type) or add new ones; they are taken as
    already negotiated and get no discount. ``quoted_reservations`` are reserved prices from
    sales quotes: they win over the table's estimated discounts (and get no discount either).
    ``allowed_flags`` are blocking flags the user lifts (scenario ``prices.allow_flags``): rows
    carrying them may then be chosen like unflagged ones.
    """

    discount_pct: float = 0.0
    cloud_discount_pct: tuple[tuple[str, float], ...] = ()
    custom_offerings: tuple[Offering, ...] = ()
    quoted_reservations: tuple[QuotedReservation, ...] = ()
    allowed_flags: tuple[PriceFlag, ...] = ()
    # pay-per-token API rows of the scenario's price file (costsim.domain.api_pricing.ApiPrice):
    # they replace the shipped row of the same (provider, model)
    api_prices: tuple[ApiPrice, ...] = ()

    def __post_init__(self) -> None:
        for where, pct in (("discount_pct", self.discount_pct),
                           *((f"cloud_discount_pct.{c}", p) for c, p in self.cloud_discount_pct)):
            if not 0 <= pct < 100:
                raise InputError("prices.overrides", where,
                                 f"a discount must be in [0, 100) %, got {pct}")
        for flag in self.allowed_flags:
            if not flag.is_blocking:
                raise InputError("prices", "allow_flags", f"'{flag}' blocks nothing; name a "
                                 f"blocking flag: {', '.join(sorted(BLOCKING_FLAGS))}")

    def discount_fraction(self, cloud: str) -> float:
        """The negotiated discount that applies to a shipped row of ``cloud``."""
        for name, pct in self.cloud_discount_pct:
            if name == cloud:
                return pct / 100
        return self.discount_pct / 100


@dataclass(frozen=True, slots=True, kw_only=True)
class Quote:
    """The price of one (offering, option): one row of ``costsim prices``.

    ``price_usd_per_hour`` is the effective rate per instance-hour: for reservations the upfront
    spread over the term plus the recurring rate; for owned servers the yearly cost at 100 %
    utilization / 8760.
    """

    offering: Offering
    option: PurchaseOption
    price_usd_per_hour: float
    upfront_usd: float
    flags: tuple[PriceFlag, ...]
    source: str
    effective_date: str
    reservation: ReservationTerms | None = None
    spot_hazard: SpotHazard | None = None

    @property
    def price_usd_per_gpu_hour(self) -> float:
        """Effective rate per GPU-hour."""
        return self.price_usd_per_hour / self.offering.gpus_per_instance

    @property
    def blocked(self) -> bool:
        """True when a flag keeps this quote out of automatic selection."""
        return bool(self.blocking_flags())

    def blocking_flags(self, allowed: tuple[PriceFlag, ...] = ()) -> tuple[PriceFlag, ...]:
        """The flags that keep this quote out of automatic selection, but those ``allowed``."""
        return tuple(f for f in self.flags if f.blocks(self.option) and f not in allowed)

    @property
    def estimate(self) -> bool:
        """True when the rate rests on an assumption (fallback discount, owned-cost model)."""
        return any(flag.is_estimate for flag in self.flags)


def estimate_flag(flags: tuple[str, ...] | tuple[PriceFlag, ...]) -> PriceFlag | None:
    """The estimate flag a report names for a price with ``flags`` (the most specific), or
    None when the price rests on no estimate."""
    present = {str(f) for f in flags}
    return next((f for f in ESTIMATE_FLAGS if f.value in present), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """The offering chosen for ``count`` GPUs under the docs/pricing.md rule.

    ``passed_over`` lists cheaper quotes that were not chosen because of a data-quality flag, so
    that a report can say so.
    """

    quote: Quote
    gpu_count: int
    instances: int
    passed_over: tuple[Quote, ...] = ()

    @property
    def offering(self) -> Offering:
        """The chosen offering."""
        return self.quote.offering

    @property
    def total_usd_per_hour(self) -> float:
        """Hourly cost of all instances needed for ``gpu_count`` GPUs."""
        return self.quote.price_usd_per_hour * self.instances
