"""The one list of blocking price flags, the flags a scenario may lift, and which estimate a
report names."""

from __future__ import annotations

import pytest

from costsim.domain.pricing import (
    BLOCKING_FLAGS,
    ESTIMATE_FLAGS,
    PriceFlag,
    PriceOverrides,
    PurchaseOption,
    estimate_flag,
)
from costsim.errors import InputError


def test_missing_on_demand_blocks_the_whole_row_as_the_readme_says() -> None:
    # README: flagged rows ("missing on-demand" among them) are never chosen automatically;
    # the code once blocked only on-demand and reserved, so the row's spot price was chosen
    for option in PurchaseOption:
        assert PriceFlag.MISSING_ON_DEMAND.blocks(option)


def test_spot_flags_block_spot_only_and_quality_notes_block_nothing() -> None:
    for flag in (PriceFlag.SPOT_ABOVE_ON_DEMAND, PriceFlag.SPOT_SUSPICIOUSLY_LOW):
        assert flag.blocks(PurchaseOption.SPOT)
        assert not flag.blocks(PurchaseOption.ON_DEMAND)
    for flag in (PriceFlag.REGION_UNSPECIFIED, PriceFlag.RESERVED_BY_CONTRACT,
                 PriceFlag.OWNED_COST_ESTIMATE, PriceFlag.QUOTED_RESERVATION):
        assert not flag.is_blocking
        assert not any(flag.blocks(option) for option in PurchaseOption)


def test_blocking_and_estimate_flags_are_disjoint() -> None:
    assert not set(BLOCKING_FLAGS) & set(ESTIMATE_FLAGS)
    assert {f for f in PriceFlag if f.is_estimate} == set(ESTIMATE_FLAGS)


def test_only_a_blocking_flag_can_be_allowed() -> None:
    assert PriceOverrides(allowed_flags=(PriceFlag.MISSING_ON_DEMAND,)).allowed_flags
    with pytest.raises(InputError, match="region-unspecified' blocks nothing"):
        PriceOverrides(allowed_flags=(PriceFlag.REGION_UNSPECIFIED,))


def test_the_most_specific_estimate_is_named() -> None:
    both = ("region-unspecified", "reserved-discount-estimate", "reserved-by-contract")
    assert estimate_flag(both) is PriceFlag.RESERVED_BY_CONTRACT
    assert estimate_flag(("reserved-discount-estimate",)) is (
        PriceFlag.RESERVED_DISCOUNT_ESTIMATE)
    assert estimate_flag(("spot-hazard-estimate", "region-unspecified")) is None
