"""The shipped pricing tables (``costsim/data``), parsed into domain objects or rule rows.

``price_book.csv`` (built by ``pricing/build.py`` from ``pricing/raw``), ``price_clouds.csv``
(billing minimum, spot notice, marketplaces, whether reservations are sold),
``price_reserved_discounts.csv`` and ``price_payment_adjustments.csv`` (1y/3y commitments) and
``spot_hazard.csv`` (interruption hazard per GPU class). Loading only: how the rules combine into
a price is :mod:`costsim.catalog.prices`.
"""

from __future__ import annotations

from functools import cache

from costsim.catalog.gpus import get_gpu
from costsim.catalog.resources import csv_bool, csv_optional_float, read_data_csv
from costsim.domain.pricing import BillingRule, Offering, Payment, PriceFlag
from costsim.domain.spot import SpotHazard

ANY = "*"


def _offering_from_row(row: dict[str, str]) -> Offering:
    return Offering(
        cloud=row["cloud"], region=row["region"], instance_type=row["instance_type"],
        gpu=row["gpu"], provider_gpu_name=row["provider_gpu_name"],
        gpus_per_instance=int(row["gpus_per_instance"]), vcpus=int(row["vcpus"]),
        host_ram_gib=float(row["host_ram_gib"]), gpu_memory_gib=float(row["gpu_memory_gib"]),
        on_demand_usd_per_hour=csv_optional_float(row["on_demand_usd_per_hour"]),
        spot_usd_per_hour=csv_optional_float(row["spot_usd_per_hour"]),
        marketplace=csv_bool(row["marketplace"]),
        flags=tuple(PriceFlag(flag) for flag in row["flags"].split(";") if flag),
        source=row["source"], effective_date=row["effective_date"], date_note=row["date_note"],
        note=row["note"],
    )


@cache
def shipped_offerings() -> tuple[Offering, ...]:
    """Every row of the shipped price book (rentals only), in file order."""
    return tuple(_offering_from_row(row) for row in read_data_csv("price_book.csv"))


def price_book_date() -> str:
    """The price book's date: the newest effective date of its rows (YYYY-MM-DD), which the
    reports print as provenance (pricing/README.md gives each source's date)."""
    return max(offering.effective_date for offering in shipped_offerings())


@cache
def billing_rules() -> dict[str, BillingRule]:
    """Per-cloud billing increment and minimum, spot notice and marketplace status."""
    return {
        row["cloud"]: BillingRule(
            cloud=row["cloud"], increment_s=float(row["billing_increment_s"]),
            minimum_s=float(row["billing_minimum_s"]), spot_notice_s=float(row["spot_notice_s"]),
            marketplace=csv_bool(row["marketplace"]), source=row["source"],
            effective_date=row["effective_date"], note=row["note"],
        )
        for row in read_data_csv("price_clouds.csv")
    }


# How a cloud sells 1y/3y commitments (``reserved_terms`` in price_clouds.csv).
RESERVED_PUBLISHED = "published"  # a public discount table (AWS, GCP, Azure)
RESERVED_BY_CONTRACT = "contract"  # negotiated, prices unpublished (pricing/raw/SOURCE.md §6)
RESERVED_NONE = "none"  # marketplaces and the owned pseudo-cloud


@cache
def reserved_terms() -> dict[str, str]:
    """Per cloud: ``published``, ``contract`` or ``none`` (see the constants above)."""
    return {row["cloud"]: row["reserved_terms"] for row in read_data_csv("price_clouds.csv")}


@cache
def _discount_rows() -> tuple[dict[str, str], ...]:
    return tuple(read_data_csv("price_reserved_discounts.csv"))


@cache
def _payment_rows() -> tuple[dict[str, str], ...]:
    return tuple(read_data_csv("price_payment_adjustments.csv"))


@cache
def _spot_hazards() -> dict[str, SpotHazard]:
    by_gpu: dict[str, SpotHazard] = {}
    for row in read_data_csv("spot_hazard.csv"):
        hazard = SpotHazard(
            gpu_class=row["gpu_class"], bucket=row["bucket"],
            monthly_interruption_probability=float(row["monthly_interruption_probability"]),
            source=row["source"], effective_date=row["effective_date"],
            estimate=csv_bool(row["estimate"]),
        )
        for gpu in row["gpus"].split(";"):
            by_gpu[gpu] = hazard
    return by_gpu


def spot_hazard(gpu: str) -> SpotHazard:
    """The spot interruption model of ``gpu``'s class (the 'inference' class if unlisted)."""
    name = get_gpu(gpu).name
    hazards = _spot_hazards()
    return hazards.get(name, hazards["T4"])


def discount_rule(offering: Offering, term_years: int) -> dict[str, str]:
    """The first row of ``price_reserved_discounts.csv`` that covers ``offering``.

    The file lists specific families before per-cloud and global fallbacks: order is precedence.
    """
    for row in _discount_rows():
        if (int(row["term_years"]) == term_years
                and row["cloud"] in (ANY, offering.cloud)
                and offering.instance_type.startswith(row["instance_prefix"])
                and row["gpu"] in ("", offering.gpu)):
            return row
    raise AssertionError(f"price_reserved_discounts.csv has no fallback for {offering.key}")


def payment_rule(cloud: str, term_years: int, payment: Payment) -> dict[str, str]:
    """The payment-plan adjustment of ``cloud`` (or the ``*`` default) for one term."""
    for wanted in (cloud, ANY):
        for row in _payment_rows():
            if (row["cloud"] == wanted and int(row["term_years"]) == term_years
                    and row["payment"] == payment.value):
                return row
    raise AssertionError(f"price_payment_adjustments.csv lacks {term_years}y {payment}")
