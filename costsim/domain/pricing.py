"""Prices: purchase options, offerings, reservation terms, spot hazard and owned servers.

Value objects and the pure arithmetic of each purchase option's pricing rule (DESIGN.md §5).
The shipped numbers live in ``costsim/data`` and are loaded by ``costsim.catalog.prices``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from costsim.errors import CatalogError, InputError
from costsim.units import HOURS_PER_MONTH, HOURS_PER_YEAR, SECONDS_PER_HOUR


class Payment(StrEnum):
    """How a reservation is paid."""

    NO_UPFRONT = "no-upfront"
    PARTIAL_UPFRONT = "partial-upfront"
    ALL_UPFRONT = "all-upfront"


class PurchaseOption(StrEnum):
    """The closed set of purchase options (DESIGN.md §5); the values are the CLI/JSON strings."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED_1Y_NO_UPFRONT = "reserved-1y-no-upfront"
    RESERVED_1Y_PARTIAL_UPFRONT = "reserved-1y-partial-upfront"
    RESERVED_1Y_ALL_UPFRONT = "reserved-1y-all-upfront"
    RESERVED_3Y_NO_UPFRONT = "reserved-3y-no-upfront"
    RESERVED_3Y_PARTIAL_UPFRONT = "reserved-3y-partial-upfront"
    RESERVED_3Y_ALL_UPFRONT = "reserved-3y-all-upfront"
    OWNED = "owned"

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


RENTAL_OPTIONS: tuple[PurchaseOption, ...] = tuple(o for o in PurchaseOption
                                                   if o is not PurchaseOption.OWNED)


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
    SPOT_HAZARD_ESTIMATE = "spot-hazard-estimate"
    OWNED_COST_ESTIMATE = "owned-cost-estimate"
    USER_OVERRIDE = "user-override"

    def blocks(self, option: PurchaseOption) -> bool:
        """True when this flag keeps an offering's ``option`` out of automatic selection."""
        if self in _BLOCKS_EVERYTHING:
            return True
        if self in _BLOCKS_SPOT:
            return option is PurchaseOption.SPOT
        if self is PriceFlag.MISSING_ON_DEMAND:
            return option is PurchaseOption.ON_DEMAND or option.is_reserved
        return False


_BLOCKS_EVERYTHING = frozenset({PriceFlag.PLACEHOLDER_PRICE, PriceFlag.ANOMALOUS_LOW_REGION,
                                PriceFlag.ANOMALOUS_LOW_PRICE})
_BLOCKS_SPOT = frozenset({PriceFlag.SPOT_ABOVE_ON_DEMAND, PriceFlag.SPOT_SUSPICIOUSLY_LOW})


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

    def __post_init__(self) -> None:
        if self.gpus_per_instance < 1:
            raise ValueError(f"{self.key}: gpus_per_instance must be >= 1")
        for price in (self.on_demand_usd_per_hour, self.spot_usd_per_hour):
            if price is not None and (price < 0 or not math.isfinite(price)):
                raise ValueError(f"{self.key}: prices must be finite and >= 0")
        if not self.source or not self.effective_date:
            raise ValueError(f"{self.key}: every offering needs a source and an effective date")

    @property
    def key(self) -> str:
        """``cloud region instance_type`` (the ledger's ``pool``)."""
        return f"{self.cloud} {self.region} {self.instance_type}"

    def blocked(self, option: PurchaseOption) -> bool:
        """True when a data-quality flag keeps ``option`` of this offering from auto-selection."""
        return any(flag.blocks(option) for flag in self.flags)


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
class ReservationTerms:
    """A 1y/3y commitment for one instance: the whole obligation is owed whether used or not.

    ``effective_usd_per_hour`` = upfront / term hours + recurring hourly (r_c); break-even
    utilization u* = r_c / r_on_demand.
    """

    option: PurchaseOption
    term_hours: float
    discount_fraction: float
    on_demand_usd_per_hour: float
    upfront_usd: float
    recurring_usd_per_hour: float
    source: str
    effective_date: str
    estimate: bool

    @property
    def term_months(self) -> float:
        """Length of the term in 730-hour months."""
        return self.term_hours / HOURS_PER_MONTH

    @property
    def effective_usd_per_hour(self) -> float:
        """The amortized committed rate r_c (upfront spread over the term plus recurring)."""
        return self.upfront_usd / self.term_hours + self.recurring_usd_per_hour

    @property
    def total_obligation_usd(self) -> float:
        """Everything owed over the full term, whether or not the instance is used."""
        return round(self.upfront_usd + self.recurring_usd_per_hour * self.term_hours, 2)

    @property
    def break_even_utilization(self) -> float:
        """u* = r_c / r_on_demand: above this share of hours used, the commitment is cheaper."""
        return self.effective_usd_per_hour / self.on_demand_usd_per_hour

    @property
    def break_even_months(self) -> float:
        """Months of full on-demand use that cost as much as the whole obligation.

        A need shorter than this is cheaper on demand even at 100 % use.
        """
        return self.total_obligation_usd / (self.on_demand_usd_per_hour * HOURS_PER_MONTH)

    @property
    def payback_months(self) -> float:
        """Months of full use until on-demand savings repay the upfront (AWS's break-even)."""
        saving_usd_per_hour = self.on_demand_usd_per_hour - self.recurring_usd_per_hour
        if self.upfront_usd == 0:
            return 0.0
        return self.upfront_usd / (saving_usd_per_hour * HOURS_PER_MONTH)

    def cost_usd(self, used_hours: float, horizon_hours: float | None = None) -> float:
        """What the commitment costs for ``used_hours`` of use: always the whole obligation.

        ``horizon_hours`` is accepted for symmetry with on-demand costing; the obligation does
        not shrink when the need ends early (the rest is a stranded commitment).
        """
        del used_hours, horizon_hours
        return self.total_obligation_usd


def monthly_probability_to_hazard_per_hour(p_month: float) -> float:
    """Hourly Poisson hazard λ = −ln(1 − p)/730 from a monthly interruption probability p."""
    if not 0 <= p_month < 1:
        raise ValueError(f"monthly interruption probability must be in [0, 1), got {p_month}")
    return -math.log1p(-p_month) / HOURS_PER_MONTH


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotHazard:
    """Interruption model of spot capacity for one GPU class (Poisson, hourly hazard)."""

    gpu_class: str
    bucket: str
    monthly_interruption_probability: float
    source: str
    effective_date: str
    estimate: bool

    @property
    def hazard_per_hour(self) -> float:
        """λ in interruptions per instance-hour."""
        return monthly_probability_to_hazard_per_hour(self.monthly_interruption_probability)

    @property
    def mean_hours_between_interruptions(self) -> float:
        """1/λ."""
        return math.inf if self.hazard_per_hour == 0 else 1.0 / self.hazard_per_hour


def spot_expected_hours(work_hours: float, hazard_per_hour: float,
                        checkpoint_interval_hours: float | None = None,
                        restart_hours: float = 0.0, checkpoint_hours: float = 0.0) -> float:
    """Expected instance-hours to finish ``work_hours`` of work under Poisson interruptions.

    Work is split into segments of ``checkpoint_interval_hours`` (the whole job when None), each
    followed by a checkpoint of ``checkpoint_hours``; an interruption loses the segment in
    progress and costs ``restart_hours``. Per segment of length s (incl. its checkpoint) the
    expected time is (1/λ + R)(e^{λs} − 1) (Daly 2006, exact for exponential failures).
    """
    if work_hours <= 0:
        return 0.0
    if hazard_per_hour < 0:
        raise ValueError("hazard must be >= 0")
    interval = work_hours if checkpoint_interval_hours is None else checkpoint_interval_hours
    if interval <= 0:
        raise ValueError("checkpoint interval must be > 0")
    full_segments = math.floor(work_hours / interval + 1e-12)
    remainder = work_hours - full_segments * interval
    segments = [interval] * full_segments + ([remainder] if remainder > 1e-12 else [])
    total = 0.0
    for index, segment in enumerate(segments):
        # the last segment needs no checkpoint after it
        length = segment + (checkpoint_hours if index < len(segments) - 1 else 0.0)
        if hazard_per_hour == 0:
            total += length
        else:
            total += (1.0 / hazard_per_hour + restart_hours) * math.expm1(hazard_per_hour * length)
    return total


@dataclass(frozen=True, slots=True, kw_only=True)
class BomLine:
    """One component line of a server bill of materials."""

    component: str
    kind: str
    quantity: float
    unit: str
    unit_price_usd: float
    source: str
    effective_date: str
    estimate: bool

    @property
    def amount_usd(self) -> float:
        """quantity × unit price, to the cent."""
        return round(self.quantity * self.unit_price_usd, 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedServer:
    """A purchasable GPU server: BOM, power and the operating-cost assumptions.

    Cost views: straight-line depreciation of (capex − residual) over ``useful_life_years``
    (the economic view) and capex paid at purchase (the cash view).
    """

    name: str
    gpu: str
    gpu_count: int
    ram_gib: int
    bom: tuple[BomLine, ...]
    power_kw: float
    pue: float
    usd_per_kwh: float
    colocation_usd_per_kw_month: float
    idle_power_fraction: float
    maintenance_pct_per_year: float
    staff_pct_per_year: float
    lead_time_weeks: float
    useful_life_years: float
    residual_fraction: float
    source: str
    effective_date: str
    note: str = ""

    @property
    def capex_usd(self) -> float:
        """Purchase price: the sum of the BOM lines (cash out at purchase)."""
        return round(sum(line.amount_usd for line in self.bom), 2)

    @property
    def residual_value_usd(self) -> float:
        """Resale value at the end of the useful life."""
        return round(self.capex_usd * self.residual_fraction, 2)

    def book_value_usd(self, months_since_purchase: float) -> float:
        """Straight-line book value after ``months_since_purchase`` (floored at the residual)."""
        life_months = self.useful_life_years * 12
        used = min(max(months_since_purchase, 0.0), life_months) / life_months
        return round(self.capex_usd - (self.capex_usd - self.residual_value_usd) * used, 2)

    @property
    def depreciation_usd_per_year(self) -> float:
        """(capex − residual) / useful life."""
        return (self.capex_usd - self.residual_value_usd) / self.useful_life_years

    def power_cost_usd_per_year(self, utilization: float) -> float:
        """Electricity at the facility meter: draw scales from idle to nameplate with use."""
        draw_kw = self.power_kw * (self.idle_power_fraction
                                   + (1 - self.idle_power_fraction) * utilization)
        return draw_kw * self.pue * self.usd_per_kwh * HOURS_PER_YEAR

    @property
    def colocation_usd_per_year(self) -> float:
        """Space and cooling billed on provisioned (nameplate) kW."""
        return self.colocation_usd_per_kw_month * self.power_kw * 12

    @property
    def maintenance_staff_usd_per_year(self) -> float:
        """Support contracts and operations staff as a share of capex."""
        return self.capex_usd * (self.maintenance_pct_per_year + self.staff_pct_per_year) / 100

    def cost_usd_per_year(self, utilization: float) -> float:
        """Economic yearly cost: depreciation + power + colocation + maintenance and staff."""
        return (self.depreciation_usd_per_year + self.power_cost_usd_per_year(utilization)
                + self.colocation_usd_per_year + self.maintenance_staff_usd_per_year)

    def cost_usd_per_delivered_gpu_hour(self, utilization: float) -> float:
        """Yearly cost / GPU-hours actually used (N × 8760 × utilization)."""
        if not 0 < utilization <= 1:
            raise ValueError(f"utilization must be in (0, 1], got {utilization}")
        return self.cost_usd_per_year(utilization) / (self.gpu_count * HOURS_PER_YEAR
                                                      * utilization)

    def opex_usd_per_month(self, utilization: float) -> float:
        """Power, colocation, maintenance and staff for one 730-hour month, to the cent."""
        yearly = (self.power_cost_usd_per_year(utilization) + self.colocation_usd_per_year
                  + self.maintenance_staff_usd_per_year)
        return round(yearly / 12, 2)

    def cash_usd_by_month(self, months: int, utilization: float,
                          sell_at_end: bool = False) -> tuple[float, ...]:
        """Cash view: capex in month 0, opex every month, optionally the resale at the end.

        The resale value is the straight-line book value at the horizon (a negative cash
        amount, i.e. money in).
        """
        if months < 1:
            raise ValueError(f"months must be >= 1, got {months}")
        opex = self.opex_usd_per_month(utilization)
        cash = [opex] * months
        cash[0] = round(cash[0] + self.capex_usd, 2)
        if sell_at_end:
            cash[-1] = round(cash[-1] - self.book_value_usd(months), 2)
        return tuple(cash)

    def break_even_utilization(self, rental_usd_per_gpu_hour: float) -> float | None:
        """Utilization above which owning is cheaper than renting at the given rate.

        Solves F + V·u = r·N·8760·u (F = costs independent of use, V = use-dependent power);
        None when owning never wins (u* > 1).
        """
        fixed = self.cost_usd_per_year(0.0)
        variable = self.cost_usd_per_year(1.0) - fixed
        denominator = rental_usd_per_gpu_hour * self.gpu_count * HOURS_PER_YEAR - variable
        if denominator <= 0:
            return None
        u_star = fixed / denominator
        return u_star if u_star <= 1 else None


@dataclass(frozen=True, slots=True, kw_only=True)
class StoragePrice:
    """Object storage and first-tier internet egress list prices of one cloud."""

    cloud: str
    object_storage_usd_per_gb_month: float
    egress_usd_per_gb: float
    egress_free_gb_per_month: float
    tier: str
    source: str
    effective_date: str
    estimate: bool

    def storage_cost_usd(self, stored_gb: float, months: float) -> float:
        """Cost of keeping ``stored_gb`` (10^9 bytes) for ``months``, to the cent."""
        return round(stored_gb * self.object_storage_usd_per_gb_month * months, 2)

    def egress_cost_usd_per_month(self, egress_gb_per_month: float) -> float:
        """Monthly internet egress cost after the free allowance, to the cent."""
        billable_gb = max(0.0, egress_gb_per_month - self.egress_free_gb_per_month)
        return round(billable_gb * self.egress_usd_per_gb, 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceOverrides:
    """User changes on top of the shipped book.

    ``discount_pct`` is a flat negotiated discount on every shipped rental price;
    ``cloud_discount_pct`` replaces it for the clouds it names. ``custom_offerings`` replace
    shipped rows with the same (cloud, region, instance_type) or add new ones; they are taken as
    already negotiated and get no discount.
    """

    discount_pct: float = 0.0
    cloud_discount_pct: tuple[tuple[str, float], ...] = ()
    custom_offerings: tuple[Offering, ...] = ()

    def __post_init__(self) -> None:
        for where, pct in (("discount_pct", self.discount_pct),
                           *((f"cloud_discount_pct.{c}", p) for c, p in self.cloud_discount_pct)):
            if not 0 <= pct < 100:
                raise InputError("prices.overrides", where,
                                 f"a discount must be in [0, 100) %, got {pct}")

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
        return any(flag.blocks(self.option) for flag in self.flags)


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """The offering chosen for ``count`` GPUs under the DESIGN.md §8 rule.

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
