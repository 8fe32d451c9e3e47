"""Savings plans and capacity blocks of a plan, priced, and the pure rules that book them.

* :class:`SavingsPlanPool` — ``usd_per_hour`` of spend at the plan's discounted rates, owed
  every hour of the term. Each horizon hour, the on-demand usage it covers (on its cloud; one
  GPU type for a family plan) is billed at the discounted rate against that hour's commitment,
  highest discount first as AWS and Azure apply them (docs.aws.amazon.com/savingsplans
  "Understanding how Savings Plans apply to your AWS usage"; learn.microsoft.com "Azure savings
  plan for compute: how the benefit is applied"); usage beyond it stays on demand; what the hour
  left unused is ``reserved-idle``; the term after the horizon is ``stranded-commitment``.
  So used + idle + stranded = usd_per_hour × term hours, as a reservation's obligation.
* :class:`CapacityBlockPool` — whole instances for [start, start + days) at the block rate,
  paid in full in the window's first month; training phases inside the window use it
  (:func:`costsim.sim.phase_runs.run_training`), the rest of the window is ``reserved-idle``
  and the part after the horizon ``stranded-commitment``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from costsim.catalog.commit_prices import (
    CapacityBlockRate,
    capacity_block_rate,
    savings_plan_offered,
    savings_plan_terms,
    savings_plan_upfront_fraction,
)
from costsim.catalog.prices import PriceBook
from costsim.domain.calendar import Calendar
from costsim.domain.commitments import CapacityBlock, SavingsPlan
from costsim.domain.pricing import PurchaseOption
from costsim.errors import InfeasibleError
from costsim.sim.ledger import Category, Component, LedgerBook, LineKey, line_key
from costsim.sim.occupancy import hourly_capacity
from costsim.sim.pools import RentalPool, seconds_by_month
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True, kw_only=True)
class SavingsPlanPool:
    """A savings plan from ``start_s``, with its discount on each rental pool it covers."""

    plan: SavingsPlan
    start_s: float
    upfront_fraction: float
    discounts: tuple[tuple[str, float], ...]  # (rental pool name, discount fraction)
    source: str
    effective_date: str
    estimate: bool

    @property
    def name(self) -> str:
        """The ledger's ``pool``."""
        return self.plan.label

    @property
    def end_s(self) -> float:
        """End of the term in simulated seconds."""
        return self.start_s + self.plan.term_hours * SECONDS_PER_HOUR

    def discount(self, pool: str) -> float | None:
        """The discount on rental pool ``pool`` (None: the plan does not cover it)."""
        return next((d for name, d in self.discounts if name == pool), None)


def covers(plan: SavingsPlan, pool: RentalPool) -> bool:
    """Whether ``plan`` discounts work on ``pool``: on-demand, on its cloud, of its family."""
    return (pool.option is PurchaseOption.ON_DEMAND and pool.offering.cloud == plan.cloud
            and (plan.family is None or pool.gpu == plan.family))


def savings_plan_pool(plan: SavingsPlan, rentals: Iterable[RentalPool],
                      calendar: Calendar) -> SavingsPlanPool:
    """Price ``plan`` against the plan's rental pools (the discount each covered one gets).

    Raises:
        InfeasibleError: the cloud sells no such plan, or no pool of the plan is covered.
    """
    why_not = savings_plan_offered(plan.cloud, plan.scope, plan.term_years, plan.payment)
    if why_not is not None:
        raise InfeasibleError(why_not)
    discounts: dict[str, float] = {}
    sources: dict[str, tuple[str, str, bool]] = {}
    for pool in rentals:
        if covers(plan, pool) and pool.name not in discounts:
            terms = savings_plan_terms(pool.offering, plan.scope, plan.term_years, plan.payment)
            discounts[pool.name] = terms.discount_fraction
            sources[pool.name] = (terms.source, terms.effective_date, terms.estimate)
    if not discounts:
        what = plan.family or "any GPU"
        raise InfeasibleError(f"the {plan.label} would discount nothing: no phase of the plan "
                              f"runs on-demand {what} on {plan.cloud}")
    first = sources[min(sources)]
    return SavingsPlanPool(
        plan=plan, start_s=calendar.seconds_at(plan.start),
        upfront_fraction=savings_plan_upfront_fraction(plan.cloud, plan.term_years,
                                                       plan.payment),
        discounts=tuple(sorted(discounts.items())), source=first[0], effective_date=first[1],
        estimate=any(estimate for _, _, estimate in sources.values()))


def book_savings_plan(pool: SavingsPlanPool,
                      on_demand: MutableMapping[LineKey, tuple[FloatArray, FloatArray]],
                      month_of_hour: NDArray[np.int64], calendar: Calendar,
                      book: LedgerBook) -> None:
    """Book a savings plan's whole obligation from the on-demand use it covers, hour by hour.

    ``on_demand`` maps each on-demand ledger line to its charges and GPU-hours in every horizon
    hour (price drift included); what this plan covers is moved off them (they then hold what is
    left for the next plan). Covered work is booked on the plan's own ``compute`` line of the
    same phase at the discounted rate; the hour's commitment it left unused is idle.
    """
    hours = len(month_of_hour)
    months = int(month_of_hour.max()) + 1 if hours else 0
    rate = pool.plan.usd_per_hour
    commitment = hourly_capacity(hours, pool.start_s, pool.end_s, 1) * rate
    left = commitment.copy()
    eligible = [(d, key) for key in on_demand
                if (d := pool.discount(key.pool)) is not None]
    # highest discount first; ties in a stable order (the line's own sort)
    eligible.sort(key=lambda item: (-item[0], item[1].phase, item[1].pool, item[1].gpu))
    for discount, key in eligible:
        usd, gpu_hours = on_demand[key]
        at_plan_rate = usd * (1 - discount)
        covered = np.minimum(at_plan_rate, left)
        left -= covered
        covered_on_demand = covered / (1 - discount)
        share = np.divide(covered_on_demand, usd, out=np.zeros_like(usd), where=usd > 0)
        covered_hours = gpu_hours * share
        usd -= covered_on_demand
        gpu_hours -= covered_hours
        by_month = [np.bincount(month_of_hour, weights=x, minlength=months)
                    for x in (covered, covered_on_demand, covered_hours)]
        plan_key = line_key(key.phase, pool.name, key.gpu, pool.plan.option, Category.COMPUTE,
                            Component.GPU_INSTANCE)
        for month in np.nonzero(by_month[0])[0]:
            book.spend(key, int(month), -float(by_month[1][month]),
                       gpu_hours=-float(by_month[2][month]))
            book.charge(plan_key, float(by_month[0][month]),
                        gpu_hours=float(by_month[2][month]))
    gpu = pool.plan.family or ""

    def line(category: Category) -> LineKey:
        return line_key("", pool.name, gpu, pool.plan.option, category,
                        Component.GPU_INSTANCE)

    book.charge(line(Category.RESERVED_IDLE), float(left.sum()))
    stranded = rate * pool.plan.term_hours - float(commitment.sum())
    if stranded > 1e-9:
        book.charge(line(Category.STRANDED_COMMITMENT), stranded)
    # cash: the upfront share in the start month, the rest hour by hour as billed
    upfront = round(pool.plan.obligation_usd * pool.upfront_fraction, 2)
    recurring = (rate * pool.plan.term_hours - upfront) / pool.plan.term_hours
    if pool.start_s < calendar.horizon_s:
        book.cash(calendar.month_index(pool.start_s), upfront, capex=False)
    for m, seconds in enumerate(seconds_by_month(pool.start_s, pool.end_s,
                                                 calendar.month_starts_s())):
        book.cash(m, recurring * seconds / SECONDS_PER_HOUR, capex=False)
        book.amortize(m, rate * seconds / SECONDS_PER_HOUR)


@dataclass(frozen=True, slots=True, kw_only=True)
class CapacityBlockPool:
    """``instances`` block instances over [``start_s``, ``end_s``)."""

    block: CapacityBlock
    rate: CapacityBlockRate
    instances: int
    start_s: float

    @property
    def gpu(self) -> str:
        """The block's GPU type."""
        return self.rate.gpu

    @property
    def name(self) -> str:
        """The ledger's ``pool``: the block's instance and first day."""
        return (f"{self.rate.cloud} capacity block {self.rate.instance_type} from "
                f"{self.block.start.isoformat()}")

    @property
    def gpus(self) -> int:
        """GPUs in the block (whole instances)."""
        return self.instances * self.rate.gpus_per_instance

    @property
    def end_s(self) -> float:
        """End of the window."""
        return self.start_s + self.block.days * SECONDS_PER_DAY

    @property
    def window_hours(self) -> float:
        """Hours of the window."""
        return self.block.days * 24.0

    @property
    def obligation_usd(self) -> float:
        """The whole block, paid up front: instances × rate × window hours."""
        return round(self.instances * self.rate.usd_per_instance_hour * self.window_hours, 2)


def capacity_block_pool(book: PriceBook, block: CapacityBlock,
                        calendar: Calendar) -> CapacityBlockPool:
    """Price ``block`` from the price book.

    Raises:
        InfeasibleError: no such block is sold on the cloud, or not for that many days.
    """
    rate = capacity_block_rate(book, block.gpu, block.cloud)
    if not rate.min_days <= block.days <= rate.max_days:
        raise InfeasibleError(f"{block.cloud} sells capacity blocks of {rate.min_days}-"
                              f"{rate.max_days} days, the plan asks for {block.days}")
    return CapacityBlockPool(block=block, rate=rate,
                             instances=math.ceil(block.count / rate.gpus_per_instance),
                             start_s=calendar.seconds_at(block.start))


def book_capacity_block(pool: CapacityBlockPool,
                        used_gpu_s_by_phase: Mapping[str, Sequence[float]],
                        calendar: Calendar, book: LedgerBook) -> None:
    """Book a block: each phase's use at the block rate, the window's unused GPU-hours within
    the horizon as idle, the window after the horizon as stranded; cash up front."""
    months = calendar.month_starts_s()
    active = seconds_by_month(pool.start_s, pool.end_s, months)
    rate = pool.rate.usd_per_gpu_hour
    in_horizon_h = sum(active) * pool.gpus / SECONDS_PER_HOUR
    used_total = 0.0
    for phase, used in sorted(used_gpu_s_by_phase.items()):
        used_h = sum(used) / SECONDS_PER_HOUR
        if used_h <= 0:
            continue
        used_total += used_h
        book.charge(line_key(phase, pool.name, pool.gpu, pool.block.option, Category.COMPUTE,
                             Component.GPU_INSTANCE),
                    used_h * rate, gpu_hours=used_h)

    def line(category: Category) -> LineKey:
        return line_key("", pool.name, pool.gpu, pool.block.option, category,
                        Component.GPU_INSTANCE)

    idle_h = max(0.0, in_horizon_h - used_total)
    book.charge(line(Category.RESERVED_IDLE), idle_h * rate, gpu_hours=idle_h)
    stranded_h = max(0.0, pool.window_hours * pool.gpus - in_horizon_h)
    if stranded_h > 0:
        book.charge(line(Category.STRANDED_COMMITMENT), stranded_h * rate, gpu_hours=stranded_h)
    if pool.start_s < calendar.horizon_s:
        book.cash(calendar.month_index(pool.start_s), pool.obligation_usd, capex=False)
    for m, seconds in enumerate(active):
        book.amortize(m, pool.gpus * rate * seconds / SECONDS_PER_HOUR)
