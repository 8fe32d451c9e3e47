"""Reserved / committed-use terms: the obligation, effective rate and break-even of one commitment.

A reservation is owed for the whole term whether used or not (docs/pricing.md); the
discount tables that produce these terms are loaded by ``costsim.catalog.price_tables``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from costsim.units import HOURS_PER_MONTH

if TYPE_CHECKING:
    # only an annotation here; a runtime import would be circular (Quote holds these terms)
    from costsim.domain.pricing import PurchaseOption


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

