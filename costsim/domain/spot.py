"""Spot capacity: the interruption hazard of a GPU class and the expected hours under it.

Public AWS data gives the monthly share of instances reclaimed; costsim turns it into a Poisson
hazard per hour and prices a job by the expected instance-hours to finish its work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from costsim.units import HOURS_PER_MONTH


def monthly_probability_to_hazard_per_hour(p_month: float) -> float:
    """Hourly Poisson hazard λ = −ln(1 − p)/730 from a monthly interruption probability p."""
    if not 0 <= p_month < 1:
        raise ValueError(f"monthly interruption probability must be in [0, 1), got {p_month}")
    return -math.log1p(-p_month) / HOURS_PER_MONTH


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotHazard:
    """Interruption model of spot capacity for one GPU class (Poisson, hourly hazard)."""

    gpu_class: str
    bucket: str
    monthly_interruption_probability: float
    source: str
    effective_date: str
    estimate: bool

    @property
    def hazard_per_hour(self) -> float:
        """λ in interruptions per instance-hour."""
        return monthly_probability_to_hazard_per_hour(self.monthly_interruption_probability)

    @property
    def mean_hours_between_interruptions(self) -> float:
        """1/λ."""
        return math.inf if self.hazard_per_hour == 0 else 1.0 / self.hazard_per_hour


def spot_expected_hours(work_hours: float, hazard_per_hour: float,
                        checkpoint_interval_hours: float | None = None,
                        restart_hours: float = 0.0, checkpoint_hours: float = 0.0) -> float:
    """Expected instance-hours to finish ``work_hours`` of work under Poisson interruptions.

    Work is split into segments of ``checkpoint_interval_hours`` (the whole job when None), each
    followed by a checkpoint of ``checkpoint_hours``; an interruption loses the segment in
    progress and costs ``restart_hours``. Per segment of length s (incl. its checkpoint) the
    expected time is (1/λ + R)(e^{λs} − 1) (Daly 2006, exact for exponential failures).
    """
    if work_hours <= 0:
        return 0.0
    if hazard_per_hour < 0:
        raise ValueError("hazard must be >= 0")
    interval = work_hours if checkpoint_interval_hours is None else checkpoint_interval_hours
    if interval <= 0:
        raise ValueError("checkpoint interval must be > 0")
    full_segments = math.floor(work_hours / interval + 1e-12)
    remainder = work_hours - full_segments * interval
    segments = [interval] * full_segments + ([remainder] if remainder > 1e-12 else [])
    total = 0.0
    for index, segment in enumerate(segments):
        # the last segment needs no checkpoint after it
        length = segment + (checkpoint_hours if index < len(segments) - 1 else 0.0)
        if hazard_per_hour == 0:
            total += length
        else:
            total += (1.0 / hazard_per_hour + restart_hours) * math.expm1(hazard_per_hour * length)
    return total

