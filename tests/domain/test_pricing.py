"""The pricing rule of each purchase option (pure arithmetic in costsim.domain)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from costsim.domain.pricing import BillingRule, Payment, PurchaseOption
from costsim.domain.reservation import ReservationTerms
from costsim.domain.spot import monthly_probability_to_hazard_per_hour, spot_expected_hours
from costsim.errors import CatalogError


def test_purchase_options_are_the_closed_set_of_design_5() -> None:
    """Exactly the ten strings of DESIGN.md §5, with term and payment parsed from them."""
    assert [o.value for o in PurchaseOption] == [
        "on-demand", "spot", "reserved-1y-no-upfront", "reserved-1y-partial-upfront",
        "reserved-1y-all-upfront", "reserved-3y-no-upfront", "reserved-3y-partial-upfront",
        "reserved-3y-all-upfront", "owned", "api"]
    option = PurchaseOption.reserved(3, Payment.PARTIAL_UPFRONT)
    assert option is PurchaseOption.RESERVED_3Y_PARTIAL_UPFRONT
    assert option.term_years == 3
    assert option.payment is Payment.PARTIAL_UPFRONT
    assert PurchaseOption.SPOT.term_years is None


def test_unknown_option_suggests_the_closest() -> None:
    """A typo gets a "did you mean"."""
    with pytest.raises(CatalogError, match="did you mean 'on-demand'"):
        PurchaseOption.parse("ondemand")


def _aws_rule() -> BillingRule:
    return BillingRule(cloud="aws", increment_s=1, minimum_s=60, spot_notice_s=120,
                       marketplace=False, source="test", effective_date="2026-05-20")


def test_billing_minimum_applies_to_short_runs() -> None:
    """10 s on a 60-s-minimum cloud bills 60 s; longer runs bill per second."""
    rule = _aws_rule()
    assert rule.billed_hours(10) == pytest.approx(60 / 3600)
    assert rule.billed_hours(61.2) == pytest.approx(62 / 3600)
    assert rule.billed_hours(0) == 0
    hourly = BillingRule(cloud="x", increment_s=3600, minimum_s=3600, spot_notice_s=0,
                         marketplace=False, source="test", effective_date="2026-05-20")
    assert hourly.billed_hours(3601) == 2.0


def _terms(upfront_usd: float, recurring: float) -> ReservationTerms:
    return ReservationTerms(option=PurchaseOption.RESERVED_1Y_PARTIAL_UPFRONT, term_hours=8760,
                            discount_fraction=0.4, on_demand_usd_per_hour=10.0,
                            upfront_usd=upfront_usd, recurring_usd_per_hour=recurring,
                            source="test", effective_date="2026-05-20", estimate=False)


def test_reservation_obligation_runs_for_the_full_term() -> None:
    """r_c = upfront/term + recurring; the whole obligation is owed however little is used."""
    terms = _terms(upfront_usd=26280.0, recurring=3.0)  # 6 $/h total = 40 % off 10 $/h
    assert terms.effective_usd_per_hour == pytest.approx(6.0)
    assert terms.total_obligation_usd == 52560.0
    assert terms.cost_usd(used_hours=100) == terms.cost_usd(used_hours=8760) == 52560.0
    assert terms.break_even_utilization == pytest.approx(0.6)
    assert terms.break_even_months == pytest.approx(52560 / (10 * 730))
    assert terms.payback_months == pytest.approx(26280 / (7 * 730))


def test_hazard_from_monthly_probability() -> None:
    """λ = −ln(1 − p)/730, so P(no interruption in 730 h) = 1 − p."""
    lam = monthly_probability_to_hazard_per_hour(0.2)
    assert lam == pytest.approx(-math.log(0.8) / 730)
    assert math.exp(-lam * 730) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="probability"):
        monthly_probability_to_hazard_per_hour(1.0)


def test_spot_expected_hours_matches_a_monte_carlo_simulation() -> None:
    """Closed form vs simulated Poisson interruptions with restart cost and checkpoints."""
    lam, work, interval, restart, ckpt = 0.05, 20.0, 2.0, 0.25, 0.1
    expected = spot_expected_hours(work, lam, interval, restart, ckpt)
    rng = np.random.default_rng(0)
    totals = []
    for _ in range(4000):
        total = 0.0
        segments = [interval + ckpt] * 9 + [interval]
        for length in segments:
            while True:
                t = rng.exponential(1 / lam)
                if t >= length:
                    total += length
                    break
                total += t + restart
        totals.append(total)
    assert expected == pytest.approx(float(np.mean(totals)), rel=0.01)
    assert expected > work  # interruptions always cost something


def test_spot_without_hazard_costs_the_work_plus_checkpoints() -> None:
    """λ = 0: no lost work, only the checkpoints between segments."""
    assert spot_expected_hours(10, 0.0, 2.5, checkpoint_hours=0.1) == pytest.approx(10.3)
    assert spot_expected_hours(10, 0.0) == 10


def test_offering_refuses_zero_and_non_finite_prices() -> None:
    """Break-even and discount arithmetic divide by list prices: zero is not a price."""
    from dataclasses import replace

    from costsim.domain.pricing import Offering

    base = Offering(cloud="c", region="r", instance_type="i", gpu="H100",
                    provider_gpu_name="H100", gpus_per_instance=1, vcpus=1, host_ram_gib=1.0,
                    gpu_memory_gib=80.0, on_demand_usd_per_hour=0.01, spot_usd_per_hour=None,
                    marketplace=False, flags=(), source="s", effective_date="2026-01-01")
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="finite and > 0"):
            replace(base, on_demand_usd_per_hour=bad)
        with pytest.raises(ValueError, match="finite and > 0"):
            replace(base, spot_usd_per_hour=bad)


def test_estimate_flags_are_the_ones_that_change_the_rate() -> None:
    """'~' marks rates resting on assumptions; data gaps and the spot hazard do not."""
    from costsim.domain.pricing import PriceFlag

    estimates = {flag for flag in PriceFlag if flag.is_estimate}
    assert estimates == {PriceFlag.RESERVED_DISCOUNT_ESTIMATE, PriceFlag.RESERVED_BY_CONTRACT,
                         PriceFlag.OWNED_COST_ESTIMATE, PriceFlag.API_PRICE_ESTIMATE}
    assert not any(flag.blocks(PurchaseOption.RESERVED_1Y_NO_UPFRONT) for flag in estimates)
