"""A server declared in a scenario's ``servers:`` block, booked line by line (issue 21 item 1)."""

from __future__ import annotations

from datetime import date

import pytest

from costsim.catalog.servers import declared_server
from costsim.domain.calendar import Calendar
from costsim.domain.host_parts import NodeParts
from costsim.domain.owned import DeclaredBomLine, ServerDeclaration
from costsim.domain.plans import OwnedPurchase
from costsim.sim.ledger import Category, Component, LedgerBook
from costsim.sim.pools import book_owned, owned_pool

YEAR = Calendar(start=date(2027, 1, 1), horizon_months=12)


def _declared() -> ServerDeclaration:
    lines = (("gpu", "2 × A100 40GB", 20_000.0), ("cpu", "32-core CPU", 3_000.0),
             ("ram", "128 GB DDR4", 500.0), ("chassis", "2U chassis", 4_500.0))
    return ServerDeclaration(
        name="my-box", gpu="A100", gpu_count=2, interconnect="nvlink",
        parts=NodeParts(cpu_cores=32, ram_gib=128, nvme_tb=3.84, nic_gbps=100),
        bom=tuple(DeclaredBomLine(kind=k, item=i, amount_usd=a, source="quote")
                  for k, i, a in lines),
        power_kw=1.0, life_years=4, residual_pct=20, pue=1.5, usd_per_kwh=0.10,
        colocation_usd_per_kw_month=100, maintenance_pct_per_year=5, staff_pct_per_year=5)


def test_a_declared_servers_ledger_matches_hand_arithmetic() -> None:
    """One declared server bought 2027-01-01, no lead time, a 12-month horizon (365 days =
    8,760 h = 365 / 30.4375 = 11.991786 ledger months), its GPUs busy all the time.

    capex, one line per BOM line: gpu 20,000 + cpu 3,000 + ram 500 + chassis 4,500 = 28,000.
    residual = the straight-line book value at the horizon, negative:
        28,000 − (28,000 − 20 % × 28,000) × 11.991786 / 48 = 28,000 − 5,596.17 = 22,403.83,
        split by capex share: gpu 20/28 → 16,002.74 (16,002.7357), cpu 3/28 → 2,400.41,
        ram 0.5/28 → 400.07 (400.0684), chassis 4.5/28 → 3,600.61 (3,600.6155); the cents
        go by largest remainder so the four lines add to 22,403.83 exactly.
    power × PUE: 1.0 kW at full use × 1.5 × $0.10/kWh × 8,760 h = 1,314.00;
    colocation: $100/kW-month × 1 kW × 11.991786 months = 1,199.18 (power_colocation 2,513.18).
    maintenance + staff: (5 % + 5 %) × 28,000 = 2,800 a year × 11.991786 / 12 = 2,798.08.
    """
    server = declared_server(_declared())
    assert server.parts == NodeParts(cpu_cores=32, ram_gib=128, nvme_tb=3.84, nic_gbps=100)
    pool = owned_pool(OwnedPurchase(server="my-box", count=1, purchase=date(2027, 1, 1)),
                      YEAR, (_declared(),))
    assert pool.available_s == 0.0  # lead time 0 weeks unless declared
    months = YEAR.month_starts_s()
    busy = [(months[m + 1] - months[m]) * pool.gpus for m in range(12)]
    book = LedgerBook(YEAR.month_labels())
    book_owned(pool, busy, YEAR, book)
    ledger = book.close()
    by_line = {(line.key.category, line.key.component): line.amount_usd
               for line in ledger.lines}
    assert by_line[(Category.CAPEX, Component.GPU)] == pytest.approx(20_000.00, abs=0.005)
    assert by_line[(Category.CAPEX, Component.CPU)] == pytest.approx(3_000.00, abs=0.005)
    assert by_line[(Category.CAPEX, Component.MEMORY)] == pytest.approx(500.00, abs=0.005)
    assert by_line[(Category.CAPEX, Component.CHASSIS)] == pytest.approx(4_500.00, abs=0.005)
    assert by_line[(Category.RESIDUAL_VALUE, Component.GPU)] == pytest.approx(-16_002.74,
                                                                              abs=0.005)
    assert by_line[(Category.RESIDUAL_VALUE, Component.CPU)] == pytest.approx(-2_400.41,
                                                                              abs=0.005)
    assert by_line[(Category.RESIDUAL_VALUE, Component.MEMORY)] == pytest.approx(-400.07,
                                                                                 abs=0.005)
    assert by_line[(Category.RESIDUAL_VALUE, Component.CHASSIS)] == pytest.approx(-3_600.61,
                                                                                  abs=0.005)
    assert by_line[(Category.POWER_COLOCATION, Component.POWER_FACILITY)] == pytest.approx(
        2_513.18, abs=0.005)
    assert by_line[(Category.MAINTENANCE_STAFF, Component.STAFF)] == pytest.approx(
        2_798.08, abs=0.005)
    assert ledger.months[0].capex_usd == pytest.approx(28_000.00, abs=0.005)


def test_operating_assumptions_left_out_take_the_shipped_defaults() -> None:
    from dataclasses import replace

    from costsim.catalog.servers import owned_defaults

    bare = replace(_declared(), pue=None, usd_per_kwh=None, colocation_usd_per_kw_month=None,
                   maintenance_pct_per_year=None, staff_pct_per_year=None)
    server = declared_server(bare)
    defaults = owned_defaults()
    assert (server.pue, server.usd_per_kwh, server.colocation_usd_per_kw_month) == (
        defaults["pue"], defaults["usd_per_kwh"], defaults["colocation_usd_per_kw_month"])
    assert server.residual_fraction == pytest.approx(0.20)
    assert server.capex_usd == 28_000.00
