"""The GPU catalog (``costsim/data/gpus.csv``) and the one name lookup: canonical names, aliases
and the vendors' own spellings (read by :mod:`costsim.catalog.gpu_names`)."""

from __future__ import annotations

from functools import cache

from costsim.catalog.gpu_names import GpuNameParts, parse_gpu_name
from costsim.catalog.resources import csv_optional_float, read_data_csv
from costsim.domain.gpu import CapacityBasis, FormFactor, GpuSpec
from costsim.errors import CatalogError, InputError, suggest
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
def _memory_types() -> frozenset[str]:
    return frozenset(spec.memory_type.lower() for spec in gpu_catalog())


def _parts(name: str) -> GpuNameParts:
    return parse_gpu_name(name, _memory_types())


@cache
def _by_key() -> dict[str, GpuSpec]:
    """Every canonical name and alias, brand words dropped (``Tesla T4`` is ``T4``)."""
    index: dict[str, GpuSpec] = {}
    for spec in gpu_catalog():
        for label in (spec.name, *spec.aliases):
            key = _parts(label).key
            if key in index and index[key] is not spec:
                raise AssertionError(f"GPU alias {label!r} names two GPUs")
            index[key] = spec
    return index


@cache
def _by_model() -> dict[str, tuple[GpuSpec, ...]]:
    """The GPUs each model key can mean (``a100``: the 40 and 80 GB, SXM and PCIe rows)."""
    index: dict[str, list[GpuSpec]] = {}
    for spec in gpu_catalog():
        for label in (spec.name, *spec.aliases):
            specs = index.setdefault(_parts(label).model, [])
            if spec not in specs:
                specs.append(spec)
    return {model: tuple(specs) for model, specs in index.items()}


def _fits(spec: GpuSpec, parts: GpuNameParts) -> bool:
    """Whether the variant tokens of a name (size, form factor, memory type) agree with ``spec``."""
    return ((parts.memory_label_gb is None or parts.memory_label_gb == spec.memory_label_gb)
            and (parts.form_factor is None or parts.form_factor == spec.form_factor.value)
            and (parts.memory_type is None or parts.memory_type == spec.memory_type.lower()))


def _matches(name: str) -> tuple[GpuSpec, ...]:
    """The GPUs ``name`` can mean: its alias if it is one, else those of its model and variant.

    An alias wins, so that the documented aliases keep their meaning (``H100-80GB`` is the
    SXM part although the PCIe card has 80 GB too); otherwise every variant token the name
    carries must agree with the catalog row (``NVIDIA H100 80GB HBM3``: an H100 with 80 GB of
    HBM3 is the SXM part; ``Tesla V100-SXM2-32GB``: ``V100-32GB``).
    """
    parts = _parts(name)
    exact = _by_key().get(parts.key)
    found = (exact,) if exact is not None else tuple(
        spec for spec in _by_model().get(parts.model, ()) if _fits(spec, parts))
    return tuple(spec for spec in found if parts.vendor in (None, spec.vendor))


def gpu_names() -> tuple[str, ...]:
    """Canonical names of every GPU in the catalog."""
    return tuple(spec.name for spec in gpu_catalog())


def find_gpu(name: str) -> GpuSpec | None:
    """Return the one GPU ``name`` means (canonical name, alias or vendor spelling), or None."""
    matches = _matches(name)
    return matches[0] if len(matches) == 1 else None


def get_gpu(name: str, source: str = "--gpu") -> GpuSpec:
    """Return the GPU named ``name``: a canonical name, an alias, or the name the vendor's tools
    print (``NVIDIA H100 80GB HBM3``, ``AMD Instinct MI300X``); case, spaces, '-', '_' ignored.

    Raises:
        CatalogError: unknown GPU; the message suggests close names.
        InputError: a name that fits several GPUs (``A100 SXM4``: 40 or 80 GB); it names them.
    """
    matches = _matches(name)
    if len(matches) == 1:
        return matches[0]
    if matches:
        options = " or ".join(f"'{spec.name}'" for spec in matches)
        raise InputError(source, "", f"GPU '{name}' fits more than one GPU (the name gives no "
                                     f"memory size or form factor that tells them apart); "
                                     f"did you mean {options}?")
    error = CatalogError("GPU", name, (), source=source)
    # compared without brand words, so that "NVIDIA H200 NVL" is near H200, not "NVIDIA L4"
    named = {key: spec.name for key, spec in _by_key().items()}
    error.suggestions = list(dict.fromkeys(named[key] for key in suggest(_parts(name).key, named)))
    raise error


def canonical_gpu_name(name: str, source: str = "--gpu") -> str:
    """Return the canonical costsim name for a GPU name or alias (see :func:`get_gpu`)."""
    return get_gpu(name, source).name
