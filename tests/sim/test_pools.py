"""Pricing pools and booking their obligations, checked by hand."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.prices import price_book
from costsim.domain.calendar import Calendar
from costsim.domain.plans import Commitment, OwnedPurchase
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.sim.ledger import Category, LedgerBook
from costsim.sim.pools import (
    book_commitment,
    book_owned,
    commitment_pool,
    owned_pool,
    rental_pool,
    seconds_by_month,
)
from costsim.units import HOURS_PER_YEAR, SECONDS_PER_DAY, SECONDS_PER_HOUR

CAL = Calendar(start=date(2027, 1, 1), horizon_months=6)


def _commitment(**changes: object) -> Commitment:
    base = {"gpu": "A100", "count": 8, "term_years": 1, "payment": Payment.NO_UPFRONT,
            "start": date(2027, 1, 1), "cloud": "aws"}
    return Commitment(**{**base, **changes})  # type: ignore[arg-type]


def test_multi_gpu_jobs_get_job_sized_instances() -> None:
    pool = rental_pool(price_book(), "H100", 16, PurchaseOption.ON_DEMAND, cloud=None,
                       region=None)
    assert pool.gpus_per_instance == 8
    assert pool.instances_for(16) == 2


def test_an_idle_reservation_costs_exactly_its_idle_hours() -> None:
    pool = commitment_pool(price_book(), _commitment(), CAL)
    book = LedgerBook(CAL.month_labels())
    book_commitment(pool, {}, CAL, book)
    by_cat = book.close().by_category()
    horizon_h = CAL.horizon_s / SECONDS_PER_HOUR
    assert by_cat[Category.RESERVED_IDLE] == pytest.approx(
        horizon_h * pool.gpus * pool.rate_usd_per_gpu_hour, abs=0.01)
    assert Category.COMPUTE not in by_cat  # no phase used it
    stranded_h = (HOURS_PER_YEAR - horizon_h) * pool.gpus
    assert by_cat[Category.STRANDED_COMMITMENT] == pytest.approx(
        stranded_h * pool.rate_usd_per_gpu_hour, abs=0.01)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1.0), min_size=6, max_size=6))
def test_used_idle_and_stranded_add_up_to_the_obligation(use_share: list[float]) -> None:
    pool = commitment_pool(price_book(), _commitment(payment=Payment.ALL_UPFRONT), CAL)
    months = CAL.month_starts_s()
    used = [share * (months[m + 1] - months[m]) * pool.gpus for m, share in enumerate(use_share)]
    book = LedgerBook(CAL.month_labels())
    book_commitment(pool, {"train": used}, CAL, book)
    ledger = book.close()
    assert ledger.cost_usd == pytest.approx(pool.obligation_usd, abs=0.05)
    # all upfront: the whole obligation is cash in the first month, nothing recurring
    assert ledger.months[0].cash_usd == pytest.approx(pool.obligation_usd, abs=0.05)
    assert sum(row.cash_usd for row in ledger.months[1:]) == pytest.approx(0, abs=0.05)


def test_a_commitment_starting_mid_horizon_is_paid_from_its_start() -> None:
    pool = commitment_pool(price_book(), _commitment(start=date(2027, 4, 1)), CAL)
    book = LedgerBook(CAL.month_labels())
    book_commitment(pool, {}, CAL, book)
    cash = [row.cash_usd for row in book.close().months]
    assert cash[:3] == [0.0, 0.0, 0.0]
    assert cash[3] == pytest.approx(pool.instances * pool.terms.recurring_usd_per_hour * 30 * 24,
                                    abs=0.01)


def test_buying_servers_books_capex_and_the_residual_value_at_the_horizon() -> None:
    purchase = OwnedPurchase(server="hgx-h100-8", count=2, purchase=date(2027, 1, 1))
    pool = owned_pool(purchase, CAL)
    assert pool.gpus == 16
    assert pool.available_s == pytest.approx(12 * 7 * SECONDS_PER_DAY)  # 12-week lead time
    book = LedgerBook(CAL.month_labels())
    book_owned(pool, [0.0] * 6, CAL, book)
    ledger = book.close()
    by_cat = ledger.by_category()
    server = pool.server
    assert by_cat[Category.CAPEX] == pytest.approx(2 * server.capex_usd, abs=0.05)
    in_service_months = (CAL.horizon_s - pool.available_s) / SECONDS_PER_DAY / (365.25 / 12)
    assert by_cat[Category.RESIDUAL_VALUE] == pytest.approx(
        -2 * server.book_value_usd(in_service_months), abs=0.05)
    assert ledger.months[0].capex_usd == pytest.approx(2 * server.capex_usd, abs=0.01)
    # nothing runs, and nothing is billed for power or staff, before delivery
    assert ledger.months[1].opex_usd == 0.0
    assert ledger.months[5].opex_usd > 0


def test_owned_power_grows_with_measured_use() -> None:
    pool = owned_pool(OwnedPurchase(server="hgx-h100-8", count=1, purchase=date(2027, 1, 1)),
                      Calendar(start=date(2027, 1, 1), horizon_months=12))
    cal = Calendar(start=date(2027, 1, 1), horizon_months=12)
    months = cal.month_starts_s()
    full = [(months[m + 1] - months[m]) * pool.gpus for m in range(12)]
    costs = []
    for use in ([0.0] * 12, full):
        book = LedgerBook(cal.month_labels())
        book_owned(pool, use, cal, book)
        costs.append(book.close().by_category()[Category.POWER_COLOCATION])
    assert costs[1] > costs[0] > 0


def test_seconds_by_month_clips_to_the_horizon() -> None:
    months = CAL.month_starts_s()
    split = seconds_by_month(-100.0, months[1] + 10, months)
    assert split[0] == months[1]
    assert split[1] == 10
    assert sum(seconds_by_month(0, 10 * CAL.horizon_s, months)) == CAL.horizon_s


def test_a_commitment_for_single_gpu_work_buys_single_gpu_instances() -> None:
    """8 L4s for one-GPU replicas are eight 1-GPU instances, not one 8-GPU box at a higher
    $/GPU-h; 16 H100s for one training run sit on 8-GPU instances."""
    l4 = commitment_pool(price_book(), _commitment(gpu="L4", count=8), CAL, job_gpus=1)
    assert l4.offering.gpus_per_instance == 1
    assert l4.instances == 8
    h100 = commitment_pool(price_book(), _commitment(gpu="H100", count=16), CAL, job_gpus=16)
    assert h100.offering.gpus_per_instance == 8
    assert h100.instances == 2


def test_routing_prices_a_rented_replica_as_the_whole_instances_it_holds() -> None:
    """On AWS the A100-80GB comes only in 8-GPU p4de instances: a 1-GPU replica is billed for
    all 8, and the fleet's size routing must see that price (it used to see 1/8 of it)."""
    from costsim.sim.serving_prep import _replica_usd_per_hour

    pool = rental_pool(price_book(), "A100-80GB", 1, PurchaseOption.ON_DEMAND, cloud="aws",
                       region=None)
    assert pool.gpus_per_instance == 8
    assert _replica_usd_per_hour(pool, 1) == pytest.approx(8 * pool.rate_usd_per_gpu_hour)
    assert _replica_usd_per_hour(None, 1) == 0.0
