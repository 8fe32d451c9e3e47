"""Rent vs reserve vs buy curves and their crossings (costsim.domain.breakeven), by hand and as
properties over random servers and rates."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain.breakeven import UTILIZATION_GRID, BreakEven, RentalRate
from costsim.domain.owned import BomLine, OwnedServer
from costsim.domain.pricing import PurchaseOption


def _server(capex_usd: float = 87_600.0, power_kw: float = 0.0, gpu_count: int = 1,
            staff_pct_per_year: float = 0.0, idle_power_fraction: float = 0.0) -> OwnedServer:
    """A one-line BOM; with the defaults it costs $87,600 over 10 years: $1 per hour owned."""
    line = BomLine(component="box", kind="gpu", quantity=1, unit="each",
                   unit_price_usd=capex_usd, source="test", effective_date="2026-01-01",
                   estimate=True)
    return OwnedServer(
        name="test-box", gpu="H100", gpu_count=gpu_count, ram_gib=64, bom=(line,),
        power_kw=power_kw, pue=1.0, usd_per_kwh=0.10, colocation_usd_per_kw_month=0.0,
        idle_power_fraction=idle_power_fraction, maintenance_pct_per_year=0.0,
        staff_pct_per_year=staff_pct_per_year, lead_time_weeks=1, useful_life_years=10,
        residual_fraction=0.0, source="test", effective_date="2026-01-01")


def _rental(option: PurchaseOption, rate: float) -> RentalRate:
    return RentalRate(option=option, cloud="aws", region="us-east-1", instance_type="p5",
                      instances=1, price_usd_per_gpu_hour=rate, flags=(), source="test",
                      effective_date="2026-01-01", estimate=False)


def _break_even(server: OwnedServer, *rentals: RentalRate) -> BreakEven:
    return BreakEven(server=server, utilizations=UTILIZATION_GRID, rentals=rentals,
                     owned_cost_estimate=True)


def test_hand_computed_crossings() -> None:
    """$1/h owned, no power: $2/h at 50 % use; owning beats $4/h above 25 %; a $2/h
    reservation beats $4/h on demand above 50 %, and costs $4 per used hour there."""
    on_demand = _rental(PurchaseOption.ON_DEMAND, 4.0)
    reserved = _rental(PurchaseOption.RESERVED_1Y_NO_UPFRONT, 2.0)
    result = _break_even(_server(), on_demand, reserved)
    curve = {p.utilization: p.cost_usd_per_delivered_gpu_hour for p in result.owned_curve}
    assert curve[0.5] == pytest.approx(2.0)
    assert curve[1.0] == pytest.approx(1.0)
    assert result.owning_break_even_utilization(on_demand) == pytest.approx(0.25)
    assert result.owning_break_even_utilization(reserved) == pytest.approx(0.5)
    assert result.reserving_break_even_utilization(reserved) == pytest.approx(0.5)
    assert result.reserving_break_even_utilization(on_demand) is None  # not a commitment
    assert reserved.cost_usd_per_used_gpu_hour(0.5) == pytest.approx(4.0)
    assert on_demand.cost_usd_per_used_gpu_hour(0.5) == 4.0  # paid only when used
    assert result.rental(PurchaseOption.SPOT) is None


def test_owning_never_wins_below_its_full_use_cost() -> None:
    """A rate under $1/GPU-h (the box at 100 % use) is never beaten: None, not u* > 1."""
    result = _break_even(_server(), _rental(PurchaseOption.SPOT, 0.99))
    assert result.owning_break_even_utilization(result.rentals[0]) is None


def test_reserving_needs_an_on_demand_line() -> None:
    reserved = _rental(PurchaseOption.RESERVED_3Y_ALL_UPFRONT, 2.0)
    assert _break_even(_server(), reserved).reserving_break_even_utilization(reserved) is None


@pytest.mark.parametrize(("grid", "rentals", "message"), [
    ((), (), "empty"),
    ((0.0, 0.5), (), r"\(0, 1\]"),
    ((0.5, 1.2), (), r"\(0, 1\]"),
    ((0.5, 0.2), (), "rise strictly"),
    ((0.5,), (_rental(PurchaseOption.SPOT, 1.0), _rental(PurchaseOption.SPOT, 2.0)),
     "one rental per option"),
])
def test_inconsistent_results_are_refused(grid: tuple[float, ...],
                                          rentals: tuple[RentalRate, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BreakEven(server=_server(), utilizations=grid, rentals=rentals, owned_cost_estimate=True)


@pytest.mark.parametrize(("option", "rate", "message"), [
    (PurchaseOption.OWNED, 1.0, "owned"),
    (PurchaseOption.ON_DEMAND, 0.0, "> 0"),
])
def test_bad_rental_rates_are_refused(option: PurchaseOption, rate: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _rental(option, rate)


servers = st.builds(
    _server, capex_usd=st.floats(1_000, 1e6), power_kw=st.floats(0, 20),
    gpu_count=st.sampled_from([1, 2, 4, 8]), staff_pct_per_year=st.floats(0, 20),
    idle_power_fraction=st.floats(0, 1))
utilizations = st.floats(0.01, 1.0)


@settings(max_examples=200, deadline=None)
@given(servers, utilizations, utilizations)
def test_owned_cost_per_delivered_hour_falls_as_use_rises(server: OwnedServer, low: float,
                                                          high: float) -> None:
    """Fixed costs spread over more used hours: never dearer per hour at higher use."""
    low, high = sorted((low, high))
    cost_low = server.cost_usd_per_delivered_gpu_hour(low)
    cost_high = server.cost_usd_per_delivered_gpu_hour(high)
    assert cost_high <= cost_low * (1 + 1e-12)
    result = _break_even(server)
    curve = [p.cost_usd_per_delivered_gpu_hour for p in result.owned_curve]
    assert curve == sorted(curve, reverse=True)


@settings(max_examples=200, deadline=None)
@given(servers, st.floats(0.05, 50.0), utilizations)
def test_owning_break_even_is_where_the_curves_cross(server: OwnedServer, rate: float,
                                                     u: float) -> None:
    """At u* owning costs the rental rate; above it owning is cheaper, below it dearer; with
    no u* owning is dearer even at full use."""
    rental = _rental(PurchaseOption.ON_DEMAND, rate)
    u_star = _break_even(server, rental).owning_break_even_utilization(rental)
    owned = server.cost_usd_per_delivered_gpu_hour
    if u_star is None:
        assert owned(1.0) >= rate * (1 - 1e-9)
        return
    assert 0 < u_star <= 1
    assert owned(u_star) == pytest.approx(rate, rel=1e-9)
    if u > u_star * (1 + 1e-9):
        assert owned(u) < rate
    elif u < u_star * (1 - 1e-9):
        assert owned(u) > rate


@settings(max_examples=200, deadline=None)
@given(st.floats(0.05, 50.0), st.floats(0.05, 50.0), utilizations)
def test_reserving_break_even_is_where_the_curves_cross(on_demand_rate: float,
                                                        committed_rate: float, u: float) -> None:
    """r_c / u meets the on-demand line at u*; above it the reservation is cheaper per used hour;
    a committed rate above on-demand never wins."""
    on_demand = _rental(PurchaseOption.ON_DEMAND, on_demand_rate)
    reserved = _rental(PurchaseOption.RESERVED_1Y_ALL_UPFRONT, committed_rate)
    u_star = _break_even(_server(), on_demand, reserved).reserving_break_even_utilization(reserved)
    if u_star is None:
        assert committed_rate > on_demand_rate
        return
    assert reserved.cost_usd_per_used_gpu_hour(u_star) == pytest.approx(on_demand_rate)
    cheaper = reserved.cost_usd_per_used_gpu_hour(u) <= on_demand_rate * (1 + 1e-12)
    assert cheaper == (u >= u_star) or u == pytest.approx(u_star)


def test_result_survives_a_trip_between_processes() -> None:
    """Monte Carlo workers send results back pickled; the comparison must come back equal."""
    result = _break_even(_server(), _rental(PurchaseOption.ON_DEMAND, 4.0),
                         _rental(PurchaseOption.RESERVED_3Y_NO_UPFRONT, 2.0))
    back = pickle.loads(pickle.dumps(result))
    assert back == result
    assert back.owned_curve == result.owned_curve
