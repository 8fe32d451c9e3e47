"""Savings plans and capacity blocks booked by hand-computed oracles, to the cent."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from costsim.catalog.commit_prices import CapacityBlockRate
from costsim.domain.calendar import Calendar
from costsim.domain.commitments import CapacityBlock, SavingsPlan
from costsim.domain.pricing import Payment
from costsim.sim.commit_pools import (
    CapacityBlockPool,
    SavingsPlanPool,
    book_capacity_block,
    book_savings_plan,
)
from costsim.sim.ledger import Category, Component, LedgerBook, LineKey
from costsim.units import SECONDS_PER_HOUR

# January (744 h) and February (672 h) 2027: 1,416 horizon hours
CAL = Calendar(start=date(2027, 1, 1), horizon_months=2)
HOURS = 1416
MONTH_OF_HOUR = np.array([0] * 744 + [1] * 672, dtype=np.int64)
POOL = "aws us-east-1 p5.48xlarge"
ON_DEMAND = LineKey(phase="train", pool=POOL, gpu="H100", option="on-demand",
                    category=Category.COMPUTE, component=Component.GPU_INSTANCE)


def _plan(payment: Payment = Payment.NO_UPFRONT, usd_per_hour: float = 10.0,
          family: str | None = "H100") -> SavingsPlan:
    return SavingsPlan(cloud="aws", usd_per_hour=usd_per_hour, term_years=1, payment=payment,
                       start=date(2027, 1, 1), family=family)


def _sp(plan: SavingsPlan, discounts: tuple[tuple[str, float], ...],
        upfront_fraction: float = 0.0) -> SavingsPlanPool:
    return SavingsPlanPool(plan=plan, start_s=0.0, upfront_fraction=upfront_fraction,
                           discounts=discounts, source="test", effective_date="2026-05-20",
                           estimate=False)


def _usage(book: LedgerBook) -> dict[LineKey, tuple[np.ndarray, np.ndarray]]:
    """8 GPUs at $2/GPU-hour ($16/h) for January's first 100 hours, 2 GPUs ($4/h) for
    February's first 100 hours, booked on demand as the simulator books rentals."""
    usd, gpu_hours = np.zeros(HOURS), np.zeros(HOURS)
    gpu_hours[0:100], gpu_hours[744:844] = 8.0, 2.0
    usd[:] = gpu_hours * 2.0
    book.spend(ON_DEMAND, 0, 1600.0, gpu_hours=800.0)
    book.spend(ON_DEMAND, 1, 400.0, gpu_hours=200.0)
    return {ON_DEMAND: (usd, gpu_hours)}


def _line(lines: dict[tuple[str, str, Category], tuple[float, float]], phase: str, pool: str,
          category: Category) -> tuple[float, float]:
    return lines[(phase, pool, category)]


def test_a_savings_plans_used_and_idle_hours_and_dollars_by_hand() -> None:
    # $10/h at 30 % off. January: $16/h on demand is $11.20/h at the plan's rate, over the
    # commitment: $10/h of it covered (= $14.2857/h on demand, 7.142857 of the 8 GPU-hours),
    # 100 h -> $1,000.00 used, 714.2857 GPU-hours; $171.43 stays on demand (85.7143 GPU-h).
    # February: $4/h is $2.80/h at the plan's rate, all covered: $280.00, 200 GPU-hours.
    # Idle: 1,416 h x $10 - $1,280 = $12,880.00; stranded: (8,760 - 1,416) h x $10 = $73,440.
    plan = _plan()
    book = LedgerBook(CAL.month_labels())
    usage = _usage(book)
    book_savings_plan(_sp(plan, ((POOL, 0.30),)), usage, MONTH_OF_HOUR, CAL, book)
    ledger = book.close()
    lines = {(x.key.phase, x.key.pool, x.key.category): (x.amount_usd, x.gpu_hours)
             for x in ledger.lines}
    used_usd, used_h = _line(lines, "train", plan.label, Category.COMPUTE)
    assert used_usd == 1280.00
    assert used_h == pytest.approx(714.2857 + 200, abs=1e-4)
    assert _line(lines, "", plan.label, Category.RESERVED_IDLE)[0] == 12880.00
    assert _line(lines, "", plan.label, Category.STRANDED_COMMITMENT)[0] == 73440.00
    od_usd, od_h = _line(lines, "train", POOL, Category.COMPUTE)
    assert od_usd == 171.43
    assert od_h == pytest.approx(85.7143, abs=1e-4)
    # the whole obligation: used + idle + stranded = $10 x 8,760 h
    assert 1280.00 + 12880.00 + 73440.00 == plan.obligation_usd == 87600.00
    # cash: no upfront; $10 for each January and February hour, plus what stayed on demand
    assert [m.cash_usd for m in ledger.months] == [7440.00 + 171.43, 6720.00]
    # what the plan covered is off the usage a later plan sees
    assert float(usage[ON_DEMAND][0].sum()) == pytest.approx(171.4286, abs=1e-4)


def test_an_all_upfront_savings_plan_pays_the_whole_term_in_its_first_month() -> None:
    plan = _plan(Payment.ALL_UPFRONT)
    book = LedgerBook(CAL.month_labels())
    book_savings_plan(_sp(plan, ((POOL, 0.30),), upfront_fraction=1.0), _usage(book),
                      MONTH_OF_HOUR, CAL, book)
    ledger = book.close()
    assert [m.cash_usd for m in ledger.months] == [87600.00 + 171.43, 0.00]
    # amortized: the commitment hour by hour, not the upfront payment
    assert [m.amortized_usd for m in ledger.months] == [7440.00 + 171.43, 6720.00]
    assert ledger.cost_usd == 87600.00 + 171.43


def test_a_compute_plan_covers_the_highest_discount_first() -> None:
    # $8/h over two lines of $10/h on demand each: A at 40 % off ($6/h at the plan's rate)
    # is covered whole, B at 20 % off gets the $2/h left (= $2.50/h of its $10 on demand)
    other = "aws us-east-1 g6e.xlarge"
    line_b = LineKey(phase="serve", pool=other, gpu="L40S", option="on-demand",
                     category=Category.COMPUTE, component=Component.GPU_INSTANCE)
    plan = _plan(usd_per_hour=8.0, family=None)
    book = LedgerBook(CAL.month_labels())
    one_hour = np.zeros(HOURS)
    one_hour[0] = 10.0
    usage = {ON_DEMAND: (one_hour.copy(), one_hour / 10), line_b: (one_hour.copy(), one_hour / 10)}
    book.spend(ON_DEMAND, 0, 10.0, gpu_hours=1.0)
    book.spend(line_b, 0, 10.0, gpu_hours=1.0)
    book_savings_plan(_sp(plan, ((POOL, 0.40), (other, 0.20))), usage, MONTH_OF_HOUR, CAL,
                      book)
    lines = {(x.key.phase, x.key.pool): x.amount_usd for x in book.close().lines
             if x.key.category is Category.COMPUTE}
    assert lines[("train", plan.label)] == 6.00
    assert lines[("train", POOL)] == 0.00
    assert lines[("serve", plan.label)] == 2.00
    assert lines[("serve", other)] == 7.50


def _block(days: int = 2) -> CapacityBlockPool:
    rate = CapacityBlockRate(cloud="aws", instance_type="p5.48xlarge", gpu="H100",
                             gpus_per_instance=8, usd_per_instance_hour=39.33, min_days=1,
                             max_days=182, source="test", effective_date="2024-12-01",
                             estimate=False)
    block = CapacityBlock(gpu="H100", count=16, cloud="aws", start=date(2027, 2, 27), days=days)
    return CapacityBlockPool(block=block, rate=rate, instances=2,
                             start_s=CAL.seconds_at(date(2027, 2, 27)))


def test_a_capacity_block_is_paid_up_front_and_its_unused_window_is_idle_or_stranded() -> None:
    # 2 p5.48xlarge (16 H100) for 4 days from 27 February, at $39.33 per instance-hour
    # ($4.91625/GPU-hour): $7,551.36 in all, paid in February. The horizon ends on 1 March:
    # 2 days (768 GPU-hours) fall in it, the other 768 are stranded. Training used 16 GPUs
    # for 30 h: 480 GPU-hours = $2,359.80; idle 288 GPU-hours = $1,415.88; stranded $3,775.68.
    pool = _block(days=4)
    assert pool.obligation_usd == 7551.36
    book = LedgerBook(CAL.month_labels())
    used = {"train": [0.0, 16 * 30 * SECONDS_PER_HOUR]}
    book_capacity_block(pool, used, CAL, book)
    ledger = book.close()
    lines = {(x.key.phase, x.key.category): (x.amount_usd, x.gpu_hours) for x in ledger.lines}
    assert lines[("train", Category.COMPUTE)] == (2359.80, 480.0)
    assert lines[("", Category.RESERVED_IDLE)] == (1415.88, 288.0)
    assert lines[("", Category.STRANDED_COMMITMENT)] == (3775.68, 768.0)
    assert ledger.cost_usd == 7551.36
    assert [m.cash_usd for m in ledger.months] == [0.00, 7551.36]
