"""The display currency a scenario may choose (DESIGN §5, §13): every figure is computed and kept
in USD; reports, tables and text show it converted at the scenario's ``fx_rate_per_usd``.

Conversion rule (docs/report.md "Currency"): an amount of money — a ledger line, a month's cash,
a price's upfront — is converted on its own, exactly in decimal: the USD amount (the figure JSON
carries, whole cents for every billed amount) times the rate, rounded to the currency's minor
unit (cents; whole yen), half away from zero, the same rule the ledger rounds its USD totals
with (docs/simulator.md "Calendar and billing"). A total shown beside its lines (a plan's cost,
a phase's or category's sum, a month column's total) is the sum of its converted lines, so a
converted ledger adds up as an accountant re-adds it; a total converted on its own could differ
from that sum by up to half a minor unit per line. A rate ($/GPU-hour, $/1M tokens) is
multiplied and not rounded (it is shown to 3 decimals).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from costsim.errors import ScenarioError

# ISO 4217 List One (SIX Financial Information, the ISO 4217 maintenance agency; the list of
# 2025-01-01 with the Caribbean guilder XCG of 2025 and the Zimbabwe Gold ZWG of 2024):
# every code in current use for a country's money, by its minor unit (the number of decimals
# an amount is written to). The fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW) are
# left out, as are precious metals, the SDR and the testing codes (XAU, XDR, XTS, XXX ...): no
# invoice is paid in them.
_MINOR_UNITS_2 = (
    "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN "
    "BZD CAD CDF CHF CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS "
    "GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR "
    "LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD "
    "PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN "
    "SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VED VES WST XCD XCG YER ZAR "
    "ZMW ZWG")
_MINOR_UNITS_0 = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF"
_MINOR_UNITS_3 = "BHD IQD JOD KWD LYD OMR TND"
MINOR_UNITS: dict[str, int] = {
    **dict.fromkeys(_MINOR_UNITS_2.split(), 2), **dict.fromkeys(_MINOR_UNITS_0.split(), 0),
    **dict.fromkeys(_MINOR_UNITS_3.split(), 3)}
# The symbol an English-language report writes before an amount (Unicode CLDR, locale "en");
# every other currency is written with its code ("CHF 1,234.56"), as CLDR does. CNY is "CN¥"
# there so that it is not read as yen.
SYMBOLS: dict[str, str] = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "CN¥",
                           "INR": "₹", "KRW": "₩"}
# The most units of any currency in MINOR_UNITS per US dollar, with room: the Iranian rial's
# open-market rate passed 1,000,000 per USD in 2025 (the official one is ~42,000); 10^7 keeps
# a typo of several digits out.
MAX_FX_RATE_PER_USD = 1e7


@dataclass(frozen=True, slots=True, kw_only=True)
class Currency:
    """A display currency: its ISO 4217 code and how many of its units one US dollar buys."""

    code: str = "USD"
    fx_rate_per_usd: float = 1.0

    def __post_init__(self) -> None:
        if self.code not in MINOR_UNITS:
            raise ScenarioError("", "currency", f"must be an ISO 4217 currency code such as "
                                f"EUR, GBP or CNY, got {self.code!r}")
        rate = self.fx_rate_per_usd
        if (isinstance(rate, bool) or not isinstance(rate, int | float)
                or not math.isfinite(rate) or not 0 < rate <= MAX_FX_RATE_PER_USD):
            raise ScenarioError("", "fx_rate_per_usd", f"must be a number in (0, "
                                f"{MAX_FX_RATE_PER_USD:g}] ({self.code} per USD), got {rate!r}")
        if self.code == "USD" and rate != 1:
            raise ScenarioError("", "fx_rate_per_usd", f"USD's rate per USD is 1, got {rate!r}")

    @property
    def is_usd(self) -> bool:
        """True for the default: nothing to convert, nothing to say."""
        return self.code == "USD"

    @property
    def decimals(self) -> int:
        """The minor unit: decimals an amount is written and rounded to."""
        return MINOR_UNITS[self.code]

    @property
    def symbol(self) -> str:
        """``$``, ``€``; a code and a space where English has no symbol of its own."""
        return SYMBOLS.get(self.code, f"{self.code} ")

    @property
    def suffix(self) -> str:
        """The currency in a machine name: ``amount_eur`` for ``amount_usd``."""
        return self.code.lower()

    def amount(self, usd: float) -> float:
        """A USD amount in this currency, rounded to the minor unit half away from zero,
        in exact decimal (``repr`` of a float is its shortest exact decimal form)."""
        if self.is_usd:
            return usd
        product = Decimal(repr(float(usd))) * Decimal(repr(float(self.fx_rate_per_usd)))
        return float(product.quantize(Decimal(1).scaleb(-self.decimals), ROUND_HALF_UP))

    def total(self, amounts_usd: Iterable[float]) -> float:
        """The sum of the amounts each converted on its own (a ledger's total in this
        currency), summed in integer minor units so it carries no float drift."""
        scale: int = 10 ** self.decimals
        units: int = sum(round(self.amount(usd) * scale) for usd in amounts_usd)
        return units / scale

    def rate(self, usd_per_unit: float) -> float:
        """A price per unit (per GPU-hour, per 1M tokens) in this currency; not rounded."""
        return usd_per_unit if self.is_usd else usd_per_unit * self.fx_rate_per_usd

    def from_local(self, amount: float) -> float:
        """An amount or price given in this currency (a price-file row), in USD."""
        return amount if self.is_usd else amount / self.fx_rate_per_usd


USD = Currency()


def currency_of(document: object) -> Currency:
    """The display currency a JSON document (``summary.json``, ``compare --json`` ...) names
    at its top; USD when it names none (every document written before currencies).

    Raises:
        ScenarioError: the document names a currency or a rate that is not valid.
    """
    if isinstance(document, dict) and "currency" in document:
        return Currency(code=str(document["currency"]),
                        fx_rate_per_usd=document.get("fx_rate_per_usd"))  # type: ignore[arg-type]
    return USD


def currency_json(currency: Currency) -> dict[str, object]:
    """The keys a JSON document carries at its top for a non-USD currency (none for USD,
    so documents of USD scenarios read as they always did)."""
    if currency.is_usd:
        return {}
    return {"currency": currency.code, "fx_rate_per_usd": currency.fx_rate_per_usd}
