"""Savings-plan discounts and capacity-block rates from the shipped tables.

``price_savings_plans.csv``: per cloud, scope (``compute`` or ``family``) and term, either a flat
discount off on-demand or a ratio of the instance's own reservation discount
(``price_reserved_discounts.csv``: the providers publish savings-plan ceilings against their
reservation ceilings, e.g. AWS 66 % vs 72 %), with the payment plan's extra points and upfront
share from ``price_payment_adjustments.csv`` (the providers sell the same payment options for
both). ``price_capacity_blocks.csv``: per cloud and GPU, the block's instance, its rate per
instance-hour (blank: the instance's on-demand price, an upper bound) and the days it is sold
for. Each rate carries its source, date and whether it is an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from costsim.catalog.gpus import get_gpu
from costsim.catalog.price_tables import ANY, discount_rule, payment_rule
from costsim.catalog.prices import PriceBook
from costsim.catalog.resources import csv_bool, csv_optional_float, read_data_csv
from costsim.domain.commitments import SavingsPlanScope
from costsim.domain.pricing import Offering, Payment, PurchaseOption
from costsim.errors import InfeasibleError


@dataclass(frozen=True, slots=True, kw_only=True)
class SavingsPlanTerms:
    """A savings plan's discount on one instance, and how its commitment is paid."""

    discount_fraction: float
    upfront_fraction: float
    source: str
    effective_date: str
    estimate: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CapacityBlockRate:
    """What one capacity block instance costs per hour, and the days it is sold for."""

    cloud: str
    instance_type: str
    gpu: str
    gpus_per_instance: int
    usd_per_instance_hour: float
    min_days: int
    max_days: int
    source: str
    effective_date: str
    estimate: bool

    @property
    def usd_per_gpu_hour(self) -> float:
        """The block's rate per GPU-hour."""
        return self.usd_per_instance_hour / self.gpus_per_instance


@cache
def _plan_rows() -> tuple[dict[str, str], ...]:
    return tuple(read_data_csv("price_savings_plans.csv"))


@cache
def _block_rows() -> tuple[dict[str, str], ...]:
    return tuple(read_data_csv("price_capacity_blocks.csv"))


def savings_plan_row(cloud: str, scope: SavingsPlanScope, term_years: int) -> dict[str, str]:
    """The row for ``cloud`` (or the ``*`` fallback), scope and term."""
    for wanted in (cloud, ANY):
        for row in _plan_rows():
            if (row["cloud"] == wanted and row["scope"] == scope.value
                    and int(row["term_years"]) == term_years):
                return row
    raise AssertionError(f"price_savings_plans.csv lacks * {scope} {term_years}y")


def savings_plan_offered(cloud: str, scope: SavingsPlanScope, term_years: int,
                         payment: Payment) -> str | None:
    """None when ``cloud`` sells this savings plan, else why not (one sentence)."""
    row = savings_plan_row(cloud, scope, term_years)
    if not csv_bool(row["offered"]):
        return f"{cloud} sells no {scope.value} savings plan ({row['source']})"
    pay = payment_rule(cloud, term_years, payment)
    if not csv_bool(pay["offered"]):
        return f"{cloud} sells no {payment.value} payment for a {term_years}y commitment"
    return None


def savings_plan_terms(offering: Offering, scope: SavingsPlanScope, term_years: int,
                       payment: Payment) -> SavingsPlanTerms:
    """The discount a savings plan gives ``offering``'s on-demand price.

    Raises:
        InfeasibleError: the cloud sells no such plan or payment.
    """
    why_not = savings_plan_offered(offering.cloud, scope, term_years, payment)
    if why_not is not None:
        raise InfeasibleError(why_not)
    row = savings_plan_row(offering.cloud, scope, term_years)
    pay = payment_rule(offering.cloud, term_years, payment)
    flat = csv_optional_float(row["discount_pct"])
    estimate = csv_bool(row["estimate"]) or csv_bool(pay["estimate"])
    source = row["source"]
    if flat is None:
        reserved = discount_rule(offering, term_years)
        base_pct = float(reserved["discount_pct"]) * float(row["reserved_ratio"])
        estimate = estimate or csv_bool(reserved["estimate"])
        source = f"{source}; reservation discount: {reserved['source']}"
    else:
        base_pct = flat
    pct = base_pct + float(pay["extra_discount_pct_points"])
    return SavingsPlanTerms(discount_fraction=pct / 100,
                            upfront_fraction=float(pay["upfront_fraction"]),
                            source=source, effective_date=row["effective_date"],
                            estimate=estimate)


def savings_plan_upfront_fraction(cloud: str, term_years: int, payment: Payment) -> float:
    """The share of the whole commitment paid at its start (0 no-upfront, 1 all-upfront)."""
    return float(payment_rule(cloud, term_years, payment)["upfront_fraction"])


def capacity_block_rate(book: PriceBook, gpu: str, cloud: str) -> CapacityBlockRate:
    """The capacity block of ``gpu`` sold on ``cloud``.

    Raises:
        InfeasibleError: no block of that GPU is sold there (the message lists what is).
    """
    name = get_gpu(gpu).name
    for row in _block_rows():
        if row["cloud"] != cloud or row["gpu"] != name:
            continue
        rate = csv_optional_float(row["usd_per_instance_hour"])
        if rate is None:  # the instance's on-demand price (cheapest unflagged region), an
            # upper bound; a row a blocking flag keeps out of selection is not a price
            prices = [o.on_demand_usd_per_hour for o in book.offerings(name, cloud)
                      if o.instance_type == row["instance_type"]
                      and o.on_demand_usd_per_hour is not None
                      and not any(f.blocks(PurchaseOption.ON_DEMAND) for f in o.flags)]
            if not prices:
                continue
            rate = min(prices)
        return CapacityBlockRate(
            cloud=cloud, instance_type=row["instance_type"], gpu=name,
            gpus_per_instance=int(row["gpus_per_instance"]), usd_per_instance_hour=rate,
            min_days=int(row["min_days"]), max_days=int(row["max_days"]), source=row["source"],
            effective_date=row["effective_date"], estimate=csv_bool(row["estimate"]))
    sold = sorted({f"{r['gpu']} on {r['cloud']}" for r in _block_rows()})
    raise InfeasibleError(f"no capacity block of {name} is sold on {cloud} (the price book "
                          f"has: {', '.join(sold)})")
