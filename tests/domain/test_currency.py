"""The display currency (costsim.domain.currency): ISO 4217 codes, the rate's range, and the
conversion rule — each amount times the rate in exact decimal, rounded to the currency's minor
unit half away from zero; totals the sum of the converted amounts."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.domain.currency import USD, Currency, currency_json, currency_of
from costsim.domain.display import money_amount, money_change, money_estimate, usd_amount
from costsim.errors import ScenarioError


@pytest.mark.parametrize(("usd", "code", "rate", "expected"), [
    # hand-computed: 100.10 × 0.9215 = 92.242150 → 92.24
    (100.10, "EUR", 0.9215, 92.24),
    # 33.33 × 0.9215 = 30.713595 → 30.71
    (33.33, "EUR", 0.9215, 30.71),
    # a tie: 0.15 × 0.7 = 0.105 exactly → 0.11 (half away from zero; the float product
    # 0.10499999999999998 would round to 0.10)
    (0.15, "GBP", 0.7, 0.11),
    (-0.15, "GBP", 0.7, -0.11),  # a credit (residual value) rounds away from zero too
    # yen have no minor unit: 0.01 × 150 = 1.5 → ¥2; 12.34 × 151.27 = 1866.6718 → ¥1,867
    (0.01, "JPY", 150.0, 2.0),
    (12.34, "JPY", 151.27, 1867.0),
    # three decimals for the Kuwaiti dinar: 10.00 × 0.30705 = 3.0705 → 3.071
    (10.00, "KWD", 0.30705, 3.071),
    (1234.56, "USD", 1.0, 1234.56),
])
def test_an_amount_is_converted_and_rounded_to_the_minor_unit(usd: float, code: str, rate: float,
                                                               expected: float) -> None:
    assert Currency(code=code, fx_rate_per_usd=rate).amount(usd) == expected


def test_a_total_is_the_sum_of_the_converted_lines() -> None:
    eur = Currency(code="EUR", fx_rate_per_usd=0.9215)
    # 92.24 + 30.71 = 122.95, while the total converted on its own, 133.43 × 0.9215 =
    # 122.955745, would round to 122.96: the ledger adds up as shown
    assert eur.total([100.10, 33.33]) == 122.95
    assert eur.amount(100.10 + 33.33) == 122.96


def test_rates_are_multiplied_and_prices_converted_back() -> None:
    eur = Currency(code="EUR", fx_rate_per_usd=0.92)
    assert eur.rate(2.40) == pytest.approx(2.208)
    assert eur.from_local(2.208) == pytest.approx(2.40)


@given(cents=st.integers(-10**12, 10**12),
       rate=st.decimals(min_value=Decimal("0.000001"), max_value=Decimal("100000"), places=6))
def test_each_line_is_the_usd_line_times_the_rate_to_the_cent(cents: int, rate: Decimal) -> None:
    currency = Currency(code="EUR", fx_rate_per_usd=float(rate))
    usd = cents / 100
    exact = Decimal(cents) / 100 * Decimal(repr(float(rate)))
    assert currency.amount(usd) == float(exact.quantize(Decimal("0.01"), ROUND_HALF_UP))
    assert abs(currency.amount(usd) - float(exact)) <= 0.005 + 1e-9 * abs(float(exact))


@pytest.mark.parametrize(("code", "rate", "key", "needle"), [
    ("EURO", 0.9, "currency", "ISO 4217"),
    ("XYZ", 0.9, "currency", "ISO 4217"),
    ("eur", 0.9, "currency", "ISO 4217"),  # the loader upper-cases; the domain takes codes
    ("EUR", 0.0, "fx_rate_per_usd", "(0, 1e+07]"),
    ("EUR", -0.9, "fx_rate_per_usd", "(0, 1e+07]"),
    ("EUR", math.nan, "fx_rate_per_usd", "nan"),
    ("EUR", math.inf, "fx_rate_per_usd", "inf"),
    ("EUR", 2e7, "fx_rate_per_usd", "(0, 1e+07]"),
    ("USD", 0.9, "fx_rate_per_usd", "USD's rate per USD is 1"),
])
def test_a_bad_code_or_rate_is_refused(code: str, rate: float, key: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        Currency(code=code, fx_rate_per_usd=rate)
    assert caught.value.key_path == key
    assert needle in caught.value.problem


def test_a_document_names_its_currency_only_when_not_usd() -> None:
    eur = Currency(code="EUR", fx_rate_per_usd=0.92)
    assert currency_json(USD) == {}
    assert currency_json(eur) == {"currency": "EUR", "fx_rate_per_usd": 0.92}
    assert currency_of({"plans": []}) == USD
    assert currency_of({"currency": "EUR", "fx_rate_per_usd": 0.92}) == eur
    with pytest.raises(ScenarioError):
        currency_of({"currency": "EUR"})  # a rate is required with it


def test_amounts_show_the_symbol_or_the_code_and_the_minor_unit() -> None:
    assert money_amount(1234.5, Currency(code="EUR", fx_rate_per_usd=0.9)) == "€1,234.50"
    assert money_amount(-531.11, Currency(code="GBP", fx_rate_per_usd=0.8)) == "-£531.11"
    assert money_amount(1867.0, Currency(code="JPY", fx_rate_per_usd=150)) == "¥1,867"
    assert money_amount(12.5, Currency(code="CHF", fx_rate_per_usd=0.9)) == "CHF 12.50"
    assert money_amount(3.071, Currency(code="KWD", fx_rate_per_usd=0.3)) == "KWD 3.071"
    assert money_estimate(12298.83, Currency(code="CNY", fx_rate_per_usd=7.1)) == "CN¥12,299"
    assert money_change(-10.0, 100.0, Currency(code="EUR", fx_rate_per_usd=0.9)) == \
        "-€10.00, -10.0%"
    assert money_amount(1234.5) == usd_amount(1234.5) == "$1,234.50"  # USD as before
