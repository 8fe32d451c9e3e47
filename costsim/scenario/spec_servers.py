"""The scenario file's own servers (``servers:``): parts and costs of a box to buy or own."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from costsim.scenario.spec_common import Date, Name, Number, Spec, Whole

BomKind = Literal["gpu", "cpu", "ram", "nvme", "nic", "fabric", "chassis", "other"]
Interconnect = Literal["pcie", "nvlink", "nvswitch"]
# a BOM line or a whole server above $10M is a typo (an 8×B200 HGX system lists ~$0.4M)
MAX_SERVER_USD = 10_000_000


class BomLineSpec(Spec):
    """One line of a declared server's bill of materials."""

    kind: BomKind = Field(description="gpu, cpu, ram, nvme, nic, fabric, chassis or other "
                          "(the ledger's capex component)")
    item: Name = Field(description="what was bought, e.g. '2× A100 40GB SXM'")
    amount_usd: Number = Field(ge=0, le=MAX_SERVER_USD, description="price paid for the line")
    source: Name = Field(description="where the price comes from (quote, list price, URL)")
    effective_date: Date | None = Field(None, description="date of the price")
    estimate: bool = Field(False, description="true when the amount is an estimate")


class ServerSpec(Spec):
    """A server the scenario declares; usable wherever a shipped server name is."""

    gpu: Name = Field(description="GPU name")
    gpu_count: Whole = Field(ge=1, le=16, description="GPUs in one server")
    interconnect: Interconnect = Field("pcie", description="GPU-to-GPU link inside the server "
                                       "(reported; the perf model uses the GPU's own figures)")
    cpu_cores: Whole = Field(ge=1, le=1_024, description="CPU cores per server")
    ram_gib: Whole = Field(ge=1, le=65_536, description="host RAM per server")
    nvme_tb: Number = Field(gt=0, le=1_000, description="NVMe per server")
    nic_gbps: Number = Field(gt=0, le=12_800, description="network per server")
    capex_usd: Number | None = Field(None, gt=0, le=MAX_SERVER_USD, description="purchase "
                                     "price of one server (or give bom lines)")
    bom: list[BomLineSpec] | None = Field(None, min_length=1, max_length=100,
                                          description="bill of materials (or give capex_usd)")
    power_kw: Number = Field(gt=0, le=100, description="nameplate power of one server")
    life_years: Number = Field(ge=0.5, le=15, description="depreciation life")
    residual_pct: Number = Field(ge=0, le=90, description="resale value at the end of the "
                                 "life, % of capex")
    lead_time_weeks: Number = Field(0, ge=0, le=104, description="purchase to first use")
    pue: Number | None = Field(None, ge=1, le=3, description="facility power / IT power "
                               "(none: the shipped default)")
    usd_per_kwh: Number | None = Field(None, ge=0, le=2, description="electricity price "
                                       "(none: the shipped default)")
    colocation_usd_per_kw_month: Number | None = Field(
        None, ge=0, le=2_000, description="space and cooling on nameplate kW (none: the "
        "shipped default; 0 for your own room)")
    maintenance_pct_per_year: Number | None = Field(None, ge=0, le=50, description="support "
                                                    "and spares, % of capex a year")
    staff_pct_per_year: Number | None = Field(None, ge=0, le=50, description="operations "
                                              "staff, % of capex a year")
    source: Name | None = Field(None, description="where the configuration comes from")

    @model_validator(mode="after")
    def _one_price(self) -> ServerSpec:
        if (self.capex_usd is None) == (self.bom is None):
            raise ValueError("give exactly one of capex_usd and bom")
        return self

