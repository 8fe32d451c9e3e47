"""Object storage and internet egress prices of one cloud (datasets, checkpoints, traffic)."""

from __future__ import annotations

from dataclasses import dataclass


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


    def egress_usd(self, egress_gb_in_month: float) -> float:
        """One calendar month's internet egress after that month's free allowance (not
        rounded: the ledger rounds each line once)."""
        return max(0.0, egress_gb_in_month - self.egress_free_gb_per_month) * (
            self.egress_usd_per_gb)
