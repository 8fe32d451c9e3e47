"""The worked examples in docs/pricing.md are the numbers the code computes."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.catalog.prices import cheapest_offering, find_offering, price_book
from costsim.catalog.servers import server_bom
from costsim.domain.pricing import PurchaseOption
from costsim.units import HOURS_PER_MONTH

DOC = (Path(__file__).parents[2] / "docs" / "pricing.md").read_text(encoding="utf-8")


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _pct(fraction: float, digits: int) -> str:
    return f"{fraction * 100:.{digits}f} %"


def test_reserved_vs_on_demand_example() -> None:
    """AWS p4d 1y no-upfront and 3y all-upfront figures."""
    book = price_book()
    p4d = find_offering("aws", "us-east-1", "p4d.24xlarge")
    one = book.reservation(p4d, PurchaseOption.RESERVED_1Y_NO_UPFRONT)
    three = book.reservation(p4d, PurchaseOption.RESERVED_3Y_ALL_UPFRONT)
    assert one is not None
    assert three is not None
    on_demand_4_months = round(4 * HOURS_PER_MONTH * (p4d.on_demand_usd_per_hour or 0), 2)
    for text in (f"${one.effective_usd_per_hour:.3f}/h", _money(one.total_obligation_usd),
                 f"u\\* = {_pct(one.break_even_utilization, 0)}",
                 f"{one.break_even_months:.2f} months",
                 _money(on_demand_4_months),
                 _money(one.total_obligation_usd - on_demand_4_months),
                 _money(three.upfront_usd), f"r_c = ${three.effective_usd_per_hour:.3f}/h",
                 f"{three.break_even_months:.1f} months"):
        assert text in DOC, text


def test_buy_vs_rent_example() -> None:
    """hgx-h100-8 capex, cost curve and break-even utilizations."""
    server = server_bom("hgx-h100-8")
    assert _money(server.capex_usd) in DOC
    assert _money(server.cost_usd_per_year(1.0)) in DOC
    for utilization in (1.0, 0.8, 0.5, 0.3):
        assert f"${server.cost_usd_per_delivered_gpu_hour(utilization):.3f}" in DOC
    aws = cheapest_offering("H100", 8, PurchaseOption.ON_DEMAND, cloud="aws",
                            min_gpus_per_instance=8)
    anywhere = cheapest_offering("H100", 8, PurchaseOption.ON_DEMAND, min_gpus_per_instance=8)
    assert anywhere.offering.instance_type in DOC
    for selection in (aws, anywhere):
        u_star = server.break_even_utilization(selection.quote.price_usd_per_gpu_hour)
        assert u_star is not None
        assert _pct(u_star, 1) in DOC
    assert _money(server.capex_usd) == "$301,520.32"  # pins the BOM the doc describes
    assert server.break_even_utilization(1.56) is None
    assert pytest.approx(6.88) == aws.quote.price_usd_per_gpu_hour


def test_contract_reservation_threshold_in_the_doc() -> None:
    """The discount below which owning beats a tier-2 reservation at full use."""
    server = server_bom("hgx-h100-8")
    anywhere = cheapest_offering("H100", 8, PurchaseOption.ON_DEMAND, min_gpus_per_instance=8)
    full_use = server.cost_usd_per_delivered_gpu_hour(1.0)
    threshold = 1 - full_use / anywhere.quote.price_usd_per_gpu_hour
    assert f"below **{_pct(threshold, 1)}**" in DOC
    assert server.break_even_utilization(anywhere.quote.price_usd_per_gpu_hour
                                         * (1 - threshold + 1e-6)) is not None
    assert server.break_even_utilization(anywhere.quote.price_usd_per_gpu_hour
                                         * (1 - threshold - 1e-3)) is None
