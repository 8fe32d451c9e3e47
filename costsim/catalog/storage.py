"""Object-storage and internet-egress prices per cloud (``costsim/data/storage_prices.csv``)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from costsim.catalog.resources import csv_bool, read_data_csv
from costsim.domain.storage import StoragePrice

FALLBACK_CLOUD = "*"


@cache
def _storage_prices() -> dict[str, StoragePrice]:
    return {
        row["cloud"]: StoragePrice(
            cloud=row["cloud"],
            object_storage_usd_per_gb_month=float(row["object_storage_usd_per_gb_month"]),
            egress_usd_per_gb=float(row["egress_usd_per_gb"]),
            egress_free_gb_per_month=float(row["egress_free_gb_per_month"]),
            tier=row["tier"], source=row["source"], effective_date=row["effective_date"],
            estimate=csv_bool(row["estimate"]),
        )
        for row in read_data_csv("storage_prices.csv")
    }


def storage_price(cloud: str) -> StoragePrice:
    """Storage and egress prices of ``cloud``; the documented fallback (an estimate) otherwise.

    The fallback comes back with ``cloud`` set to the cloud asked for and ``estimate`` True.
    """
    prices = _storage_prices()
    if cloud in prices:
        return prices[cloud]
    return replace(prices[FALLBACK_CLOUD], cloud=cloud, estimate=True)
