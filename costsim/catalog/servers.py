"""Owned GPU servers: bills of materials and operating-cost defaults (``costsim/data``).

``server_components.csv`` prices each part with its source, ``servers.csv`` assembles parts
into servers, ``owned_defaults.csv`` holds power, PUE, colocation, maintenance and staff.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from costsim.catalog.resources import csv_bool, read_data_csv
from costsim.domain.owned import BomLine, OwnedServer
from costsim.domain.pricing import Offering, PriceFlag
from costsim.errors import CatalogError, InputError

OWNED_CLOUD = "owned"
OWNED_REGION = "on-prem"


@cache
def _components() -> dict[str, dict[str, str]]:
    return {row["component"]: row for row in read_data_csv("server_components.csv")}


@cache
def _servers() -> dict[str, dict[str, str]]:
    return {row["server"]: row for row in read_data_csv("servers.csv")}


@cache
def owned_defaults() -> dict[str, float]:
    """Operating-cost defaults (PUE, $/kWh, colocation $/kW-month, %/yr) by key."""
    return {row["key"]: float(row["value"]) for row in read_data_csv("owned_defaults.csv")}


def server_names() -> tuple[str, ...]:
    """Names of the shipped server configurations."""
    return tuple(_servers())


def _line(component: str, quantity: float) -> BomLine:
    row = _components()[component]
    return BomLine(component=component, kind=row["kind"], quantity=quantity, unit=row["unit"],
                   unit_price_usd=float(row["unit_price_usd"]), source=row["source"],
                   effective_date=row["effective_date"], estimate=csv_bool(row["estimate"]))


def server_bom(name: str, gpu_count: int | None = None, ram_gib: int | None = None,
               source: str = "--server") -> OwnedServer:
    """The server ``name`` with its BOM, optionally with another GPU count or RAM size.

    GPU, NIC (per GPU) and fabric lines and the GPU power scale with ``gpu_count``.

    Raises:
        CatalogError: unknown server (with "did you mean").
        InputError: a GPU count the platform does not take, or RAM <= 0.
    """
    row = _servers().get(name)
    if row is None:
        raise CatalogError("server", name, server_names(), source=source)
    allowed = tuple(int(n) for n in row["allowed_gpu_counts"].split(";"))
    gpus = int(row["gpu_count"]) if gpu_count is None else gpu_count
    if gpus not in allowed:
        raise InputError(source, f"{name}.gpu_count",
                         f"must be one of {', '.join(map(str, allowed))}, got {gpus}")
    ram = int(row["ram_gib"]) if ram_gib is None else ram_gib
    if ram <= 0:
        raise InputError(source, f"{name}.ram_gib", f"must be > 0, got {ram}")
    components = _components()
    cpu_count = int(row["cpu_count"])
    nics = int(row["nics_fixed"]) + int(row["nics_per_gpu"]) * gpus
    bom = (
        _line(row["gpu_component"], gpus),
        _line(row["cpu_component"], cpu_count),
        _line("ddr5-rdimm", ram),
        _line("nvme-u2", float(row["nvme_tb"])),
        _line(row["nic_component"], nics),
        _line(row["chassis_component"], 1),
        _line(row["fabric_component"], gpus),
    )
    power_w = (gpus * float(components[row["gpu_component"]]["power_w"])
               + cpu_count * float(components[row["cpu_component"]]["power_w"])
               + nics * float(components[row["nic_component"]]["power_w"])
               + float(row["other_power_w"]))
    defaults = owned_defaults()
    return OwnedServer(
        name=name, gpu=row["gpu"], gpu_count=gpus, ram_gib=ram, bom=bom,
        power_kw=power_w / 1000, pue=defaults["pue"], usd_per_kwh=defaults["usd_per_kwh"],
        colocation_usd_per_kw_month=defaults["colocation_usd_per_kw_month"],
        idle_power_fraction=defaults["idle_power_fraction"],
        maintenance_pct_per_year=defaults["maintenance_pct_per_year"],
        staff_pct_per_year=defaults["staff_pct_per_year"],
        lead_time_weeks=float(row["lead_time_weeks"]),
        useful_life_years=float(row["useful_life_years"]),
        residual_fraction=float(row["residual_fraction"]),
        source=row["source"], effective_date=row["effective_date"], note=row["note"],
    )


def with_operating_costs(server: OwnedServer, *, pue: float | None = None,
                         usd_per_kwh: float | None = None,
                         colocation_usd_per_kw_month: float | None = None,
                         maintenance_pct_per_year: float | None = None,
                         staff_pct_per_year: float | None = None,
                         useful_life_years: float | None = None,
                         residual_fraction: float | None = None) -> OwnedServer:
    """A copy of ``server`` with the given operating assumptions replaced."""
    return replace(
        server,
        pue=server.pue if pue is None else pue,
        usd_per_kwh=server.usd_per_kwh if usd_per_kwh is None else usd_per_kwh,
        colocation_usd_per_kw_month=(server.colocation_usd_per_kw_month
                                     if colocation_usd_per_kw_month is None
                                     else colocation_usd_per_kw_month),
        maintenance_pct_per_year=(server.maintenance_pct_per_year
                                  if maintenance_pct_per_year is None
                                  else maintenance_pct_per_year),
        staff_pct_per_year=(server.staff_pct_per_year if staff_pct_per_year is None
                            else staff_pct_per_year),
        useful_life_years=(server.useful_life_years if useful_life_years is None
                           else useful_life_years),
        residual_fraction=(server.residual_fraction if residual_fraction is None
                           else residual_fraction),
    )


def owned_offering(server: OwnedServer) -> Offering:
    """The server as a pseudo-offering of cloud ``owned`` (for price tables and selection)."""
    row = _servers()[server.name]
    return Offering(
        cloud=OWNED_CLOUD, region=OWNED_REGION, instance_type=server.name, gpu=server.gpu,
        provider_gpu_name=server.gpu, gpus_per_instance=server.gpu_count,
        vcpus=int(row["vcpus"]), host_ram_gib=float(server.ram_gib),
        gpu_memory_gib=0.0, on_demand_usd_per_hour=None, spot_usd_per_hour=None,
        marketplace=False, flags=(PriceFlag.OWNED_COST_ESTIMATE,),
        source="costsim/data/servers.csv + server_components.csv + owned_defaults.csv",
        effective_date=server.effective_date,
        date_note="component prices carry their own dates in server_components.csv",
    )


@cache
def owned_offerings() -> tuple[Offering, ...]:
    """Every shipped server, at its default configuration, as an offering."""
    return tuple(owned_offering(server_bom(name)) for name in server_names())
