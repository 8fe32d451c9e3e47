"""Rent vs reserve vs buy: the cost of a used GPU-hour against utilization, and the crossings.

One :class:`BreakEven` per owned server holds everything a chart or table of the comparison
shows (docs/pricing.md, worked example 2): the server (BOM and operating costs), the utilization
grid, and the cheapest unflagged rental of each purchase option with its source and flags. It holds
no price book and no callback, so the simulator's results can carry it to the report layer, which
may import only domain and result types (DESIGN.md §4). ``costsim.catalog.breakeven`` builds it.

The three curves, per GPU-hour actually used at utilization u (share of the term's hours):

* owned: (F + V·u) / (N·8760·u), falling with u (F: depreciation, colocation, maintenance, staff
  and idle power; V: the power that grows with use) — :class:`costsim.domain.owned.OwnedServer`;
* on-demand and spot: the rate r, paid only for hours used, flat in u;
* reserved: the committed effective rate r_c (upfront / term + recurring), owed whether used or
  not, so r_c / u per used hour.

Break-evens: owning against a rental rate r solves F + V·u = r·N·8760·u (the rental bought for
just the GPU-hours the server would deliver; for a reservation, one sized to the work and fully
used); reserving against on-demand is where r_c / u meets the on-demand line, u* = r_c / r_od.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.owned import OwnedServer, check_utilization
from costsim.domain.pricing import PriceFlag, PurchaseOption

# The grid ``costsim prices --breakeven`` tabulates: every tenth of the hours, up to all of them.
UTILIZATION_GRID: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedCostPoint:
    """One point of the owned server's curve."""

    utilization: float
    cost_usd_per_delivered_gpu_hour: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RentalRate:
    """The cheapest unflagged rental of one purchase option for a server's GPUs, like for like.

    ``price_usd_per_gpu_hour`` is the quote's effective rate per GPU-hour: for a reservation the
    committed rate r_c, owed for every hour of the term. ``instances`` is how many instances of
    ``instance_type`` hold the server's GPUs.
    """

    option: PurchaseOption
    cloud: str
    region: str
    instance_type: str
    instances: int
    price_usd_per_gpu_hour: float
    flags: tuple[PriceFlag, ...]
    source: str
    effective_date: str
    estimate: bool

    def __post_init__(self) -> None:
        if self.option is PurchaseOption.OWNED:
            raise ValueError("a rental rate cannot be of option 'owned'")
        if self.price_usd_per_gpu_hour <= 0:
            raise ValueError(f"{self.option.value}: price_usd_per_gpu_hour must be > 0, "
                             f"got {self.price_usd_per_gpu_hour}")
        if self.instances < 1:
            raise ValueError(f"{self.option.value}: instances must be >= 1, got {self.instances}")

    @property
    def committed(self) -> bool:
        """True for reservations: the whole term is paid whatever the use."""
        return self.option.is_reserved

    def cost_usd_per_used_gpu_hour(self, utilization: float) -> float:
        """What one GPU-hour actually used costs at ``utilization``: r, or r_c / u if committed."""
        check_utilization(utilization)
        if self.committed:
            return self.price_usd_per_gpu_hour / utilization
        return self.price_usd_per_gpu_hour


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakEven:
    """One owned server against renting its GPUs: the curves and their crossings.

    ``owned_cost_estimate`` is True when the owned costs rest on assumptions (the shipped BOM
    prices and operating costs are editable estimates, docs/pricing.md).
    """

    server: OwnedServer
    utilizations: tuple[float, ...]
    rentals: tuple[RentalRate, ...]
    owned_cost_estimate: bool

    def __post_init__(self) -> None:
        if not self.utilizations:
            raise ValueError("the utilization grid is empty")
        for utilization in self.utilizations:
            check_utilization(utilization)
        if list(self.utilizations) != sorted(set(self.utilizations)):
            raise ValueError(f"the utilization grid must rise strictly, got {self.utilizations}")
        options = [rental.option for rental in self.rentals]
        if len(set(options)) != len(options):
            raise ValueError(f"one rental per option, got {[o.value for o in options]}")

    @property
    def owned_curve(self) -> tuple[OwnedCostPoint, ...]:
        """The owned server's cost per delivered GPU-hour at each utilization of the grid."""
        return tuple(OwnedCostPoint(
            utilization=u, cost_usd_per_delivered_gpu_hour=self.server
            .cost_usd_per_delivered_gpu_hour(u)) for u in self.utilizations)

    def rental(self, option: PurchaseOption) -> RentalRate | None:
        """The rental of ``option``, or None where none is offered (or it was not asked for)."""
        return next((r for r in self.rentals if r.option is option), None)

    def owning_break_even_utilization(self, rental: RentalRate) -> float | None:
        """Utilization above which owning beats ``rental``; None when it never does (u* > 1)."""
        return self.server.break_even_utilization(rental.price_usd_per_gpu_hour)

    def reserving_break_even_utilization(self, rental: RentalRate) -> float | None:
        """Utilization above which the reservation ``rental`` beats the on-demand rental here.

        u* = r_c / r_od, where r_c / u crosses the on-demand line; None for a rental that is not
        a reservation, without an on-demand rental, or when reserving never wins (u* > 1).
        """
        on_demand = self.rental(PurchaseOption.ON_DEMAND)
        if not rental.committed or on_demand is None:
            return None
        u_star = rental.price_usd_per_gpu_hour / on_demand.price_usd_per_gpu_hour
        return u_star if u_star <= 1 else None
