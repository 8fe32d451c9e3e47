"""The worked examples in docs/pricing.md are the numbers the code computes."""

from __future__ import annotations

from pathlib import Path

from costsim.catalog.breakeven import break_even
from costsim.catalog.prices import find_offering, price_book
from costsim.catalog.servers import server_bom
from costsim.domain.breakeven import BreakEven, RentalRate
from costsim.domain.pricing import PurchaseOption
from costsim.units import HOURS_PER_MONTH

ROOT = Path(__file__).parents[2]
DOC = (ROOT / "docs" / "pricing.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


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


def _hgx_h100(cloud: str | None = None) -> BreakEven:
    return break_even(price_book(), server_bom("hgx-h100-8"), cloud=cloud)


def _rental(result: BreakEven, option: PurchaseOption) -> RentalRate:
    rental = result.rental(option)
    assert rental is not None, option
    return rental


def _doc_row(label: str) -> list[str]:
    """The cells of the worked example's table row that starts with ``label``."""
    (line,) = [line for line in DOC.splitlines() if line.startswith(f"| {label} ")]
    return [cell.replace("**", "").strip() for cell in line.strip("|").split("|")]


def _rate_cell(rental: RentalRate) -> str:
    return f"{rental.price_usd_per_gpu_hour:.3f}{'~' if rental.estimate else ''}"


def _owning_cell(result: BreakEven, rental: RentalRate) -> str:
    u_star = result.owning_break_even_utilization(rental)
    return "never" if u_star is None else _pct(u_star, 1)


def test_buy_vs_rent_example() -> None:
    """hgx-h100-8 capex and cost curve, as the break-even engine computes them."""
    result = _hgx_h100()
    server = result.server
    assert _money(server.capex_usd) == "$301,520.32"  # pins the BOM the doc describes
    assert _money(server.capex_usd) in DOC
    assert _money(server.cost_usd_per_year(1.0)) in DOC
    curve = {p.utilization: p.cost_usd_per_delivered_gpu_hour for p in result.owned_curve}
    for utilization in (1.0, 0.8, 0.5, 0.3):
        assert f"${curve[utilization]:.3f}" in DOC
    assert f"**${curve[1.0]:.3f}** at" in DOC


def test_buy_vs_rent_table_rows() -> None:
    """Every row of the worked example's table is the engine's rental, rate, mark and u*."""
    aws, anywhere = _hgx_h100("aws"), _hgx_h100()
    for option, label in ((PurchaseOption.ON_DEMAND, "on-demand"),
                          (PurchaseOption.RESERVED_1Y_NO_UPFRONT, "reserved 1y no-upfront"),
                          (PurchaseOption.RESERVED_3Y_ALL_UPFRONT, "reserved 3y all-upfront")):
        rental = _rental(aws, option)
        cells = _doc_row(f"AWS {rental.instance_type} {label}")
        assert cells[1:] == [_rate_cell(rental), _owning_cell(aws, rental)
                             + (" utilization" if option is PurchaseOption.ON_DEMAND else "")]
    cheapest = _rental(anywhere, PurchaseOption.ON_DEMAND)
    cells = _doc_row(f"cheapest unflagged 8-GPU on-demand ({cheapest.cloud} "
                     f"{cheapest.instance_type})")
    assert cells[1:] == [_rate_cell(cheapest), _owning_cell(anywhere, cheapest)]
    first = _rental(anywhere, PurchaseOption.RESERVED_1Y_NO_UPFRONT)
    last = _rental(anywhere, PurchaseOption.RESERVED_3Y_ALL_UPFRONT)
    reserved = [r for r in anywhere.rentals if r.committed]
    assert {(r.cloud, r.instance_type) for r in reserved} == {(first.cloud, first.instance_type)}
    assert {_owning_cell(anywhere, r) for r in reserved} == {"never"}
    cells = _doc_row(f"{first.cloud} {first.instance_type} reserved 1y no-upfront … 3y "
                     "all-upfront")
    assert cells[1:] == [f"{_rate_cell(first)} … {_rate_cell(last)}", "never"]
    spot = _rental(aws, PurchaseOption.SPOT)
    cells = _doc_row(f"AWS spot {spot.instance_type}")
    assert cells[1:] == [_rate_cell(spot), _owning_cell(aws, spot)]


def test_readme_buy_vs_rent_summary() -> None:
    """The README's buy-vs-rent sentence: $1.961 / $3.793 per delivered GPU-hour, 27.1 % vs AWS
    on-demand and 80.7 % vs the cheapest tier-2 on-demand, from the engine."""
    aws, anywhere = _hgx_h100("aws"), _hgx_h100()
    curve = {p.utilization: p.cost_usd_per_delivered_gpu_hour for p in aws.owned_curve}
    aws_od, cheapest = (_rental(r, PurchaseOption.ON_DEMAND) for r in (aws, anywhere))
    for text in (f"${curve[1.0]:.3f} per delivered GPU-hour", f"${curve[0.5]:.3f} at 50 %",
                 f"AWS on-demand (${aws_od.price_usd_per_gpu_hour:.2f}/GPU-h) above "
                 f"{_owning_cell(aws, aws_od)}",
                 f"cheapest tier-2 on-demand (${cheapest.price_usd_per_gpu_hour:.2f}) only above "
                 f"{_owning_cell(anywhere, cheapest)}"):
        assert text in " ".join(README.split()), text
    assert (_owning_cell(aws, aws_od), _owning_cell(anywhere, cheapest)) == ("27.1 %", "80.7 %")
    assert (f"{curve[1.0]:.3f}", f"{curve[0.5]:.3f}") == ("1.961", "3.793")


def test_contract_reservation_threshold_in_the_doc() -> None:
    """The discount below which owning beats a tier-2 reservation at full use."""
    result = _hgx_h100()
    server = result.server
    rate = _rental(result, PurchaseOption.ON_DEMAND).price_usd_per_gpu_hour
    threshold = 1 - server.cost_usd_per_delivered_gpu_hour(1.0) / rate
    assert f"below **{_pct(threshold, 1)}**" in DOC
    assert server.break_even_utilization(rate * (1 - threshold + 1e-6)) is not None
    assert server.break_even_utilization(rate * (1 - threshold - 1e-3)) is None


def _flag_table() -> dict[str, str]:
    """pricing/README.md's data-quality flag table: flag → its "blocks" cell."""
    text = (ROOT / "pricing" / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Data-quality flags"):]
    section = section[:section.index("\n## ", 3)]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = cells[-1]
    return rows


def test_the_blocking_flags_in_the_docs_are_the_codes_one_list() -> None:
    from costsim.domain.pricing import BLOCKING_FLAGS, PriceFlag

    table = _flag_table()
    for flag in PriceFlag:
        if flag.value not in table:
            continue  # the quote-time flags are described in prose below the table
        blocked = BLOCKING_FLAGS.get(flag)
        expected = ("—" if blocked is None else "everything" if not blocked
                    else ", ".join(sorted(o.value for o in blocked)))
        assert table[flag.value] == expected, flag
    assert set(BLOCKING_FLAGS) <= {PriceFlag(name) for name in table}
    # docs/pricing.md and the README name each blocking flag too
    section = DOC[DOC.index("## Choosing an offering"):DOC.index("## Your own prices")]
    for flag in BLOCKING_FLAGS:
        assert f"`{flag.value}`" in section, flag
        assert flag.value in README, flag
