"""The ledger: lines add up to totals to the cent, in every view."""

from __future__ import annotations

import math
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.sim.ledger import (
    Category,
    Component,
    LedgerBook,
    LedgerSums,
    LineKey,
    apportion_cents,
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
    # 0.999 + 10.005 = 11.004 -> $11.00; each line is the floor or the ceiling of its amount,
    # and 0.999 has the larger remainder (0.9 of a cent against 0.5): it is the one rounded up
    assert amounts == [1.0, 10.0]
    assert ledger.cost_usd == 11.0
    assert ledger.cash_usd == 11.0
    assert [row.opex_usd for row in ledger.months] == [1.0, 10.0, 0.0]
    book = LedgerBook(MONTHS)
    book.spend(_key(), 0, 10.005)
    assert book.close().cost_usd == 10.01  # a half cent: away from zero


def test_cash_and_cost_agree_to_the_cent_when_every_charge_is_paid_in_the_horizon() -> None:
    """A line paid over several months and a month paying several lines: rounding each line
    and each month on its own gave $0.01 of cost and $0.00 of cash (issue 19)."""
    book = LedgerBook(MONTHS)
    for month in range(3):
        book.spend(_key(), month, 0.004)
    ledger = book.close()
    assert ledger.cost_usd == ledger.cash_usd == 0.01
    assert sum(row.opex_usd for row in ledger.months) == 0.01


@given(st.lists(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2),
                                   st.floats(min_value=-1e5, max_value=1e6, allow_nan=False)),
                         min_size=1, max_size=12), min_size=1, max_size=4))
def test_cost_equals_cash_for_pay_as_you_go_plans(
        replications: list[list[tuple[int, int, float]]]) -> None:
    ledgers = []
    for spends in replications:
        book = LedgerBook(MONTHS)
        for line, month, amount in spends:
            book.spend(_key(phase=f"p{line}"), month, amount)
        ledger = book.close()
        assert ledger.cost_usd == ledger.cash_usd
        ledgers.append(ledger)
    mean = average_ledgers(ledgers)
    assert mean.cost_usd == mean.cash_usd
    for line in mean.lines:  # each line within a cent of its exact mean
        exact = sum(next((x.amount_usd for x in led.lines if x.key == line.key), 0.0)
                    for led in ledgers) / len(ledgers)
        assert abs(line.amount_usd - exact) < 0.01 + 1e-9


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


charges = st.lists(st.tuples(st.sampled_from([Category.COMPUTE, Category.STORAGE]),
                             st.integers(-1, 4), st.floats(-1e6, 1e6), st.floats(0, 1e4)),
                   max_size=12)


@given(charges)
def test_batched_spends_equal_spending_one_by_one(entries: list[tuple[Category, int, float,
                                                                      float]]) -> None:
    def key(category: Category) -> LineKey:
        return _key(category, Component.STORAGE if category is Category.STORAGE
                    else Component.GPU_INSTANCE)

    one_by_one, many, months = LedgerBook(MONTHS), LedgerBook(MONTHS), LedgerBook(MONTHS)
    for category, month, amount, hours in entries:
        one_by_one.spend(key(category), month, amount, gpu_hours=hours)
    many.spend_many([(key(c), m, a) for c, m, a, _ in entries])
    for category in (Category.COMPUTE, Category.STORAGE):
        mine = [e for e in entries if e[0] is category]
        months.spend_months(key(category), [e[1] for e in mine], [e[2] for e in mine],
                            [e[3] for e in mine])
    assert many.close() == _without_hours(one_by_one, entries).close()
    by_category = LedgerBook(MONTHS)  # spend_months books one line's months together
    for category in (Category.COMPUTE, Category.STORAGE):
        for c, month, amount, hours in entries:
            if c is category:
                by_category.spend(key(c), month, amount, gpu_hours=hours)
    assert months.close() == by_category.close()


def _without_hours(book: LedgerBook, entries: list[tuple[Category, int, float, float]]
                   ) -> LedgerBook:
    """The same spends with no GPU-hours (what spend_many books)."""
    plain = LedgerBook(MONTHS)
    for category, month, amount, _ in entries:
        plain.spend(_key(category, Component.STORAGE if category is Category.STORAGE
                         else Component.GPU_INSTANCE), month, amount)
    return plain


def plain_apportion(numerators: list[int], denominator: int) -> list[int]:
    """apportion_cents as first written: the largest remainders by a sort key per index."""
    floors = [value // denominator for value in numerators]
    remainders = [value - floor * denominator
                  for value, floor in zip(numerators, floors, strict=True)]
    total = sum(numerators)
    rounded = ((2 * total + denominator) // (2 * denominator) if total >= 0
               else -((-2 * total + denominator) // (2 * denominator)))
    for index in sorted(range(len(floors)), key=lambda i: (-remainders[i], i))[
            :rounded - sum(floors)]:
        floors[index] += 1
    return floors


@given(st.lists(st.integers(-10**15, 10**15), max_size=40),
       st.sampled_from([1, 2, 3, 100, 1_000_000]))
def test_apportioning_equals_the_sort_by_key(numerators: list[int], denominator: int) -> None:
    assert apportion_cents(numerators, denominator) == plain_apportion(numerators, denominator)


amount_or_none = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))


@given(st.lists(st.tuples(st.integers(-1, 4), amount_or_none, amount_or_none), max_size=12),
       st.booleans())
def test_spending_segments_equals_spending_each_charge(
        segments: list[tuple[int, float | None, float | None]], same_line: bool) -> None:
    first = _key(Category.STORAGE, Component.STORAGE, phase="")
    second = first if same_line else _key(Category.DATA_TRANSFER, Component.NETWORK, phase="")
    months = [m for m, _, _ in segments]
    a, b = [x for _, x, _ in segments], [y for _, _, y in segments]
    one, many = LedgerBook(MONTHS), LedgerBook(MONTHS)
    one.spend(first, 0, 1.5)  # a line booked before
    many.spend(first, 0, 1.5)
    one.spend_segments(first, a, second, b, months)
    many.spend_many([charge for m, x, y in segments
                     for charge in ((first, m, x), (second, m, y)) if charge[2] is not None])
    assert one.close() == many.close()
    assert one._lines == many._lines
    assert (one._opex, one._amortized) == (many._opex, many._amortized)


def test_a_non_finite_segment_charge_names_its_line() -> None:
    book = LedgerBook(MONTHS)
    with pytest.raises(ValueError, match="non-finite charge"):
        book.spend_segments(_key(), [1.0, float("inf")], _key(phase="x"), [None, 2.0], [0, 1])


@given(st.lists(st.lists(st.floats(min_value=-1e6, max_value=1e7, allow_nan=False),
                         min_size=1, max_size=6), min_size=1, max_size=6))
def test_summed_ledgers_are_the_same_with_shared_or_copied_keys(
        replications: list[list[float]]) -> None:
    """LedgerSums finds a line by its key object's id: the same sums (and each ledger's cost
    in cents) whether every ledger holds the same key objects or copies of them."""
    shared = [_key(phase=f"p{i}") for i in range(3)]
    by_shared, by_copies = LedgerSums(), LedgerSums()
    for amounts in replications:
        same, copied = LedgerBook(MONTHS), LedgerBook(MONTHS)
        for i, amount in enumerate(amounts):
            same.spend(shared[i % 3], i % 3, amount, gpu_hours=abs(amount) / 7)
            copied.spend(_key(phase=f"p{i % 3}"), i % 3, amount, gpu_hours=abs(amount) / 7)
        ledger = same.close()
        cents = by_shared.add(ledger)
        assert cents == round(ledger.cost_usd * 100)
        assert by_copies.add(pickle.loads(pickle.dumps(copied.close()))) == cents
    assert by_shared.mean() == by_copies.mean()


def test_the_fast_row_builders_set_every_field_as_the_constructors_do() -> None:
    """The ledger builds its lines and month rows through the slots' descriptors: the same
    objects as the dataclass constructors, and every field (a field added to LedgerLine or
    MonthRow fails here until the builders set it)."""
    import dataclasses

    from costsim.sim import ledger as ledger_module
    from costsim.sim.ledger import LedgerLine, MonthRow

    assert tuple(f.name for f in dataclasses.fields(LedgerLine)) == ledger_module._LINE_FIELDS
    assert set(ledger_module._ROW_FIELDS) == {f.name for f in dataclasses.fields(MonthRow)}
    line = ledger_module._ledger_line(_key(), 3.5, -12.25)
    assert line == LedgerLine(key=_key(), gpu_hours=3.5, amount_usd=-12.25)
    assert pickle.loads(pickle.dumps(line)) == line
    assert hash(line) == hash(LedgerLine(key=_key(), gpu_hours=3.5, amount_usd=-12.25))
    row, = ledger_module._month_rows_of_cents(["2027-02"], [100], [200], [250])
    assert row == MonthRow(month="2027-02", cash_usd=3.0, capex_usd=1.0, opex_usd=2.0,
                           amortized_usd=2.5)
    assert repr(row) == repr(MonthRow(month="2027-02", cash_usd=3.0, capex_usd=1.0,
                                      opex_usd=2.0, amortized_usd=2.5))


@given(amounts=st.lists(st.tuples(st.sampled_from(["a", "b", ""]), st.integers(0, 2),
                                  st.floats(-1e6, 1e9, allow_nan=False)), max_size=12),
       capex=st.floats(0, 1e15))
def test_a_closed_ledgers_kept_cents_are_its_amounts_in_cents(
        amounts: list[tuple[str, int, float]], capex: float) -> None:
    """The cents kept when a ledger is closed equal round(amount · 100) of its lines and
    months (what a copy of the ledger, from a worker, gives), and so do the tally's sums and
    the phase costs read from them; huge amounts are not kept (read back instead)."""
    from costsim.sim.ledger import ledger_cents

    book = LedgerBook(MONTHS)
    for phase, month, usd in amounts:
        book.spend(_key(phase=phase), month, usd, gpu_hours=1.0)
    book.cash(1, capex, capex=True)
    ledger = book.close()
    copied = pickle.loads(pickle.dumps(ledger))
    assert copied == ledger
    read_back = ([round(line.amount_usd * 100) for line in ledger.lines],
                 [round(row.capex_usd * 100) for row in ledger.months],
                 [round(row.opex_usd * 100) for row in ledger.months],
                 [round(row.amortized_usd * 100) for row in ledger.months])
    assert ledger_cents(ledger) == ledger_cents(copied) == read_back
    assert ledger.by_phase() == copied.by_phase()
    kept, fresh = LedgerSums(), LedgerSums()
    assert kept.add(ledger) == fresh.add(copied)
    assert kept.mean() == fresh.mean()


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_a_non_finite_monthly_spend_names_its_line_and_books_nothing(bad: float) -> None:
    book = LedgerBook(MONTHS)
    with pytest.raises(ValueError, match="non-finite charge"):
        book.spend_months(_key(), [0, 1], [5.0, bad], [1.0, 2.0])
    with pytest.raises(ValueError, match="non-finite charge"):
        book.spend_months(_key(), [0, 1], [5.0, 6.0], [bad, 2.0])
    assert book.close().lines == ()


def test_monthly_spends_whose_sum_overflows_are_still_booked() -> None:
    book = LedgerBook(MONTHS)
    book.spend_months(_key(), [0, 1], [1e308, 1e308], [1.0, 1.0])  # each finite
    assert len(book._lines) == 1
