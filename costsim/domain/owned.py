"""Owned servers: a bill of materials and the economic and cash views of owning the box."""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.host_parts import NodeParts
from costsim.units import HOURS_PER_YEAR


def check_utilization(utilization: float) -> None:
    """A utilization is a share of the hours, in (0, 1]: a cost per used hour needs some use."""
    if not 0 < utilization <= 1:
        raise ValueError(f"utilization must be in (0, 1], got {utilization}")


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
    # a scenario's declared server carries its parts and interconnect; a shipped server's
    # parts are read back from its catalog BOM (catalog.servers.parts_of)
    parts: NodeParts | None = None
    interconnect: str = ""

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
        check_utilization(utilization)
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
class DeclaredBomLine:
    """One line of a declared server's bill of materials: an amount paid for an item."""

    kind: str
    item: str
    amount_usd: float
    source: str
    effective_date: str = ""
    estimate: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerDeclaration:
    """A server a scenario declares (``servers:``): its parts and costs as written.

    Operating assumptions left None take the shipped defaults (``owned_defaults.csv``) when
    the catalog turns the declaration into an :class:`OwnedServer`.
    """

    name: str
    gpu: str
    gpu_count: int
    interconnect: str
    parts: NodeParts
    bom: tuple[DeclaredBomLine, ...]
    power_kw: float
    life_years: float
    residual_pct: float
    lead_time_weeks: float = 0.0
    pue: float | None = None
    usd_per_kwh: float | None = None
    colocation_usd_per_kw_month: float | None = None
    maintenance_pct_per_year: float | None = None
    staff_pct_per_year: float | None = None
    source: str = ""
    effective_date: str = ""

    def __post_init__(self) -> None:
        if not self.bom:
            raise ValueError("a declared server needs capex_usd or bom lines")
        if not sum(line.amount_usd for line in self.bom) > 0:
            raise ValueError("the BOM lines must add up to more than $0")
