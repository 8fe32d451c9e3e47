"""Owned GPU servers: bills of materials and operating-cost defaults (``costsim/data``).

``server_components.csv`` prices each part with its source, ``servers.csv`` assembles parts
into servers, ``owned_defaults.csv`` holds power, PUE, colocation, maintenance and staff.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

from costsim.catalog.resources import csv_bool, read_data_csv
from costsim.domain.host_parts import NodeParts
from costsim.domain.owned import BomLine, OwnedServer, ServerDeclaration
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


def _default_nics(row: dict[str, str], gpus: int) -> tuple[int, int]:
    """(NICs carrying GPU traffic, other NICs) of a server row at ``gpus`` GPUs."""
    per_gpu, fixed = int(row["nics_per_gpu"]), int(row["nics_fixed"])
    if per_gpu:
        return per_gpu * gpus, fixed
    return fixed, 0


def default_nic_gbps(name: str, gpu_count: int | None = None) -> float:
    """The compute network of one server as shipped: its GPU-traffic NICs × their Gb/s."""
    row = _servers()[name]
    gpus = int(row["gpu_count"]) if gpu_count is None else gpu_count
    capacity = float(_components()[row["nic_component"]]["capacity"])
    return _default_nics(row, gpus)[0] * capacity


def default_parts(name: str, gpu_count: int | None = None) -> NodeParts:
    """The non-GPU parts of server ``name`` as shipped (its BOM's RAM, NVMe, cores, NICs)."""
    row = _servers()[name]
    cores = int(row["cpu_count"]) * int(_components()[row["cpu_component"]]["capacity"])
    return NodeParts(cpu_cores=cores, ram_gib=int(row["ram_gib"]),
                     nvme_tb=float(row["nvme_tb"]), nic_gbps=default_nic_gbps(name, gpu_count))


def parts_of(server: OwnedServer) -> NodeParts:
    """The non-GPU parts a priced server holds: a declared server's own, else read back from
    its BOM lines."""
    if server.parts is not None:
        return server.parts
    row = _servers()[server.name]
    components = _components()
    by_kind = {line.kind: line for line in server.bom}
    cores = round(by_kind["cpu"].quantity * int(components[row["cpu_component"]]["capacity"]))
    _, other = _default_nics(row, server.gpu_count)
    nic = (by_kind["nic"].quantity - other) * float(components[row["nic_component"]]["capacity"])
    return NodeParts(cpu_cores=cores, ram_gib=server.ram_gib, nvme_tb=by_kind["nvme"].quantity,
                     nic_gbps=nic)


def server_row(name: str) -> dict[str, str]:
    """The servers.csv row of ``name`` (a copy)."""
    return dict(_servers()[name])


def component_row(component: str) -> dict[str, str]:
    """The server_components.csv row of ``component`` (a copy)."""
    return dict(_components()[component])


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
               source: str = "--server", *, nvme_tb: float | None = None,
               cpu_cores: int | None = None, nic_gbps: float | None = None) -> OwnedServer:
    """The server ``name`` with its BOM, optionally with another GPU count or other parts.

    GPU, NIC (per GPU) and fabric lines and the GPU power scale with ``gpu_count``. The parts
    of a scenario's ``owned`` entry (scenarios/README.md) replace the BOM's:

    * ``ram_gib``: GiB of DDR5 (priced per GiB);
    * ``nvme_tb``: TB of NVMe (priced per TB);
    * ``cpu_cores``: cores of the server's CPU model, priced per core at the component's
      list price ÷ its ``capacity`` cores (a linear stand-in for the SKU ladder of one CPU
      family, whose list prices run ~$100–200 per core); at most the board's sockets × cores;
    * ``nic_gbps``: the compute network of one node. Its NICs are the per-GPU NICs (HGX) or,
      on servers without them, all NICs; ``nic_gbps`` buys ⌈nic_gbps ÷ capacity⌉ of them
      (HGX keeps its storage/management NICs), and the fabric's per-GPU share scales with the
      compute NICs bought (switch ports and optics go with NIC ports).

    Raises:
        CatalogError: unknown server (with "did you mean").
        InputError: a GPU count the platform does not take, a part <= 0, or more cores than
            the board's sockets hold.
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
    for key, value in (("ram_gib", ram), ("nvme_tb", nvme_tb), ("cpu_cores", cpu_cores),
                       ("nic_gbps", nic_gbps)):
        if value is not None and value <= 0:
            raise InputError(source, f"{name}.{key}", f"must be > 0, got {value}")
    components = _components()
    sockets = int(row["cpu_count"])
    cores_per_cpu = int(components[row["cpu_component"]]["capacity"])
    if cpu_cores is not None and cpu_cores > sockets * cores_per_cpu:
        raise InputError(source, f"{name}.cpu_cores", f"must be at most {sockets} sockets × "
                         f"{cores_per_cpu} cores = {sockets * cores_per_cpu}, got {cpu_cores}")
    cpus = sockets if cpu_cores is None else cpu_cores / cores_per_cpu
    compute_nics, other_nics = _default_nics(row, gpus)
    if nic_gbps is not None:
        default_compute = compute_nics
        compute_nics = math.ceil(nic_gbps / float(components[row["nic_component"]]["capacity"])
                                 - 1e-9)
        fabric = gpus * compute_nics / default_compute if default_compute else float(gpus)
    else:
        fabric = float(gpus)
    nics = compute_nics + other_nics
    bom = (
        _line(row["gpu_component"], gpus),
        _line(row["cpu_component"], cpus),
        _line("ddr5-rdimm", ram),
        _line("nvme-u2", float(row["nvme_tb"]) if nvme_tb is None else nvme_tb),
        _line(row["nic_component"], nics),
        _line(row["chassis_component"], 1),
        _line(row["fabric_component"], fabric),
    )
    cpu_count = cpus
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


def declared_server(declared: ServerDeclaration) -> OwnedServer:
    """A scenario's declared server as the same :class:`OwnedServer` shipped servers build.

    Each BOM line is one lot (quantity 1) at its amount; operating assumptions the declaration
    leaves out take the shipped defaults (``owned_defaults.csv``).
    """
    defaults = owned_defaults()

    def pick(value: float | None, key: str) -> float:
        return defaults[key] if value is None else value

    bom = tuple(BomLine(component=line.item, kind=line.kind, quantity=1.0, unit="lot",
                        unit_price_usd=line.amount_usd, source=line.source,
                        effective_date=line.effective_date, estimate=line.estimate)
                for line in declared.bom)
    dates = sorted(line.effective_date for line in declared.bom if line.effective_date)
    return OwnedServer(
        name=declared.name, gpu=declared.gpu, gpu_count=declared.gpu_count,
        ram_gib=declared.parts.ram_gib, bom=bom, power_kw=declared.power_kw,
        pue=pick(declared.pue, "pue"), usd_per_kwh=pick(declared.usd_per_kwh, "usd_per_kwh"),
        colocation_usd_per_kw_month=pick(declared.colocation_usd_per_kw_month,
                                         "colocation_usd_per_kw_month"),
        idle_power_fraction=defaults["idle_power_fraction"],
        maintenance_pct_per_year=pick(declared.maintenance_pct_per_year,
                                      "maintenance_pct_per_year"),
        staff_pct_per_year=pick(declared.staff_pct_per_year, "staff_pct_per_year"),
        lead_time_weeks=declared.lead_time_weeks, useful_life_years=declared.life_years,
        residual_fraction=declared.residual_pct / 100,
        source=declared.source or "scenario servers:",
        effective_date=declared.effective_date or (dates[-1] if dates else ""),
        note="declared in the scenario", parts=declared.parts,
        interconnect=declared.interconnect,
    )


def scenario_server(name: str, declared: tuple[ServerDeclaration, ...] = (),
                    source: str = "owned") -> OwnedServer:
    """Server ``name``: the scenario's declaration of that name, else the shipped BOM."""
    for item in declared:
        if item.name == name:
            return declared_server(item)
    return server_bom(name, source=source)
