"""Owned servers: BOMs, power, depreciation, cost per delivered GPU-hour, break-even."""

from __future__ import annotations

import pytest

from costsim.catalog.servers import (
    default_parts,
    parts_of,
    server_bom,
    server_names,
    with_operating_costs,
)
from costsim.catalog.storage import storage_price
from costsim.domain.host_parts import NodeParts
from costsim.errors import CatalogError, InputError

REQUIRED = ("hgx-h100-8", "hgx-h200-8", "hgx-b200-8", "hgx-a100-80gb-8", "l40s-4",
            "rtx4090-4", "rtx4090-8")


def test_required_servers_exist_with_full_boms() -> None:
    """Every server of the issue, with GPU, CPU, RAM, NVMe, NIC, chassis and fabric lines."""
    assert set(REQUIRED) <= set(server_names())
    for name in REQUIRED:
        server = server_bom(name)
        kinds = {line.kind for line in server.bom}
        assert kinds == {"gpu", "cpu", "ram", "nvme", "nic", "chassis", "fabric"}
        assert all(line.source and line.effective_date for line in server.bom)
        assert server.capex_usd == round(sum(line.amount_usd for line in server.bom), 2)


def test_hgx_h100_matches_published_system_prices() -> None:
    """8xH100 HGX: $249k-288k without fabric (reference §1.2), ~10 kW (DGX H100)."""
    server = server_bom("hgx-h100-8")
    fabric = sum(line.amount_usd for line in server.bom if line.kind == "fabric")
    assert 249_000 <= server.capex_usd - fabric <= 288_000
    assert server.power_kw == pytest.approx(10.45, abs=0.5)
    gpu_share = sum(line.amount_usd for line in server.bom if line.kind == "gpu")
    assert 0.6 < gpu_share / server.capex_usd < 0.9  # reference §4.5: GPUs 75-90 % of a box


def test_bom_is_parametric_in_gpus_and_ram() -> None:
    """Half the GPUs: GPU, NIC and fabric lines and GPU power shrink; RAM scales per GiB."""
    full = server_bom("hgx-h100-8")
    half = server_bom("hgx-h100-8", gpu_count=4, ram_gib=1024)
    assert half.gpu_count == 4
    assert full.capex_usd - half.capex_usd == pytest.approx(
        4 * 25_000 + 4 * 2_000 + 4 * 4_000 + 1024 * 3.84, abs=0.01)
    assert full.power_kw - half.power_kw == pytest.approx(4 * 0.725)
    with pytest.raises(InputError, match="must be one of 4, 8"):
        server_bom("hgx-h100-8", gpu_count=3)
    with pytest.raises(CatalogError, match="did you mean 'hgx-h100-8'"):
        server_bom("hgx-h100")


def test_straight_line_depreciation_and_residual() -> None:
    """Book value falls linearly to the residual at end of life, then stays."""
    server = server_bom("hgx-h100-8")
    capex, residual = server.capex_usd, server.residual_value_usd
    assert server.book_value_usd(0) == capex
    assert server.book_value_usd(24) == pytest.approx((capex + residual) / 2, abs=0.01)
    assert server.book_value_usd(48) == residual == server.book_value_usd(100)
    assert server.depreciation_usd_per_year == pytest.approx((capex - residual) / 4)


def test_owned_cost_per_delivered_gpu_hour_and_break_even() -> None:
    """Cost per delivered GPU-hour falls with utilization; u* solves owned(u*) = rent."""
    server = server_bom("hgx-h100-8")
    assert server.cost_usd_per_delivered_gpu_hour(0.5) > server.cost_usd_per_delivered_gpu_hour(1)
    u_star = server.break_even_utilization(6.88)
    assert u_star is not None
    assert 0 < u_star < 1
    assert server.cost_usd_per_delivered_gpu_hour(u_star) == pytest.approx(6.88)
    assert server.break_even_utilization(0.5) is None  # renting at $0.50 always wins
    cheap_power = with_operating_costs(server, usd_per_kwh=0.0, colocation_usd_per_kw_month=0)
    assert cheap_power.cost_usd_per_year(1.0) < server.cost_usd_per_year(1.0)


def test_storage_and_egress_prices() -> None:
    """S3 Standard $0.023/GB-month and $0.09/GB egress after 100 GB; unknown clouds fall back."""
    aws = storage_price("aws")
    assert aws.storage_cost_usd(2000, 12) == 552.0
    assert aws.egress_cost_usd_per_month(500) == 36.0
    other = storage_price("nebius")
    assert other.estimate
    assert other.cloud == "nebius"


def test_cash_view_pays_capex_up_front() -> None:
    """Month 0 carries the capex; later months only opex; a sale returns the book value."""
    server = server_bom("l40s-4")
    cash = server.cash_usd_by_month(12, utilization=0.5)
    opex = server.opex_usd_per_month(0.5)
    assert cash[0] == round(server.capex_usd + opex, 2)
    assert cash[1:] == (opex,) * 11
    sold = server.cash_usd_by_month(12, utilization=0.5, sell_at_end=True)
    assert sold[-1] == round(opex - server.book_value_usd(12), 2)
    assert sum(sold) < sum(cash)


def test_owned_part_keys_price_their_bom_lines() -> None:
    shipped = server_bom("hgx-h100-8")
    assert parts_of(shipped) == default_parts("hgx-h100-8") == NodeParts(
        cpu_cores=128, ram_gib=2048, nvme_tb=30.72, nic_gbps=3200.0)
    trimmed = server_bom("hgx-h100-8", ram_gib=256, nvme_tb=61.44, cpu_cores=32, nic_gbps=400)
    lines = {line.kind: line for line in trimmed.bom}
    assert lines["cpu"].quantity == 0.5  # 32 of a 64-core part, priced per core
    assert lines["cpu"].amount_usd == 5800.0
    assert lines["nvme"].amount_usd == round(61.44 * 112.5, 2)
    assert lines["nic"].quantity == 1 + 2  # one 400G compute NIC + storage/management
    assert lines["fabric"].quantity == 1  # one fabric port instead of eight
    assert parts_of(trimmed) == NodeParts(cpu_cores=32, ram_gib=256, nvme_tb=61.44,
                                          nic_gbps=400.0)
    assert trimmed.capex_usd == pytest.approx(
        shipped.capex_usd - (2048 - 256) * 3.84 - 30.72 * 112.5 + 61.44 * 112.5
        - 1.5 * 11600 - 7 * 2000 - 7 * 4000, abs=0.02)
    assert trimmed.power_kw < shipped.power_kw  # fewer CPU and NIC watts


def test_parts_a_board_cannot_take_are_refused() -> None:
    with pytest.raises(InputError, match=r"cpu_cores.*at most 2 sockets × 64 cores = 128"):
        server_bom("hgx-h100-8", cpu_cores=129)
    with pytest.raises(InputError, match=r"nvme_tb.*must be > 0"):
        server_bom("hgx-h100-8", nvme_tb=0)
