"""The simulator's own default assumptions (``costsim/data/sim_assumptions.csv``), with sources.

Each is used only where a scenario leaves the value unset, and the report lists the ones a run
relied on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, kw_only=True)
class SimAssumptions:
    """Defaults of the load profile, the autoscaler's delay, spot recovery and experiment jobs
    (the autoscaler's target utilization and the default SLO are the performance model's:
    ``perf_assumptions.csv``, :mod:`costsim.perf.sizing`)."""

    diurnal_trough_fraction: float
    diurnal_peak_hour: float
    weekend_fraction: float
    instance_startup_s: float
    spot_reacquire_s: float
    generic_job_host_ram_per_vram: float
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    estimates: frozenset[str] = field(default_factory=frozenset, compare=False, hash=False)

    def __post_init__(self) -> None:
        for key in ("diurnal_trough_fraction", "weekend_fraction"):
            value = getattr(self, key)
            if not 0 < value <= 1:
                raise ValueError(f"{key} must be in (0, 1], got {value}")
        if not 0 <= self.diurnal_peak_hour < 24:
            raise ValueError(f"diurnal_peak_hour must be in [0, 24), got "
                             f"{self.diurnal_peak_hour}")
