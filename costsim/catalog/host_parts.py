"""The part-shortage model's needs (``costsim/data/host_parts.csv``), with their sources."""

from __future__ import annotations

from functools import cache

from costsim.catalog.resources import read_data_csv
from costsim.domain.host_parts import HostPartAssumptions


@cache
def host_part_assumptions() -> HostPartAssumptions:
    """What a training rank needs of its node's CPU, RAM, NVMe and data (loaded once)."""
    rows = {row["key"]: row for row in read_data_csv("host_parts.csv")}

    def value(key: str) -> float:
        return float(rows[key]["value"])

    return HostPartAssumptions(
        cpu_cores_per_gpu=value("cpu_cores_per_gpu"),
        nvme_drive_tb=value("nvme_drive_tb"),
        nvme_write_gb_per_s_per_drive=value("nvme_write_gb_per_s_per_drive"),
        nvme_read_gb_per_s_per_drive=value("nvme_read_gb_per_s_per_drive"),
        dataset_bytes_per_token=value("dataset_bytes_per_token"),
        staging_copies=value("staging_copies"),
        sources={key: row["source"] for key, row in rows.items()},
    )
