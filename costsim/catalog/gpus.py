"""The GPU catalog (``costsim/data/gpus.csv``) and name lookups with aliases."""

from __future__ import annotations

from functools import cache

from costsim.catalog.resources import csv_optional_float, read_data_csv
from costsim.domain.gpu import CapacityBasis, FormFactor, GpuSpec
from costsim.errors import CatalogError, name_key
from costsim.units import BYTES_PER_MIB


def _spec_from_row(row: dict[str, str]) -> GpuSpec:
    return GpuSpec(
        name=row["name"],
        aliases=tuple(alias for alias in row["aliases"].split(";") if alias),
        vendor=row["vendor"],
        generation=row["generation"],
        capacity_bytes=int(row["capacity_mib"]) * BYTES_PER_MIB,
        capacity_basis=CapacityBasis(row["capacity_basis"]),
        memory_label_gb=int(row["memory_label_gb"]),
        memory_type=row["memory_type"],
        memory_bandwidth_gb_per_s=float(row["memory_bandwidth_gb_per_s"]),
        fp32_tflops=float(row["fp32_tflops"]),
        tf32_tflops=csv_optional_float(row["tf32_tflops"]),
        bf16_tflops=csv_optional_float(row["bf16_tflops"]),
        fp16_tflops=float(row["fp16_tflops"]),
        fp8_tflops=csv_optional_float(row["fp8_tflops"]),
        int8_tops=csv_optional_float(row["int8_tops"]),
        tdp_w=float(row["tdp_w"]),
        nvlink_gb_per_s_per_direction=csv_optional_float(row["nvlink_gb_per_s_per_direction"]),
        pcie_generation=int(row["pcie_generation"]),
        form_factor=FormFactor(row["form_factor"]),
        launch_year=int(row["launch_year"]),
        source=row["source"],
        source_date=row["source_date"],
        notes=row["notes"],
    )


@cache
def gpu_catalog() -> tuple[GpuSpec, ...]:
    """Every GPU costsim knows, in catalog order."""
    return tuple(_spec_from_row(row) for row in read_data_csv("gpus.csv"))


@cache
def _by_key() -> dict[str, GpuSpec]:
    index: dict[str, GpuSpec] = {}
    for spec in gpu_catalog():
        for label in (spec.name, *spec.aliases):
            key = name_key(label)
            if key in index and index[key] is not spec:
                raise AssertionError(f"GPU alias {label!r} names two GPUs")
            index[key] = spec
    return index


def gpu_names() -> tuple[str, ...]:
    """Canonical names of every GPU in the catalog."""
    return tuple(spec.name for spec in gpu_catalog())


def find_gpu(name: str) -> GpuSpec | None:
    """Return the GPU whose canonical name or alias is ``name``, or None."""
    return _by_key().get(name_key(name))


def get_gpu(name: str, source: str = "--gpu") -> GpuSpec:
    """Return the GPU named ``name`` (canonical name or alias; case, spaces, '-', '_' ignored).

    Raises:
        CatalogError: unknown GPU; the message suggests close names.
    """
    spec = find_gpu(name)
    if spec is None:
        known = [label for s in gpu_catalog() for label in (s.name, *s.aliases)]
        raise CatalogError("GPU", name, known, source=source)
    return spec


def canonical_gpu_name(name: str, source: str = "--gpu") -> str:
    """Return the canonical costsim name for a GPU name or alias (see :func:`get_gpu`)."""
    return get_gpu(name, source).name
