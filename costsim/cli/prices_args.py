"""``costsim prices`` input: every flag checked into one error line naming flag, rule and value.

Imported by the command's handler only, so that ``costsim --help`` loads no price data.
"""

from __future__ import annotations

import argparse

from costsim.catalog.api_prices import api_rows_of_price_file
from costsim.catalog.price_file import load_price_file_entries
from costsim.catalog.price_tables import billing_rules
from costsim.catalog.prices import PriceBook, price_book
from costsim.catalog.servers import OWNED_CLOUD
from costsim.domain.pricing import PriceOverrides, PurchaseOption
from costsim.errors import CatalogError, InputError


def _percent(flag: str, text: str, value: float) -> float:
    """A negotiated discount: a number in [0, 100); ``text`` is the value as the user typed it."""
    if not 0 <= value < 100:  # also refuses nan and infinities
        raise InputError(flag, "", f"a discount must be a percentage in [0, 100), got {text!r}")
    return value


def _cloud_discounts(items: list[str]) -> tuple[tuple[str, float], ...]:
    """``--cloud-discount CLOUD=PCT`` values, each checked (format, number, range, cloud)."""
    flag = "--cloud-discount"
    # owned servers take no negotiated discount (their costs are edited in the BOM instead)
    clouds = sorted(c for c in billing_rules() if c != OWNED_CLOUD)
    found: dict[str, float] = {}
    for item in items:
        cloud, sep, pct = item.partition("=")
        cloud = cloud.strip().lower()
        if not sep or not cloud or not pct.strip():
            raise InputError(flag, "", f"expected CLOUD=PCT such as aws=12, got {item!r}")
        if cloud == OWNED_CLOUD:
            raise InputError(flag, cloud, "owned servers take no negotiated discount; their "
                                          "costs are edited in costsim/data/servers.csv")
        if cloud not in clouds:
            error = CatalogError("cloud", cloud, clouds, source=flag)
            if error.suggestions:
                raise error
            raise InputError(flag, "", f"unknown cloud '{cloud}' (clouds: {', '.join(clouds)})")
        try:
            value = float(pct)
        except ValueError:
            raise InputError(flag, cloud, f"expected a number after '=', got {pct!r} "
                                          "(CLOUD=PCT such as aws=12)") from None
        if cloud in found:
            raise InputError(flag, cloud, f"given twice ({found[cloud]:g} and {pct.strip()})")
        found[cloud] = _percent(f"{flag} {cloud}", pct.strip(), value)
    return tuple(found.items())


def book_from_args(args: argparse.Namespace) -> PriceBook:
    """The price book with the discounts and the price file the flags give, all checked."""
    flat = _percent("--discount-pct", f"{args.discount_pct:g}", args.discount_pct)
    per_cloud = _cloud_discounts(args.cloud_discount)
    api_rows = api_rows_of_price_file(args.price_file) if args.price_file else None
    custom, quotes = (load_price_file_entries(args.price_file)
                      if args.price_file and api_rows is None else ((), ()))
    return price_book(PriceOverrides(discount_pct=flat, cloud_discount_pct=per_cloud,
                                     custom_offerings=custom, quoted_reservations=quotes,
                                     api_prices=api_rows or ()))


def check_counts(args: argparse.Namespace) -> None:
    """--count and --limit are whole numbers >= 1 (argparse has checked they are integers)."""
    if args.count is not None and args.count < 1:
        raise InputError("--count", "", f"GPUs per instance must be >= 1, got {args.count}")
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit", "", f"the number of rows to show must be >= 1, "
                                        f"got {args.limit}")


def check_option_and_cloud(option: PurchaseOption | None, cloud: str | None,
                            breakeven: bool) -> None:
    """Refuse combinations that can only give an empty answer (owned is its own 'cloud')."""
    owned_cloud = cloud is not None and cloud.strip().lower() == OWNED_CLOUD
    if option is PurchaseOption.API:
        raise InputError("--option", "", "'api' is priced per 1M tokens, not per hour: "
                                          "costsim prices --breakeven --model M shows the "
                                          "per-token APIs beside a GPU (docs/pricing.md)")
    if breakeven and option is PurchaseOption.OWNED:
        raise InputError("--option", "", "--breakeven compares owning with a rental option; "
                                          "got 'owned' (leave --option out for all of them)")
    if breakeven and owned_cloud:
        raise InputError("--cloud", "", "--breakeven compares owned servers with a rental "
                                         f"cloud; got '{OWNED_CLOUD}'")
    if option is PurchaseOption.OWNED and cloud is not None and not owned_cloud:
        raise InputError("--option", "", f"'owned' is sold only by cloud '{OWNED_CLOUD}' "
                                          f"(your own servers), got --cloud {cloud}")
    if option is not None and option is not PurchaseOption.OWNED and owned_cloud:
        raise InputError("--cloud", "", f"cloud '{OWNED_CLOUD}' sells only --option owned, "
                                         f"got --option {option.value}")
