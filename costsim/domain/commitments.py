"""Spend-based savings plans and fixed-window capacity blocks (docs/pricing.md).

Two more ways to commit beside a 1y/3y reservation (:class:`costsim.domain.plans.Commitment`):

* a **savings plan** commits ``usd_per_hour`` of spend, at the plan's discounted rates, every
  hour of a 1- or 3-year term (AWS Compute / EC2 Instance Savings Plans, Azure savings plan for
  compute, GCP flexible committed-use discounts). Each hour, eligible on-demand usage is billed
  at the discounted rate against the commitment; usage beyond it is billed on demand; commitment
  left unused in an hour is paid and idle.
* a **capacity block** is ``count`` GPUs for the fixed window [start, start + days) at the
  published block rate (AWS EC2 Capacity Blocks for ML, 1–182 days; GCP calendar-mode
  reservations), paid whole up front, used by training phases inside the window.

``index`` is the entry's position in the plan's ``commitments`` list (for error messages): it
takes no part in equality, so a plan written back and loaded again is equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

from costsim.domain.plans import MAX_GPUS, check_commitment_term
from costsim.domain.pricing import Payment
from costsim.errors import ScenarioError
from costsim.units import HOURS_PER_YEAR

# The largest hourly commitment a savings plan may carry: 100,000 GPUs at ~$10/GPU-hour, the
# same ceiling as a plan's GPU count (domain/plans.MAX_GPUS).
MAX_USD_PER_HOUR = 1_000_000.0
# AWS EC2 Capacity Blocks for ML sell 1 to 182 days (the longest any provider publishes; GCP's
# calendar mode sells up to 90); the price book narrows it per cloud.
MIN_BLOCK_DAYS = 1
MAX_BLOCK_DAYS = 182


class SavingsPlanScope(StrEnum):
    """What usage a savings plan discounts."""

    COMPUTE = "compute"  # any GPU type on the cloud (AWS Compute SP, Azure, GCP flexible CUD)
    FAMILY = "family"  # one instance family, here one GPU type (AWS EC2 Instance SP)


@dataclass(frozen=True, slots=True, kw_only=True)
class SavingsPlan:
    """``usd_per_hour`` committed on ``cloud`` from ``start`` for ``term_years``.

    ``family`` names the GPU type an instance-family plan covers (None: a compute plan covering
    every GPU type on the cloud).
    """

    cloud: str
    usd_per_hour: float
    term_years: int
    payment: Payment
    start: date
    family: str | None = None
    index: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.usd_per_hour) and 0 < self.usd_per_hour <= MAX_USD_PER_HOUR):
            raise ScenarioError("", "commitments.usd_per_hour", f"must be in (0, "
                                f"{MAX_USD_PER_HOUR:g}] $/hour, got {self.usd_per_hour}")
        check_commitment_term(self.term_years)

    @property
    def scope(self) -> SavingsPlanScope:
        """Compute (any GPU on the cloud) or one family."""
        return SavingsPlanScope.COMPUTE if self.family is None else SavingsPlanScope.FAMILY

    @property
    def term_hours(self) -> float:
        """Hours of the term (8,760 a year, as reservations count them)."""
        return self.term_years * HOURS_PER_YEAR

    @property
    def obligation_usd(self) -> float:
        """Everything owed over the term: the commitment for every hour, used or not."""
        return round(self.usd_per_hour * self.term_hours, 2)

    @property
    def label(self) -> str:
        """The ledger's ``pool``: ``aws savings plan compute 1y no-upfront $10/h``."""
        scope = self.family or "compute"
        return (f"{self.cloud} savings plan {scope} {self.term_years}y {self.payment.value} "
                f"${self.usd_per_hour:g}/h")

    @property
    def option(self) -> str:
        """The ledger's ``option``: ``savings-plan-1y-no-upfront``."""
        return f"savings-plan-{self.term_years}y-{self.payment.value}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CapacityBlock:
    """``count`` GPUs of ``gpu`` on ``cloud`` for the window [``start``, ``start`` + ``days``)."""

    gpu: str
    count: int
    cloud: str
    start: date
    days: int
    index: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_GPUS:
            raise ScenarioError("", "commitments.count", f"must be 1..{MAX_GPUS} GPUs, got "
                                f"{self.count}")
        if not MIN_BLOCK_DAYS <= self.days <= MAX_BLOCK_DAYS:
            raise ScenarioError("", "commitments.days", f"must be {MIN_BLOCK_DAYS}.."
                                f"{MAX_BLOCK_DAYS} days (AWS Capacity Blocks' range), got "
                                f"{self.days}")

    @property
    def option(self) -> str:
        """The ledger's ``option``."""
        return "capacity-block"
