"""The parts of an owned node besides its GPUs, and what a training rank needs of them.

``NodeParts`` is one server's CPU cores, system RAM, NVMe and network (the ``owned`` part
keys of a scenario, scenarios/README.md); ``HostPartAssumptions`` holds the sourced needs the
part-shortage model (``costsim/perf/host_parts.py``) compares them with
(``costsim/data/host_parts.csv``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeParts:
    """One server's non-GPU parts."""

    cpu_cores: int
    ram_gib: int
    nvme_tb: float
    nic_gbps: float  # the NICs that carry GPU traffic (the compute fabric), per node

    def __post_init__(self) -> None:
        for key in ("cpu_cores", "ram_gib", "nvme_tb", "nic_gbps"):
            value = getattr(self, key)
            if not value > 0:
                raise ValueError(f"{key} must be > 0, got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class HostPartAssumptions:
    """What a training rank needs of its node, with the sources of each figure."""

    cpu_cores_per_gpu: float
    nvme_drive_tb: float
    nvme_write_gb_per_s_per_drive: float
    nvme_read_gb_per_s_per_drive: float
    dataset_bytes_per_token: float
    staging_copies: float
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        for key in ("cpu_cores_per_gpu", "nvme_drive_tb", "nvme_write_gb_per_s_per_drive",
                    "nvme_read_gb_per_s_per_drive", "dataset_bytes_per_token"):
            if not getattr(self, key) > 0:
                raise ValueError(f"{key} must be > 0, got {getattr(self, key)}")
        if self.staging_copies < 0:
            raise ValueError(f"staging_copies must be >= 0, got {self.staging_copies}")
