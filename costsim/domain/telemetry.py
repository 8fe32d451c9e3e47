"""GPU telemetry as read from a monitoring log (``nvidia-smi --query-gpu`` CSV, ``dcgmi dmon``):
one sample per GPU per poll, and what a reader could not read.

Bytes inside: the logs' MiB (2^20 bytes) are converted when read. ``None`` is a value the log
marks missing (``[N/A]``, ``[Not Supported]``, ``N/A``) or a column the log does not have; such
values are left out of every peak and mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TelemetryFormat(StrEnum):
    """Which tool wrote a telemetry log."""

    NVIDIA_SMI_CSV = "nvidia-smi-csv"
    DCGMI_DMON = "dcgmi-dmon"


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSample:
    """One GPU at one poll.

    ``device`` tells the GPUs of a log apart: the UUID where the log has one, else the PCI bus
    id, else the index (``index`` / the dmon entity id), else ``"?"`` (a log without any of them
    cannot tell its GPUs apart; its samples still count for the GPU type). ``gpu_name`` is the
    name as the log prints it (``NVIDIA H100 80GB HBM3``), None when the log has no name column.
    """

    line: int
    device: str
    gpu_name: str | None
    memory_used_bytes: int | None
    memory_total_bytes: int | None
    utilization_pct: float | None

    def __post_init__(self) -> None:
        for key in ("memory_used_bytes", "memory_total_bytes"):
            value = getattr(self, key)
            if value is not None and value < 0:
                raise ValueError(f"{key} must be >= 0 (got {value})")
        if self.utilization_pct is not None and not 0.0 <= self.utilization_pct <= 100.0:
            raise ValueError(f"utilization_pct must be in 0..100 (got {self.utilization_pct})")


@dataclass(frozen=True, slots=True, kw_only=True)
class LogProblem:
    """A line of a log that could not be read (or was read in part), and why."""

    line: int
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryLog:
    """Everything read from one telemetry file.

    ``missing_cells``: cells the tool itself marked missing (``[N/A]``, ``[Not Supported]``…),
    which are expected and not problems; ``problems``: lines that were skipped or read in part.
    """

    source: str
    format: TelemetryFormat
    samples: tuple[GpuSample, ...]
    problems: tuple[LogProblem, ...] = ()
    missing_cells: int = 0
    columns: tuple[str, ...] = ()
