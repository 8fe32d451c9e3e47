"""The ledger: lines add up to totals to the cent, in every view."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from costsim.sim.ledger import (
    Category,
    Component,
    LedgerBook,
    LineKey,
    average_ledgers,
)

MONTHS = ("2027-01", "2027-02", "2027-03")


def _key(category: Category = Category.COMPUTE, component: Component = Component.GPU_INSTANCE,
         phase: str = "train") -> LineKey:
    return LineKey(phase=phase, pool="aws us-east-1 p5.48xlarge", gpu="H100", option="on-demand",
                   category=category, component=component)


def test_lines_round_to_the_cent_and_the_total_is_their_sum() -> None:
    book = LedgerBook(MONTHS)
    for _ in range(3):
        book.spend(_key(), 0, 0.333, gpu_hours=0.1)
    book.spend(_key(Category.STORAGE, Component.STORAGE), 1, 10.005)
    ledger = book.close()
    amounts = sorted(line.amount_usd for line in ledger.lines)
    assert amounts == [1.0, 10.01]  # 0.999 -> 1.00; 10.005 -> 10.01 (half away from zero)
    assert ledger.cost_usd == 11.01
    assert ledger.cash_usd == 11.01
    assert [row.opex_usd for row in ledger.months] == [1.0, 10.01, 0.0]


def test_capex_is_cash_in_its_month_and_amortized_over_time() -> None:
    book = LedgerBook(MONTHS)
    book.charge(_key(Category.CAPEX, Component.GPU, phase=""), 300.0)
    book.cash(0, 300.0, capex=True)
    for month in range(3):
        book.amortize(month, 100.0)
    book.cash(7, 5.0, capex=False)  # after the horizon: not in the cash view
    ledger = book.close()
    assert [row.capex_usd for row in ledger.months] == [300.0, 0.0, 0.0]
    assert [row.amortized_usd for row in ledger.months] == [100.0] * 3
    assert ledger.cash_usd == 300.0


def test_budget_groups_split_gpu_memory_storage_and_the_rest() -> None:
    book = LedgerBook(MONTHS)
    book.charge(_key(Category.CAPEX, Component.GPU), 700.0)
    book.charge(_key(Category.CAPEX, Component.MEMORY), 200.0)
    book.charge(_key(Category.CAPEX, Component.CPU), 100.0)
    assert book.close().by_budget_group() == {"gpu": 700.0, "memory-storage": 200.0,
                                              "other": 100.0}


@given(st.lists(st.lists(st.floats(min_value=-1e6, max_value=1e7, allow_nan=False),
                         min_size=1, max_size=6), min_size=1, max_size=5))
def test_averaged_ledgers_still_add_up_to_the_cent(replications: list[list[float]]) -> None:
    ledgers = []
    for amounts in replications:
        book = LedgerBook(MONTHS)
        for i, amount in enumerate(amounts):
            book.spend(_key(phase=f"p{i % 3}"), i % 3, amount)
        ledgers.append(book.close())
    mean = average_ledgers(ledgers)
    total_cents = sum(round(line.amount_usd * 100) for line in mean.lines)
    assert round(mean.cost_usd * 100) == total_cents
    assert round(mean.cash_usd * 100) == sum(round(r.cash_usd * 100) for r in mean.months)
    for row in mean.months:
        assert round(row.cash_usd * 100) == round(row.capex_usd * 100) + round(row.opex_usd * 100)
