"""Capacity pools of a plan, priced by the price book, and the pure rules that book them.

A pool is one GPU type bought one way:

* :class:`RentalPool` — on-demand or spot instances, paid per billed hour while used;
* :class:`CommitmentPool` — a 1y/3y reservation: the whole obligation is owed, booked
  as ``compute`` for the hours work used, ``reserved-idle`` for committed hours in the horizon that
  nothing used, and ``stranded-commitment`` for the part of the term after the horizon;
* :class:`OwnedPool` — servers bought on a date, usable after their lead time: capex (per BOM
  component) minus the book value left at the horizon's end, power by measured use, colocation,
  maintenance and staff.

Multi-GPU work is placed on job-sized instances (``PriceBook.cheapest_offering_for_job``), never
on single-GPU machines. These functions are pure: the simulator measures use, they turn use into
ledger lines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from costsim.catalog.prices import PriceBook
from costsim.catalog.servers import declared_server, server_bom, with_operating_costs
from costsim.domain.calendar import Calendar
from costsim.domain.gpu import GPUS_PER_NODE
from costsim.domain.owned import OwnedServer, ServerDeclaration
from costsim.domain.plans import Commitment, OwnedPurchase
from costsim.domain.pricing import BillingRule, Offering, PriceFlag, PurchaseOption
from costsim.domain.reservation import ReservationTerms
from costsim.errors import InfeasibleError
from costsim.sim.ledger import (
    BOM_KIND_COMPONENT,
    Category,
    Component,
    LedgerBook,
    LineKey,
    line_key,
    split_cents,
)
from costsim.units import HOURS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR

# Days in an average Gregorian month, for monthly rates applied to calendar months.
DAYS_PER_MONTH = 365.25 / 12


@dataclass(frozen=True, slots=True, kw_only=True)
class RentalPool:
    """On-demand or spot instances of one offering, at the scenario's prices."""

    gpu: str
    option: PurchaseOption
    offering: Offering
    rate_usd_per_gpu_hour: float
    billing: BillingRule
    spot_hazard_per_instance_hour: float
    source: str
    estimate: bool

    @property
    def name(self) -> str:
        """The ledger's ``pool``: ``cloud region instance_type``."""
        return self.offering.key

    @property
    def gpus_per_instance(self) -> int:
        """GPUs in one instance of the offering."""
        return self.offering.gpus_per_instance

    def instances_for(self, gpus: int) -> int:
        """Whole instances needed for ``gpus`` GPUs (the rounding the ledger reports)."""
        return math.ceil(gpus / self.gpus_per_instance)

    def gpus_paid_for(self, gpus: int) -> int:
        """GPUs billed to run ``gpus`` GPUs of work: all the GPUs of the whole instances."""
        return self.instances_for(gpus) * self.gpus_per_instance

    def spot_hazard_per_s(self, gpus: int, scale: float = 1.0) -> float:
        """Reclaims per second of a job of ``gpus`` GPUs on this pool: the hazard per instance
        × its whole instances (any one reclaimed interrupts the job) × the replication's
        hazard factor."""
        return (self.instances_for(gpus) * self.spot_hazard_per_instance_hour * scale
                / SECONDS_PER_HOUR)


def rental_pool(book: PriceBook, gpu: str, job_gpus: int, option: PurchaseOption, *,
                cloud: str | None, region: str | None, price_factor: float = 1.0,
                min_host_ram_gib_per_gpu: float = 0.0) -> RentalPool:
    """The cheapest unflagged offering for jobs of ``job_gpus`` GPUs under ``option`` (the price
    book's rule, job-sized instances, enough host RAM per GPU), with the scenario's price change
    applied.

    Raises:
        CatalogError: unknown GPU, cloud or region.
        InfeasibleError: nothing sells ``option`` for this GPU there.
    """
    selection = book.cheapest_offering_for_job(gpu, job_gpus, option, cloud, region,
                                               min_host_ram_gib_per_gpu)
    quote = selection.quote
    hazard = quote.spot_hazard.hazard_per_hour if quote.spot_hazard is not None else 0.0
    return RentalPool(gpu=selection.offering.gpu, option=option, offering=selection.offering,
                      rate_usd_per_gpu_hour=quote.price_usd_per_gpu_hour * price_factor,
                      billing=book.billing_rule(selection.offering.cloud),
                      spot_hazard_per_instance_hour=hazard, source=quote.source,
                      estimate=quote.estimate)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitmentPool:
    """A reservation of ``instances`` instances of one offering from ``start_s`` for a term."""

    gpu: str
    option: PurchaseOption
    offering: Offering
    instances: int
    terms: ReservationTerms  # per instance
    start_s: float
    implied_by_phase: str = ""  # a use entry with a reserved option and no matching commitment
    # the quote's flags (reserved-by-contract, reserved-discount-estimate, quoted-reservation…)
    flags: tuple[PriceFlag, ...] = ()

    @property
    def name(self) -> str:
        """The ledger's ``pool``."""
        return self.offering.key

    @property
    def gpus(self) -> int:
        """Committed GPUs (whole instances)."""
        return self.instances * self.offering.gpus_per_instance

    @property
    def end_s(self) -> float:
        """End of the term in simulated seconds."""
        return self.start_s + self.terms.term_hours * SECONDS_PER_HOUR

    @property
    def rate_usd_per_gpu_hour(self) -> float:
        """The committed effective rate r_c per GPU-hour (upfront spread plus recurring)."""
        return self.terms.effective_usd_per_hour / self.offering.gpus_per_instance

    @property
    def obligation_usd(self) -> float:
        """Everything owed over the term for all instances."""
        return self.instances * self.terms.total_obligation_usd


def commitment_pool(book: PriceBook, commitment: Commitment, calendar: Calendar, *,
                    job_gpus: int = 1, price_factor: float = 1.0, implied_by_phase: str = "",
                    start_s: float | None = None) -> CommitmentPool:
    """Price a commitment: the offering selling it whose instances for ``commitment.count``
    GPUs cost least, among instances that hold the largest job run on it (``job_gpus``, at most
    a node: 8 L4s for single-GPU replicas are eight 1-GPU instances, 16 H100s for one training
    run are two 8-GPU ones); relaxed to any size where no such instance sells the term. A quoted
    rate (a sales quote) is not moved by the scenario's planned price change.

    Raises:
        CatalogError / InfeasibleError: as :func:`rental_pool`, or the offering sells no such term.
    """
    option = commitment.option
    try:
        selection = book.cheapest_offering(commitment.gpu, commitment.count, option,
                                           commitment.cloud, commitment.region,
                                           min_gpus_per_instance=min(job_gpus, GPUS_PER_NODE))
    except InfeasibleError:
        selection = book.cheapest_offering(commitment.gpu, commitment.count, option,
                                           commitment.cloud, commitment.region)
    terms = selection.quote.reservation
    if terms is None:  # cheapest_offering only returns quotes that exist
        raise AssertionError("a reserved quote without terms")
    if PriceFlag.QUOTED_RESERVATION in selection.quote.flags:
        price_factor = 1.0
    if price_factor != 1.0:
        terms = replace(terms, on_demand_usd_per_hour=terms.on_demand_usd_per_hour * price_factor,
                        upfront_usd=round(terms.upfront_usd * price_factor, 2),
                        recurring_usd_per_hour=terms.recurring_usd_per_hour * price_factor)
    start = calendar.seconds_at(commitment.start) if start_s is None else start_s
    return CommitmentPool(gpu=selection.offering.gpu, option=option,
                          offering=selection.offering, instances=selection.instances,
                          terms=terms, start_s=start, implied_by_phase=implied_by_phase,
                          flags=selection.quote.flags)


def plan_line(pool: str, gpu: str, option: PurchaseOption, category: Category,
              component: Component) -> LineKey:
    """A plan-level ledger line (no phase): a commitment's or owned servers' own costs."""
    return line_key("", pool, gpu, option.value, category, component)


def seconds_by_month(t0_s: float, t1_s: float, month_starts_s: Sequence[float]) -> list[float]:
    """How many seconds of [t0, t1) fall in each horizon month (nothing outside the horizon)."""
    out = [0.0] * (len(month_starts_s) - 1)
    for m in range(len(out)):
        lo, hi = max(t0_s, month_starts_s[m]), min(t1_s, month_starts_s[m + 1])
        if hi > lo:
            out[m] = hi - lo
    return out


def book_commitment(pool: CommitmentPool, used_gpu_s_by_phase: Mapping[str, Sequence[float]],
                    calendar: Calendar, book: LedgerBook) -> None:
    """Book a commitment's whole obligation: each phase's use, idle hours in the horizon, and
    the stranded part of the term after it.

    ``used_gpu_s_by_phase`` maps a phase to the GPU-time it used on the pool in each horizon
    month. Every committed GPU-hour costs r_c, so used + idle + stranded = the obligation.
    """
    months = calendar.month_starts_s()
    active = seconds_by_month(pool.start_s, pool.end_s, months)
    rate = pool.rate_usd_per_gpu_hour
    committed_in_horizon_h = sum(active) * pool.gpus / SECONDS_PER_HOUR
    term_gpu_h = pool.terms.term_hours * pool.gpus
    stranded_h = max(0.0, term_gpu_h - committed_in_horizon_h)
    used_total_h = 0.0
    for phase, used in sorted(used_gpu_s_by_phase.items()):
        used_h = sum(used) / SECONDS_PER_HOUR
        if used_h <= 0:
            continue
        used_total_h += used_h
        book.charge(line_key(phase, pool.name, pool.gpu, pool.option.value, Category.COMPUTE,
                             Component.GPU_INSTANCE),
                    used_h * rate, gpu_hours=used_h)

    def line(category: Category) -> LineKey:
        return plan_line(pool.name, pool.gpu, pool.option, category, Component.GPU_INSTANCE)

    idle_h = max(0.0, committed_in_horizon_h - used_total_h)
    book.charge(line(Category.RESERVED_IDLE), idle_h * rate, gpu_hours=idle_h)
    if stranded_h > 0:
        book.charge(line(Category.STRANDED_COMMITMENT), stranded_h * rate, gpu_hours=stranded_h)
    # cash: the upfront in the start month, the recurring rate for the hours billed each month
    if pool.start_s < calendar.horizon_s:
        book.cash(calendar.month_index(pool.start_s), pool.instances * pool.terms.upfront_usd,
                  capex=False)
    for m, seconds in enumerate(active):
        hours = seconds / SECONDS_PER_HOUR
        book.cash(m, pool.instances * pool.terms.recurring_usd_per_hour * hours, capex=False)
        book.amortize(m, pool.gpus * rate * hours)


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedPool:
    """``count`` servers bought on ``purchase_s``, usable from ``available_s``."""

    server: OwnedServer
    count: int
    purchase_s: float
    available_s: float

    @property
    def name(self) -> str:
        """The ledger's ``pool``."""
        return f"owned {self.server.name}"

    @property
    def gpu(self) -> str:
        """The servers' GPU type."""
        return self.server.gpu

    @property
    def gpus(self) -> int:
        """GPUs across all servers."""
        return self.count * self.server.gpu_count


def owned_pool(purchase: OwnedPurchase, calendar: Calendar,
               declared: tuple[ServerDeclaration, ...] = ()) -> OwnedPool:
    """The servers of an ``owned`` entry: BOM with the entry's parts, usable after lead time.

    A server the scenario declares (``declared``, its ``servers:`` block) keeps its own parts
    and BOM (the loader refuses part keys on its ``owned`` entries).

    Raises:
        CatalogError: unknown server. InputError: a GPU count or part the platform does not take.
    """
    mine = next((d for d in declared if d.name == purchase.server), None)
    if mine is not None:
        server = declared_server(mine)
    else:
        server = server_bom(purchase.server, ram_gib=purchase.ram_gib, source="owned",
                            nvme_tb=purchase.nvme_tb, cpu_cores=purchase.cpu_cores,
                            nic_gbps=purchase.nic_gbps)
    if purchase.life_years is not None:
        server = with_operating_costs(server, useful_life_years=purchase.life_years)
    purchase_s = calendar.seconds_at(purchase.purchase)
    return OwnedPool(server=server, count=purchase.count, purchase_s=purchase_s,
                     available_s=purchase_s + server.lead_time_weeks * 7 * SECONDS_PER_DAY)


@dataclass(frozen=True, slots=True, kw_only=True)
class _OwnedMonth:
    """One horizon month the servers are in service: what does not depend on their use."""

    month: int
    seconds: float
    gpu_s_available: float
    colocation_usd: float
    staff_usd: float
    depreciation_usd: float


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedBooking:
    """What booking an owned pool costs apart from its measured use: the same in every
    replication of a plan, so a plan computes it once (:func:`owned_booking`)."""

    pool: OwnedPool
    # per BOM line, in BOM order: (capex line, capex, residual line, residual)
    bom_charges: tuple[tuple[LineKey, float, LineKey, float], ...]
    capex_month: int
    capex_usd: float
    power_key: LineKey
    staff_key: LineKey
    months: tuple[_OwnedMonth, ...]


def owned_booking(pool: OwnedPool, calendar: Calendar) -> OwnedBooking:
    """The use-independent part of :func:`book_owned` (capex by BOM line, the residual, the
    capex month, colocation, staff and depreciation by month), with the same arithmetic."""
    server, n = pool.server, pool.count
    months = calendar.month_starts_s()
    in_service = seconds_by_month(pool.available_s, calendar.horizon_s, months)

    def line(category: Category, component: Component) -> LineKey:
        return plan_line(pool.name, pool.gpu, PurchaseOption.OWNED, category, component)

    capex = n * server.capex_usd
    months_in_service = sum(in_service) / SECONDS_PER_DAY / DAYS_PER_MONTH
    residual = n * server.book_value_usd(months_in_service)
    # the book value is one figure to the cent, split over the BOM lines by their capex share
    # so that the lines add up to it exactly (largest remainder)
    residual_lines = split_cents(-residual, [bom_line.amount_usd for bom_line in server.bom])
    bom_charges = []
    for bom_line, residual_usd in zip(server.bom, residual_lines, strict=True):
        component = BOM_KIND_COMPONENT.get(bom_line.kind, Component.CHASSIS)
        bom_charges.append((line(Category.CAPEX, component), n * bom_line.amount_usd,
                            line(Category.RESIDUAL_VALUE, component), residual_usd))
    depreciation_per_month = n * server.depreciation_usd_per_year / 12
    colocation_per_year = server.colocation_usd_per_year
    staff_per_year = server.maintenance_staff_usd_per_year
    in_months = []
    for m, seconds in enumerate(in_service):
        if seconds <= 0:
            continue
        month_fraction = seconds / SECONDS_PER_DAY / DAYS_PER_MONTH
        in_months.append(_OwnedMonth(
            month=m, seconds=seconds, gpu_s_available=seconds * pool.gpus,
            colocation_usd=n * colocation_per_year / 12 * month_fraction,
            staff_usd=n * staff_per_year / 12 * month_fraction,
            depreciation_usd=depreciation_per_month * month_fraction))
    return OwnedBooking(pool=pool, bom_charges=tuple(bom_charges),
                        capex_month=calendar.month_index(pool.purchase_s), capex_usd=capex,
                        power_key=line(Category.POWER_COLOCATION, Component.POWER_FACILITY),
                        staff_key=line(Category.MAINTENANCE_STAFF, Component.STAFF),
                        months=tuple(in_months))


def book_owned(pool: OwnedPool, used_gpu_s_by_month: Sequence[float], calendar: Calendar,
               book: LedgerBook, booking: OwnedBooking | None = None) -> None:
    """Book owned servers: capex by BOM component, the residual (book value at the horizon's
    end, negative), power by each month's measured use, colocation, maintenance and staff.

    Depreciation runs straight-line from delivery over the useful life (the amortized view);
    capex is cash in the purchase month. ``booking`` is :func:`owned_booking` of the pool and
    calendar, computed once per plan (computed here when not given).
    """
    if booking is None or booking.pool is not pool:
        booking = owned_booking(pool, calendar)
    server, n = pool.server, pool.count
    for capex_key, capex_usd, residual_key, residual_usd in booking.bom_charges:
        book.charge(capex_key, capex_usd)
        book.charge(residual_key, residual_usd)
    book.cash(booking.capex_month, booking.capex_usd, capex=True)
    # per month: power and colocation, then staff, then depreciation, as booked one by one
    # (a month's sums see the same additions in the same order; other months are apart)
    charges: list[tuple[LineKey, int, float]] = []
    for month in booking.months:
        m = month.month
        utilization = min(1.0, used_gpu_s_by_month[m] / month.gpu_s_available)
        power = n * server.power_cost_usd_per_year(utilization) * month.seconds / (
            HOURS_PER_YEAR * SECONDS_PER_HOUR)
        charges.append((booking.power_key, m, power + month.colocation_usd))
        charges.append((booking.staff_key, m, month.staff_usd))
    book.spend_many(charges)
    for month in booking.months:
        book.amortize(month.month, month.depreciation_usd)
