"""Savings-plan discounts and capacity-block rates from the shipped tables."""

from __future__ import annotations

import pytest

from costsim.catalog.commit_prices import (
    capacity_block_rate,
    savings_plan_offered,
    savings_plan_terms,
)
from costsim.catalog.prices import find_offering, price_book
from costsim.domain.commitments import SavingsPlanScope
from costsim.domain.pricing import Payment
from costsim.errors import InfeasibleError

FAMILY, COMPUTE = SavingsPlanScope.FAMILY, SavingsPlanScope.COMPUTE


def test_an_ec2_instance_savings_plan_gives_the_reservation_discount() -> None:
    # p4d's published 1-yr reservation discount is 41 %; all-upfront adds AWS's 4 points
    p4d = find_offering("aws", "us-east-1", "p4d.24xlarge")
    terms = savings_plan_terms(p4d, FAMILY, 1, Payment.NO_UPFRONT)
    assert terms.discount_fraction == pytest.approx(0.41)
    assert terms.upfront_fraction == 0.0
    assert terms.estimate  # the equality is read off AWS's published ceilings
    upfront = savings_plan_terms(p4d, FAMILY, 1, Payment.ALL_UPFRONT)
    assert upfront.discount_fraction == pytest.approx(0.45)
    assert upfront.upfront_fraction == 1.0


def test_a_compute_savings_plan_gives_66_72_of_it_and_gcp_a_flat_rate() -> None:
    p4d = find_offering("aws", "us-east-1", "p4d.24xlarge")
    assert savings_plan_terms(p4d, COMPUTE, 3, Payment.NO_UPFRONT).discount_fraction == (
        pytest.approx(0.65 * 0.9167))
    a3 = next(o for o in price_book().offerings("H100", "gcp")
              if o.instance_type == "a3-highgpu-8g")
    assert savings_plan_terms(a3, COMPUTE, 1, Payment.NO_UPFRONT).discount_fraction == (
        pytest.approx(0.28))
    assert savings_plan_terms(a3, COMPUTE, 3, Payment.NO_UPFRONT).discount_fraction == (
        pytest.approx(0.46))


@pytest.mark.parametrize(("cloud", "scope", "payment", "why"), [
    ("gcp", FAMILY, Payment.NO_UPFRONT, "gcp sells no family savings plan"),
    ("azure", FAMILY, Payment.NO_UPFRONT, "azure sells no family savings plan"),
    ("lambda", COMPUTE, Payment.NO_UPFRONT, "lambda sells no compute savings plan"),
    ("gcp", COMPUTE, Payment.ALL_UPFRONT, "gcp sells no all-upfront payment"),
    ("azure", COMPUTE, Payment.PARTIAL_UPFRONT, "azure sells no partial-upfront payment"),
])
def test_plans_a_cloud_does_not_sell_are_refused_with_the_reason(
        cloud: str, scope: SavingsPlanScope, payment: Payment, why: str) -> None:
    reason = savings_plan_offered(cloud, scope, 1, payment)
    assert reason is not None
    assert reason.startswith(why)
    assert savings_plan_offered("aws", scope, 1, payment) is None


def test_capacity_block_rates_come_from_the_published_table_or_the_on_demand_bound() -> None:
    book = price_book()
    aws = capacity_block_rate(book, "H100-SXM", "aws")
    assert (aws.instance_type, aws.usd_per_instance_hour, aws.usd_per_gpu_hour) == (
        "p5.48xlarge", 39.33, pytest.approx(4.91625))
    assert (aws.min_days, aws.max_days, aws.estimate) == (1, 182, False)
    gcp = capacity_block_rate(book, "H100", "gcp")
    # the cheapest region GCP sells it in, leaving out the half-price regional SKUs the price
    # book flags (anomalously-low-region)
    cheapest = min(o.on_demand_usd_per_hour or 0.0 for o in book.offerings("H100", "gcp")
                   if o.instance_type == "a3-highgpu-8g" and not o.flags)
    assert gcp.usd_per_instance_hour == cheapest
    assert (gcp.max_days, gcp.estimate) == (90, True)
    with pytest.raises(InfeasibleError, match="no capacity block of L4 is sold on aws"):
        capacity_block_rate(book, "L4", "aws")
