"""The shipped price book: pinned rows, provenance, option rules, selection, overrides."""

from __future__ import annotations

import csv
import datetime as dt
import io
import math

import pytest

from costsim.catalog.prices import (
    PriceBook,
    cheapest_offering,
    find_offering,
    price_book,
    rate_usd_per_gpu_hour,
    reservation_terms,
    shipped_offerings,
    spot_hazard,
)
from costsim.catalog.resources import read_data_text
from costsim.domain.pricing import Offering, PriceFlag, PriceOverrides, PurchaseOption, Quote
from costsim.errors import CatalogError, InfeasibleError

OD = PurchaseOption.ON_DEMAND
SPOT = PurchaseOption.SPOT
R1 = PurchaseOption.RESERVED_1Y_NO_UPFRONT

# Every hand-written or built pricing file and the columns holding its provenance.
PROVENANCE_FILES = {
    "price_book.csv": ("source", "effective_date"),
    "price_clouds.csv": ("source", "effective_date"),
    "price_reserved_discounts.csv": ("source", "effective_date"),
    "price_payment_adjustments.csv": ("source", "effective_date"),
    "spot_hazard.csv": ("source", "effective_date"),
    "server_components.csv": ("source", "effective_date"),
    "servers.csv": ("source", "effective_date"),
    "owned_defaults.csv": ("source", "effective_date"),
    "storage_prices.csv": ("source", "effective_date"),
}


@pytest.mark.parametrize("name", sorted(PROVENANCE_FILES))
def test_every_shipped_row_has_a_source_and_a_date(name: str) -> None:
    """Finance traceability: a non-empty source and an ISO date on every row."""
    source_column, date_column = PROVENANCE_FILES[name]
    rows = list(csv.DictReader(io.StringIO(read_data_text(name))))
    assert rows
    for line, row in enumerate(rows, start=2):
        assert row[source_column].strip(), f"{name}:{line} has no source"
        dt.date.fromisoformat(row[date_column])  # raises on a missing or malformed date


def test_pinned_rows() -> None:
    """Known list prices from the raw catalog survive the build unchanged."""
    p5 = find_offering("aws", "us-east-1", "p5.48xlarge")
    assert (p5.gpu, p5.gpus_per_instance, p5.vcpus, p5.host_ram_gib) == ("H100", 8, 192, 2048)
    assert p5.on_demand_usd_per_hour == 55.04
    assert rate_usd_per_gpu_hour(p5, OD) == pytest.approx(6.88)
    assert p5.source == "SkyPilot catalog v9 aws/vms.csv"
    a2 = find_offering("gcp", "us-central1", "a2-highgpu-1g")
    assert (a2.gpu, a2.on_demand_usd_per_hour, a2.flags) == ("A100", 3.67339, ())
    lam = find_offering("lambda", "us-east-1", "gpu_1x_h100_sxm5")
    assert (lam.gpu, lam.on_demand_usd_per_hour) == ("H100", 4.29)


def test_ambiguous_provider_names_resolve_by_instance_type_and_memory() -> None:
    """Lambda H100 PCIe vs SXM5; Vast A100 40 vs 80 GB; Azure NC A100 v4 is PCIe."""
    assert find_offering("lambda", "us-east-1", "gpu_1x_h100_pcie").gpu == "H100-PCIe"
    vast = {o.region: o.gpu for o in shipped_offerings()
            if o.cloud == "vast" and o.instance_type == "1x-A100_SXM4-32-65536"}
    assert vast == {"Czechia, CZ, EU": "A100-80GB", "Georgia, US, NA": "A100"}
    nc = find_offering("azure", "eastus", "Standard_NC24ads_A100_v4")
    assert nc.gpu == "A100-80GB-PCIe"
    assert nc.provider_gpu_name == "A100-80GB"


def test_fractional_and_unknown_gpus_are_left_out() -> None:
    """No fractional instances; no provider GPU outside the GPU catalog."""
    assert all(o.gpus_per_instance >= 1 for o in shipped_offerings())
    assert not any(o.provider_gpu_name in {"P100", "M60", "A30"} for o in shipped_offerings())
    excluded = read_data_text("price_book_excluded.csv")
    assert "Standard_NV12ads_A10_v5" in excluded
    assert "fractional GPU instance" in excluded


def test_data_quality_flags() -> None:
    """Spot above on-demand, Mithril placeholders, GCP low regions, p5e without on-demand."""
    by_key = {o.key: o for o in shipped_offerings()}
    gcp_low = by_key["gcp us-central1 a3-highgpu-8g"]
    assert {PriceFlag.SPOT_ABOVE_ON_DEMAND, PriceFlag.ANOMALOUS_LOW_REGION} <= set(gcp_low.flags)
    assert PriceFlag.ANOMALOUS_LOW_REGION not in by_key["gcp us-east4 a3-highgpu-8g"].flags
    assert all(PriceFlag.PLACEHOLDER_PRICE in o.flags for o in by_key.values()
               if o.cloud == "mithril")
    p5e = [o for o in by_key.values() if o.instance_type == "p5e.48xlarge"]
    assert p5e
    assert all(PriceFlag.MISSING_ON_DEMAND in o.flags for o in p5e)


def test_flagged_offerings_are_never_chosen_as_cheapest() -> None:
    """GCP's suspicious $4.20/GPU-h H100 regions are passed over, and say so."""
    chosen = cheapest_offering("H100", 8, OD, cloud="gcp")
    assert PriceFlag.ANOMALOUS_LOW_REGION not in chosen.offering.flags
    assert chosen.passed_over
    assert all(q.blocked for q in chosen.passed_over)
    assert all(q.price_usd_per_hour <= chosen.quote.price_usd_per_hour * chosen.instances
               for q in chosen.passed_over)
    with pytest.raises(InfeasibleError, match="only flagged"):
        cheapest_offering("H100", 8, OD, cloud="mithril")


def test_selection_skips_marketplaces_unless_named() -> None:
    """DESIGN.md §8: vast/hyperbolic/mithril only when the plan names them."""
    anywhere = cheapest_offering("H100", 1, OD)
    assert not anywhere.offering.marketplace
    named = cheapest_offering("H100", 1, OD, cloud="hyperbolic")
    assert named.offering.cloud == "hyperbolic"
    assert named.quote.price_usd_per_gpu_hour < anywhere.quote.price_usd_per_gpu_hour


def test_selection_rounds_up_to_whole_instances_and_ranks_by_total() -> None:
    """12 GPUs on 8-GPU instances need two instances; the ranking uses their total price."""
    chosen = cheapest_offering("H100", 12, OD, cloud="aws", region="us-east-1",
                               min_gpus_per_instance=8)
    assert chosen.offering.instance_type == "p5.48xlarge"
    assert chosen.instances == 2
    assert chosen.total_usd_per_hour == pytest.approx(110.08)


def test_unknown_names_suggest_close_ones() -> None:
    """GPU, cloud, region typos get "did you mean"."""
    with pytest.raises(CatalogError, match="did you mean 'H100'"):
        cheapest_offering("H10", 1, OD)
    with pytest.raises(CatalogError, match="did you mean 'aws'"):
        cheapest_offering("H100", 1, OD, cloud="awz")
    with pytest.raises(CatalogError, match="did you mean 'us-east-1'"):
        cheapest_offering("H100", 1, OD, cloud="aws", region="us-east1")


def test_on_demand_billing_minimum_per_cloud() -> None:
    """A 10-second p5 run on AWS is billed 60 s; Lambda bills whole minutes."""
    book = price_book()
    p5 = find_offering("aws", "us-east-1", "p5.48xlarge")
    assert book.on_demand_cost_usd(p5, 10) == round(55.04 / 60, 2)
    assert book.on_demand_cost_usd(p5, 3600) == 55.04
    lam = find_offering("lambda", "us-east-1", "gpu_1x_h100_sxm5")
    assert book.on_demand_cost_usd(lam, 61) == round(4.29 * 2 / 60, 2)


def test_reserved_terms_follow_the_discount_tables() -> None:
    """p4d 1y: 41 % off (reference §4.2); all-upfront pays the whole term at once."""
    p4d = find_offering("aws", "us-east-1", "p4d.24xlarge")
    terms = reservation_terms(p4d, R1)
    assert terms is not None
    assert not terms.estimate
    assert terms.discount_fraction == pytest.approx(0.41)
    assert terms.effective_usd_per_hour == pytest.approx(p4d.on_demand_usd_per_hour * 0.59)
    assert terms.upfront_usd == 0
    assert terms.break_even_utilization == pytest.approx(0.59)
    assert terms.break_even_months == pytest.approx(12 * 0.59, rel=1e-6)
    all_up = reservation_terms(p4d, PurchaseOption.RESERVED_1Y_ALL_UPFRONT)
    assert all_up is not None
    assert all_up.recurring_usd_per_hour == pytest.approx(0, abs=1e-5)  # cents rounding
    assert all_up.upfront_usd == pytest.approx(all_up.total_obligation_usd, abs=0.01)
    assert all_up.effective_usd_per_hour < terms.effective_usd_per_hour


def _sold(book: PriceBook, offering: Offering, option: PurchaseOption) -> Quote:
    """The quote of ``option``, which the test expects to be sold."""
    quote = book.quote(offering, option)
    assert quote is not None, (offering.key, option)
    return quote


def test_reserved_fallback_is_marked_as_estimate_and_unsold_options_are_absent() -> None:
    """p5 has no published discount (fallback, flagged); GCP has no upfront CUDs; Vast none."""
    book = price_book()
    quote = _sold(book, find_offering("aws", "us-east-1", "p5.48xlarge"), R1)
    assert PriceFlag.RESERVED_DISCOUNT_ESTIMATE in quote.flags
    a2 = find_offering("gcp", "us-central1", "a2-highgpu-1g")
    assert book.quote(a2, PurchaseOption.RESERVED_1Y_ALL_UPFRONT) is None
    assert book.quote(a2, R1) is not None
    vast = next(o for o in shipped_offerings() if o.cloud == "vast")
    assert book.quote(vast, R1) is None


def test_spot_expected_cost_grows_with_the_hazard() -> None:
    """Expected spot charge = rate × expected hours under λ of the GPU class."""
    book = price_book()
    p5 = find_offering("aws", "us-east-1", "p5.48xlarge")
    hazard = spot_hazard("H100")
    assert hazard.hazard_per_hour == pytest.approx(-math.log(1 - 0.25) / 730)
    no_risk = book.spot_expected_cost_usd(p5, 100, hazard_per_hour=0.0)
    assert no_risk == round(16.9508 * 100, 2)
    default = book.spot_expected_cost_usd(p5, 100)
    lam = hazard.hazard_per_hour
    assert default == round(16.9508 * math.expm1(lam * 100) / lam, 2)
    assert default > no_risk
    assert book.billing_rule("aws").spot_notice_s == 120
    assert book.billing_rule("gcp").spot_notice_s == 30


def test_flat_and_per_cloud_discounts() -> None:
    """A negotiated discount scales on-demand and reservation rates; per-cloud wins."""
    book = PriceBook(PriceOverrides(discount_pct=10, cloud_discount_pct=(("aws", 20),)))
    p5 = find_offering("aws", "us-east-1", "p5.48xlarge")
    assert book.rate_usd_per_gpu_hour(p5, OD) == pytest.approx(6.88 * 0.8)
    a2 = find_offering("gcp", "us-central1", "a2-highgpu-1g")
    assert book.rate_usd_per_gpu_hour(a2, OD) == pytest.approx(3.67339 * 0.9)
    shipped_r1 = price_book().rate_usd_per_hour(a2, R1)
    assert shipped_r1 is not None
    assert book.rate_usd_per_hour(a2, R1) == pytest.approx(shipped_r1 * 0.9)
    with pytest.raises(CatalogError, match="did you mean 'azure'"):
        PriceBook(PriceOverrides(cloud_discount_pct=(("azur", 5),)))


def _custom_h100_box(cloud: str, region: str, instance_type: str, on_demand_usd_per_hour: float,
                     source: str) -> Offering:
    """An 8×H100 user-override row, as a custom price file would give it."""
    return Offering(cloud=cloud, region=region, instance_type=instance_type, gpu="H100",
                    provider_gpu_name="H100", gpus_per_instance=8, vcpus=192, host_ram_gib=2048,
                    gpu_memory_gib=80, on_demand_usd_per_hour=on_demand_usd_per_hour,
                    spot_usd_per_hour=None, marketplace=False, flags=(PriceFlag.USER_OVERRIDE,),
                    source=source, effective_date="2026-06-01")


def test_custom_rows_replace_or_add_offerings() -> None:
    """A custom row with a shipped key replaces it; a new key is added and can be chosen."""
    replaced = _custom_h100_box("aws", "us-east-1", "p5.48xlarge", 40.0, "our EDP quote")
    added = _custom_h100_box("coreweave", "us-east-04", "h100-8x", 8.0, "contract")
    book = PriceBook(PriceOverrides(discount_pct=50, custom_offerings=(replaced, added)))
    p5 = find_offering("aws", "us-east-1", "p5.48xlarge", book=book)
    assert p5.source == "our EDP quote"
    assert book.rate_usd_per_hour(p5, OD) == 40.0  # custom rows get no extra discount
    plain = PriceBook(PriceOverrides(custom_offerings=(added,)))
    assert cheapest_offering("H100", 8, OD, book=plain).offering.cloud == "coreweave"


def test_every_catalog_gpu_has_a_spot_hazard_class() -> None:
    """No GPU silently falls back to another class's interruption rate."""
    from costsim.catalog.gpus import gpu_names
    from costsim.catalog.resources import read_data_csv

    listed = {gpu for row in read_data_csv("spot_hazard.csv") for gpu in row["gpus"].split(";")}
    assert set(gpu_names()) <= listed


def test_contract_only_reservations_are_flagged_as_estimates() -> None:
    """Tier-2 clouds publish no reserved prices: their reserved quotes say so; AWS's do not."""
    book = price_book()
    hyperstack = find_offering("hyperstack", "CANADA-1", "n3-H100-SXM5x8")
    quote = _sold(book, hyperstack, R1)
    assert PriceFlag.RESERVED_BY_CONTRACT in quote.flags
    assert PriceFlag.RESERVED_DISCOUNT_ESTIMATE in quote.flags
    assert quote.estimate
    assert not quote.blocked  # shown and selectable, but never unmarked
    assert not _sold(book, hyperstack, OD).estimate
    p4d = _sold(book, find_offering("aws", "us-east-1", "p4d.24xlarge"), R1)
    assert PriceFlag.RESERVED_BY_CONTRACT not in p4d.flags
    assert not p4d.estimate  # a published discount
    custom = _custom_h100_box("coreweave", "us-east-04", "h100-8x", 8.0, "quote")
    custom_quote = _sold(PriceBook(PriceOverrides(custom_offerings=(custom,))), custom, R1)
    assert PriceFlag.RESERVED_BY_CONTRACT in custom_quote.flags


def test_region_less_rows_are_kept_flagged_and_explained() -> None:
    """Seeweb rows without a region: real prices, selectable, never without the flag and note."""
    unspecified = [o for o in shipped_offerings() if o.region == "unspecified"]
    assert {o.cloud for o in unspecified} == {"seeweb"}
    assert len(unspecified) == 10
    for offering in unspecified:
        assert PriceFlag.REGION_UNSPECIFIED in offering.flags
        assert "it-fr2" in offering.note
        assert not PriceFlag.REGION_UNSPECIFIED.blocks(OD)
    choice = cheapest_offering("H100", 1, OD)
    assert choice.offering.key == "seeweb unspecified ECS1GPU8"
    assert PriceFlag.REGION_UNSPECIFIED in choice.quote.flags
    named = [o for o in shipped_offerings() if o.cloud == "seeweb" and o.region != "unspecified"]
    assert named
    assert all(not o.note for o in named)


def test_a_multi_gpu_job_is_priced_on_whole_multi_gpu_instances() -> None:
    """64 H100s for one job come in 8-GPU instances; one GPU may come in a 1-GPU instance."""
    job = price_book().cheapest_offering_for_job("H100", 64, OD)
    assert job.offering.gpus_per_instance == 8
    assert job.instances == 8
    loose = price_book().cheapest_offering("H100", 64, OD)
    assert loose.total_usd_per_hour <= job.total_usd_per_hour
    single = price_book().cheapest_offering_for_job("H100", 1, OD)
    assert single.quote.price_usd_per_gpu_hour <= job.quote.price_usd_per_gpu_hour


def test_job_rule_relaxes_where_no_large_instance_exists() -> None:
    """Where a cloud sells no 8-GPU instance of a GPU, the job still gets a price."""
    lam = price_book().cheapest_offering_for_job("A10", 16, OD, cloud="lambda")
    assert lam.offering.gpus_per_instance < 8
    assert lam.instances * lam.offering.gpus_per_instance >= 16


def test_a_job_needing_host_ram_skips_instances_without_it() -> None:
    """A 1-GPU job needing 18 GiB of host RAM cannot use a 16 GiB A10G instance."""
    book = price_book()
    cheapest = book.cheapest_offering("A10G", 1, OD, cloud="aws")
    assert cheapest.offering.host_ram_gib < 18
    roomy = book.cheapest_offering_for_job("A10G", 1, OD, cloud="aws",
                                           min_host_ram_gib_per_gpu=18)
    assert roomy.offering.host_ram_gib >= 18
    assert roomy.quote.price_usd_per_hour > cheapest.quote.price_usd_per_hour


def test_a_blocked_row_is_chosen_only_when_the_scenario_allows_its_flag() -> None:
    # Verda's 8×B200 sells spot without an on-demand price ($13.69/h, the cheapest 8-GPU B200
    # spot): README says such rows are never chosen automatically, and they were
    plain = PriceBook().cheapest_offering_for_job("B200", 8, PurchaseOption.SPOT)
    assert plain.offering.key != "verda FIN-03 8B200.240V"
    assert "verda FIN-03 8B200.240V" in [q.offering.key for q in plain.passed_over]
    allowed = PriceBook(PriceOverrides(allowed_flags=(PriceFlag.MISSING_ON_DEMAND,)))
    chosen = allowed.cheapest_offering_for_job("B200", 8, PurchaseOption.SPOT)
    assert chosen.offering.key == "verda FIN-03 8B200.240V"
    assert chosen.total_usd_per_hour == pytest.approx(13.69)
    assert PriceFlag.MISSING_ON_DEMAND in chosen.quote.flags
    # lifting another flag does not lift this one
    other = PriceBook(PriceOverrides(allowed_flags=(PriceFlag.PLACEHOLDER_PRICE,)))
    assert other.cheapest_offering_for_job("B200", 8, PurchaseOption.SPOT).offering.key == (
        plain.offering.key)


def test_offering_queries_are_memoized_and_answer_as_a_fresh_book() -> None:
    # issue 20: the optimizer asks the same queries hundreds of times per search
    book, fresh = PriceBook(), PriceBook()
    first = book.offerings(gpu="H100", option=SPOT, include_marketplaces=False)
    assert book.offerings(gpu="H100", option=SPOT, include_marketplaces=False) is first
    assert first == fresh.offerings(gpu="H100", option=SPOT, include_marketplaces=False)
    assert first  # H100 spot is sold
    assert book.offerings(gpu="H100", option=OD, include_marketplaces=False) == fresh.offerings(
        gpu="H100", option=OD, include_marketplaces=False)
    # another filter is another query; a refused name raises every time (never memoized)
    assert book.offerings(gpu="H100", cloud="aws") == fresh.offerings(gpu="H100", cloud="aws")
    for _ in range(2):
        with pytest.raises(CatalogError):
            book.offerings(gpu="H100", cloud="not-a-cloud")


def test_one_book_per_distinct_overrides() -> None:
    # issue 20: every plan the simulator prepares asks price_book(the scenario's overrides)
    ten = PriceOverrides(cloud_discount_pct=(("aws", 10.0),))
    book = price_book(ten)
    assert price_book(PriceOverrides(cloud_discount_pct=(("aws", 10.0),))) is book
    assert price_book(PriceOverrides(cloud_discount_pct=(("aws", 20.0),))) is not book
    assert price_book() is price_book(PriceOverrides())
    fresh = PriceBook(ten)
    assert book.offerings(gpu="H100", cloud="aws", option=OD) == fresh.offerings(
        gpu="H100", cloud="aws", option=OD)
    for _ in range(2):  # an override the book refuses raises every time
        with pytest.raises(CatalogError):
            price_book(PriceOverrides(cloud_discount_pct=(("no-such-cloud", 5.0),)))
