"""The GPU catalog: names and aliases of the contract, provenance, dense figures, capacities."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu, gpu_catalog, gpu_names
from costsim.domain.gpu import CapacityBasis
from costsim.domain.precision import Dtype
from costsim.errors import CatalogError, InputError
from costsim.units import BYTES_PER_MIB

NAMES = list(csv.DictReader((Path(__file__).parents[1] / "data" / "gpu_names.csv").open()))


def test_catalog_has_exactly_the_contract_names() -> None:
    """One row per canonical GPU of DESIGN.md §5, no more, no fewer."""
    assert sorted(gpu_names()) == sorted(row["canonical"] for row in NAMES)


@pytest.mark.parametrize("row", NAMES, ids=lambda row: row["canonical"])
def test_every_alias_resolves_to_its_canonical_name(row: dict[str, str]) -> None:
    """Aliases resolve case-insensitively, ignoring spaces, '-' and '_'."""
    for alias in filter(None, row["aliases"].split(";")):
        assert get_gpu(alias).name == row["canonical"]
        assert get_gpu(alias.lower().replace("-", " ")).name == row["canonical"]
    assert get_gpu(row["canonical"]).name == row["canonical"]


def test_every_row_has_a_source_and_a_date() -> None:
    """Facts carry provenance (DESIGN.md §10)."""
    for spec in gpu_catalog():
        assert spec.source.strip(), spec.name
        assert len(spec.source_date) == 10, spec.name
        assert spec.source_date[4] == "-", spec.name


def test_compute_figures_are_dense_not_sparse() -> None:
    """The 2:4-sparse headline is twice the dense figure; the catalog holds dense."""
    assert get_gpu("H100").bf16_tflops == 989
    assert get_gpu("A100-80GB").bf16_tflops == 312
    assert get_gpu("B200").fp8_tflops == 4500
    assert get_gpu("L40S").bf16_tflops == 362


def test_nvlink_is_per_direction() -> None:
    """NVLink 3 is 600 GB/s bidirectional = 300 per direction; PCIe cards have none."""
    assert get_gpu("A100").nvlink_gb_per_s_per_direction == 300
    assert get_gpu("H100").nvlink_gb_per_s_per_direction == 450
    assert not get_gpu("L4").has_nvlink


def test_capacity_uses_driver_figures_where_documented() -> None:
    """nvidia-smi memory.total where a source reports it, else nominal GiB, labelled."""
    h100 = get_gpu("H100")
    assert h100.capacity_bytes == 81559 * BYTES_PER_MIB
    assert h100.capacity_basis is CapacityBasis.DRIVER
    assert get_gpu("V100").capacity_bytes == 16160 * BYTES_PER_MIB
    assert get_gpu("MI300X").capacity_basis is CapacityBasis.NOMINAL
    assert get_gpu("MI300X").capacity_bytes == 192 * 2**30


def test_bf16_support_and_default_precision() -> None:
    """V100 and T4 lack bf16, so their default precision is fp16."""
    for name in ("V100", "T4"):
        assert not get_gpu(name).supports(Dtype.BF16)
        assert get_gpu(name).default_precision is Dtype.FP16
    assert get_gpu("A100").default_precision is Dtype.BF16


def test_ordering_of_generations_is_physical() -> None:
    """Newer flagship parts have more bandwidth and compute than older ones."""
    order = ["V100", "A100", "H100", "B200"]
    bandwidths = [get_gpu(n).memory_bandwidth_gb_per_s for n in order]
    assert bandwidths == sorted(bandwidths)
    assert get_gpu("H200").capacity_bytes > get_gpu("H100").capacity_bytes


def test_unknown_gpu_suggests_close_names() -> None:
    """A typo gets 'did you mean'."""
    with pytest.raises(CatalogError, match="did you mean 'H100"):
        get_gpu("H10O")


@pytest.mark.parametrize(("name", "canonical"), [
    ("NVIDIA H100 80GB HBM3", "H100"),  # 80 GB of HBM3: the SXM part (the PCIe card has HBM2e)
    ("H100 80 GB", "H100"),  # an alias of DESIGN.md §5, spaced out
    ("H100-80G", "H100"),  # "80G" is "80GB"
    ("Tesla V100-SXM2-32GB", "V100-32GB"),  # the size picks the row
    ("A100 PCIe 80GB", "A100-80GB-PCIe"),  # tokens in any order after the model
    ("AMD Instinct MI300X OAM", "MI300X"),
])
def test_vendor_spellings_resolve_by_model_and_variant(name: str, canonical: str) -> None:
    assert get_gpu(name).name == canonical


@pytest.mark.parametrize("name", ["H100 94GB", "H100 GDDR6", "L4 SXM", "NVIDIA H200 NVL",
                                  "AMD H100", "NVIDIA MI300X"])
def test_a_variant_the_catalog_row_does_not_have_is_refused(name: str) -> None:
    """Size, form factor and memory type must agree: no silent fallback to a neighbour."""
    with pytest.raises(CatalogError, match="did you mean"):
        get_gpu(name)


def test_a_name_that_fits_two_gpus_is_ambiguous() -> None:
    """'A100 SXM4' could be the 40 or the 80 GB part: the error names both."""
    with pytest.raises(InputError, match="'A100' or 'A100-80GB'"):
        get_gpu("A100 SXM4")


def test_capacity_basis_follows_the_readme_rule() -> None:
    """README 'GPU catalog': 'nominal' = the vendor's label taken as GiB; 'driver' = what
    nvidia-smi reports (seen directly or in a host's report of it). H100-PCIe's 81,559 MiB is
    nvidia-smi's figure, so it is 'driver', not 'nominal'."""
    rows = csv.DictReader((Path(__file__).parents[2] / "costsim" / "data" / "gpus.csv").open())
    basis_source = {row["name"]: row["capacity_source"] for row in rows}
    for spec in gpu_catalog():
        if spec.capacity_basis is CapacityBasis.NOMINAL:
            assert spec.capacity_bytes == spec.memory_label_gb * 2**30, spec.name
        if spec.capacity_basis is CapacityBasis.DRIVER:
            source = basis_source[spec.name]
            assert "nvidia-smi" in source or "host report" in source, spec.name
    assert get_gpu("H100-PCIe").capacity_basis is CapacityBasis.DRIVER


LABELS = [(label, spec.name) for spec in gpu_catalog() for label in (spec.name, *spec.aliases)]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(LABELS), st.sampled_from(["", "NVIDIA ", "nvidia-", "Tesla ", "GeForce "]),
       st.lists(st.sampled_from([" ", "-", "_", "  "]), min_size=8, max_size=8),
       st.booleans())
def test_any_label_with_a_brand_any_case_and_any_separators_resolves_the_same(
        label_and_name: tuple[str, str], brand: str, separators: list[str], upper: bool) -> None:
    """Brand words, case and separators never change which GPU a name means."""
    label, name = label_and_name
    if get_gpu(name).vendor == "amd":
        brand = "AMD Instinct " if brand else ""
    parts = re.split(r"[ _\-]+", label)
    text = parts[0] + "".join(sep + part for sep, part in zip(separators, parts[1:], strict=False))
    pasted = brand + (text.upper() if upper else text.lower())
    assert get_gpu(pasted).name == name
