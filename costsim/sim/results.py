"""What a simulation returns: everything a report table or chart shows, as frozen values.

``report`` imports only these and the domain types (tests/test_layering.py), so timelines,
ledgers, fleet sizes and utilization live here, not in the engines' internals.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from costsim.domain.phases import PhaseKind
from costsim.domain.pricing import PriceFlag, PurchaseOption, estimate_flag
from costsim.sim.demand import DemandHistogram
from costsim.sim.ledger import Ledger
from costsim.sim.waits import WaitHistogram


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseTimeline:
    """When a phase ran in one replication (seconds from the scenario start)."""

    phase: str
    kind: PhaseKind
    start_s: float | None  # None: it never started within the horizon
    end_s: float | None  # None: unfinished at the horizon's end
    deadline_s: float | None = None

    @property
    def deadline_met(self) -> bool | None:
        """True/False for a phase with a deadline, None otherwise."""
        if self.deadline_s is None:
            return None
        return self.end_s is not None and self.start_s is not None and (
            self.end_s - self.start_s <= self.deadline_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingRunRecord:
    """One training phase in one replication."""

    phase: str
    gpus: int
    wall_s: float
    gpu_hours: float  # GPU-hours held for the run (incl. fallback, excl. unbilled waits)
    faults: int
    preemptions: int
    lost_work_s: float
    cost_usd: float  # the phase's ledger lines (its share of commitments included)
    # how long the run went on after its capacity block's window ended (0: none or within it)
    block_overrun_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingRate:
    """A training phase's steady rate in a plan and where it comes from (DESIGN §12)."""

    phase: str
    gpu: str
    gpus: int
    tokens_per_s: float
    basis: str  # costsim.domain.measurements.Basis value
    profile_source: str  # the measured run's file and row ("" when predicted)


HOURS_A_DAY = 24  # clock hours (the calendar starts at midnight)


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetProfile:
    """One serving phase's fleet in one replication, reduced to what the report's fleet chart
    draws. The hour-by-hour series is kept for replication 0 only (memory); this is kept for
    every replication so the chart shows P10–P90 over them, not one future."""

    first_day: int  # the day of ``daily_peak[0]``, counted from the scenario's start
    daily_peak: tuple[int, ...]  # the most replicas in any hour of each day the phase ran
    by_clock_hour: tuple[float, ...]  # mean replicas at clock hour 0..23; () if it ran no hour

    @classmethod
    def of(cls, first_hour: int, replicas: np.ndarray) -> FleetProfile:
        """The profile of a fleet whose ``replicas[i]`` ran in hour ``first_hour + i`` of the
        scenario: whole replica counts, as integers or as whole numbers in float64 (the
        simulator's counts, reduced as they are: sums of whole numbers below 2^53 and maxima
        are exact, so the profile is the same as of the integers)."""
        if len(replicas) == 0:
            return cls(first_day=first_hour // HOURS_A_DAY, daily_peak=(), by_clock_hour=())
        # whole days, the hours outside the fleet's first and last day padded: 0 replicas for
        # the peak (counts are >= 0) and not counted for the clock-hour mean (sums of whole
        # replica counts are exact in float in any order)
        counts = np.asarray(replicas)
        if counts.dtype != np.float64:
            counts = counts.astype(np.int64, copy=False)
        lead = first_hour % HOURS_A_DAY
        days = -(-(lead + counts.size) // HOURS_A_DAY)
        grid = np.zeros(days * HOURS_A_DAY, dtype=counts.dtype)
        grid[lead:lead + counts.size] = counts
        by_day = grid.reshape(days, HOURS_A_DAY)
        hours_ran = _clock_hours_ran(lead, counts.size)
        # clock hour by clock hour, contiguous: numpy reduces the (24, days) rows and columns
        # faster than the (days, 24) ones (whole numbers: the same sums and maxima)
        by_clock = np.ascontiguousarray(by_day.T)
        sums = by_clock.sum(axis=1).astype(np.float64, copy=False)
        mean = np.divide(sums, hours_ran, out=np.zeros(HOURS_A_DAY), where=hours_ran > 0)
        peaks = np.maximum.reduce(by_clock, axis=0).astype(np.int64, copy=False)
        daily_peak = tuple(peaks.tolist())
        _remember_peaks(daily_peak, peaks)
        return cls(first_day=first_hour // HOURS_A_DAY, daily_peak=daily_peak,
                   by_clock_hour=tuple(mean.tolist()))


# The daily peaks of the profiles made lately as the array they were made from, by the
# tuple's identity (the tuple kept with it, so its id cannot be reused while here): the tally
# folds each profile right after the replication made it and needs the peaks as an array
# (:func:`daily_peak_array`), which converting the tuple back would cost ~10 µs a replication.
_PEAKS_KEPT = 64
_PEAKS: dict[int, tuple[tuple[int, ...], NDArray[np.int64], int]] = {}


def _remember_peaks(daily_peak: tuple[int, ...], peaks: NDArray[np.int64]) -> None:
    if len(_PEAKS) >= _PEAKS_KEPT:
        _PEAKS.pop(next(iter(_PEAKS)))
    peaks.flags.writeable = False
    _PEAKS[id(daily_peak)] = (daily_peak, peaks, int(peaks.max()))


def daily_peak_array(profile: FleetProfile) -> tuple[NDArray[np.int64], int]:
    """``profile.daily_peak`` as an int64 array (read-only) and its largest value (the array
    :meth:`FleetProfile.of` made it from where it is still kept, else converted: the same
    values); the profile has at least one day."""
    kept = _PEAKS.get(id(profile.daily_peak))
    if kept is not None and kept[0] is profile.daily_peak:
        return kept[1], kept[2]
    peaks = np.asarray(profile.daily_peak, dtype=np.int64)
    return peaks, int(peaks.max())


@functools.lru_cache(maxsize=256)
def _clock_hours_ran(lead: int, hours: int) -> NDArray[np.int64]:
    """Hours a fleet of ``hours`` hours from clock hour ``lead`` ran at each clock hour c: the
    i in [lead, lead + n) with i ≡ c (mod 24), counted in closed form
    (⌈(lead + n − c) / 24⌉ − ⌈(lead − c) / 24⌉); read-only, shared by the replications."""
    clock = np.arange(HOURS_A_DAY)
    ran: NDArray[np.int64] = (-((clock - (lead + hours)) // HOURS_A_DAY)
                              + ((clock - lead) // HOURS_A_DAY))
    ran.flags.writeable = False
    return ran


Band = tuple[float, float, float]  # P10, P50, P90 over the replications


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetBands:
    """A serving phase's fleet over every replication: P10/P50/P90 of the mean replicas at each
    clock hour, and of the daily peak on each day (a replication not serving on a day counts 0:
    serving starts on a different day in each future)."""

    phase: str
    by_clock_hour: tuple[Band, ...]  # hours 0..23
    first_day: int  # the day of ``daily_peak[0]``, counted from the scenario's start
    daily_peak: tuple[Band, ...]

    @classmethod
    def of(cls, phase: str, profiles: Sequence[FleetProfile | None]) -> FleetBands | None:
        """The bands of one phase's profiles (one per replication; None: the phase did not
        run in that replication). None when no replication served an hour."""
        ran = [p for p in profiles if p is not None and p.daily_peak]
        if not ran:
            return None
        first = min(p.first_day for p in ran)
        last = max(p.first_day + len(p.daily_peak) for p in ran)
        peaks = np.zeros((len(profiles), last - first))
        for row, profile in enumerate(p for p in profiles if p is not None and p.daily_peak):
            offset = profile.first_day - first
            peaks[row, offset:offset + len(profile.daily_peak)] = profile.daily_peak
        clock = np.array([p.by_clock_hour for p in ran])
        return cls(phase=phase, by_clock_hour=percentile_bands(clock), first_day=first,
                   daily_peak=percentile_bands(peaks))


def percentile_bands(values: np.ndarray) -> tuple[Band, ...]:
    """P10/P50/P90 of each column of ``values`` (replications × columns)."""
    low, mid, high = np.percentile(values, [10, 50, 90], axis=0)
    return tuple((float(a), float(b), float(c)) for a, b, c in zip(low, mid, high, strict=True))


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingRecord:
    """One serving phase in one replication."""

    phase: str
    requests: float
    served_within_slo: float
    tokens_served: float
    output_tokens_served: float
    replica_hours: float
    cost_usd: float  # the phase's ledger lines
    replicas_by_hour: tuple[int, ...]  # whole fleet (replicas of every entry)
    preemptions: int = 0  # spot replicas reclaimed
    fleet: FleetProfile | None = None  # the fleet reduced for the report, every replication

    @property
    def slo_attainment(self) -> float:
        """Share of requests served within the SLO."""
        return self.served_within_slo / self.requests if self.requests > 0 else 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolUse:
    """GPU-hours a pool was paid for and used in one replication (within the horizon).

    Rented pools are paid while held, so their utilization is 1 except where a fixed fleet
    waited for work (experiments on ``count`` GPUs) or whole instances carried unused GPUs.
    """

    pool: str
    gpu: str
    option: str
    paid_gpu_hours: float
    used_gpu_hours: float

    @property
    def utilization(self) -> float:
        """used / paid (1 for a pool paid nothing)."""
        return self.used_gpu_hours / self.paid_gpu_hours if self.paid_gpu_hours > 0 else 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Replication:
    """One replication of one plan."""

    index: int
    ledger: Ledger
    timelines: tuple[PhaseTimeline, ...]
    training: tuple[TrainingRunRecord, ...]
    serving: tuple[ServingRecord, ...]
    queue_waits: WaitHistogram  # every experiment job's wait (costsim.sim.waits)
    gpu_hours_used: float
    gpu_hours_paid: float
    reserved_gpu_hours_committed: float  # within the horizon
    reserved_gpu_hours_used: float
    reserved_by_month: tuple[tuple[float, float], ...]  # (committed, used) GPU-hours per month
    pools: tuple[PoolUse, ...]
    draws: tuple[tuple[str, float], ...]
    events: int
    # each phase's cost: its ledger lines plus its use-share of owned servers ("" = plan-level)
    phase_costs: tuple[tuple[str, float], ...] = ()
    # GPU demand per GPU type (costsim.sim.demand), by name: as a histogram; hour by hour
    # for replication 0 only (charts)
    gpu_demand: tuple[DemandHistogram, ...] = ()
    gpu_demand_by_hour: tuple[tuple[str, tuple[float, ...]], ...] = ()
    # per GPU type, its demand within the window of the experiments and serving phases using
    # it in this replication (costsim.sim.engine.long_phase_gpus): reservation sizing
    gpu_demand_in_phases: tuple[DemandHistogram, ...] = ()

    @property
    def cost_usd(self) -> float:
        """Economic cost of the replication."""
        return self.ledger.cost_usd


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceUsed:
    """One price a plan relied on, with its provenance (the report's assumptions)."""

    phase: str  # "" for plan-level capacity (commitments, owned servers)
    pool: str
    gpu: str
    option: str
    rate_usd_per_gpu_hour: float  # effective rate (reservations: r_c; owned: at full use)
    upfront_usd: float  # reservation upfront or server capex, all instances/servers
    source: str
    effective_date: str
    estimate: bool  # rests on an assumption (estimated discount, owned-cost model)
    flags: tuple[str, ...] = ()
    usd_per_gb: float | None = None  # a data move's egress rate (option "data-transfer")
    # a pay-per-token API's prices (option "api")
    input_usd_per_million_tokens: float | None = None
    output_usd_per_million_tokens: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EstimatedInput:
    """A price a plan's figures rest on that is costsim's estimate, not a list price or a quote
    (docs/pricing.md: ``reserved-by-contract``, ``reserved-discount-estimate``,
    ``owned-cost-estimate``): the report marks the plan's figures ``~`` and asks for a quote."""

    phase: str  # "" for plan-level capacity (commitments, owned servers)
    pool: str
    option: str
    flag: str  # the most specific estimate flag (PriceFlag value)
    source: str


def estimated_inputs(prices: Sequence[PriceUsed]) -> tuple[EstimatedInput, ...]:
    """The prices among ``prices`` that rest on an estimate, in their order."""
    out = []
    for price in prices:
        flag = estimate_flag(price.flags)
        if flag is None and price.estimate:  # an estimate the flags do not name: by option
            flag = (PriceFlag.OWNED_COST_ESTIMATE if price.option == PurchaseOption.OWNED
                    else PriceFlag.RESERVED_DISCOUNT_ESTIMATE
                    if price.option.startswith("reserved-") else None)
        if flag is not None:
            out.append(EstimatedInput(phase=price.phase, pool=price.pool, option=price.option,
                                      flag=flag.value, source=price.source))
    return tuple(out)


def estimate_sentence(estimated: Sequence[EstimatedInput]) -> str:
    """What a recommendation says when it rests on estimated prices (docs/pricing.md)."""
    named = "; ".join(dict.fromkeys(f"{e.pool} {e.option}: {e.flag}" for e in estimated))
    return f"it rests on an estimated price: ask for a quote ({named})"


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredUsed:
    """A figure a plan took from a measurement file instead of the model (DESIGN §12): e.g.
    the capacity of an H100 replica of phase ``serve`` for 1000+200-token requests."""

    phase: str
    gpu: str
    figure: str
    basis: str  # measured | predicted-adjusted
    source: str  # the files and rows


class FigureBasis(StrEnum):
    """What a phase's performance figure rests on (and, for ``error``, the error on its
    predicted share; ``NONE``: no predicted share)."""

    PRIOR = "prior"  # costsim's estimate, drawn with its out-of-sample error
    MEASURED = "measured"  # the team's measurement (DESIGN §12): no model error
    MIXED = "mixed"  # a serving fleet part measured, part predicted
    STATED = "stated"  # the scenario's own uncertainty.throughput_error
    NONE = "none"


@dataclass(frozen=True, slots=True, kw_only=True)
class PerformanceBasis:
    """What a phase's performance figure (training throughput, serving capacity, experiment
    jobs' speed) rests on in a plan, and the error the simulator draws on it: costsim's
    ``prior`` (its out-of-sample error), the team's measurement (``measured``: no model
    error), a serving fleet part measured and part predicted (``mixed``: the error on the
    predicted share only) or the scenario's ``stated`` ``uncertainty.throughput_error``
    (:mod:`costsim.sim.performance_basis`)."""

    phase: str
    kind: str  # costsim.domain.phases.PhaseKind value
    basis: FigureBasis  # prior | measured | mixed | stated
    # log-sd of the factor drawn on the predicted figure (0: none drawn; None: the stated
    # distribution is not lognormal, its P10/P90 say its width)
    sigma: float | None
    p10_factor: float  # P10 and P90 of that factor (real / estimated figure); 1: none
    p90_factor: float
    predicted_share: float  # share of the phase's work on predicted figures (mixed: 0 < f < 1)
    error: FigureBasis  # the error on the predicted share: prior | stated | none
    source: str  # where sigma comes from, or the measurement files and rows


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultUsed:
    """A default assumption a run relied on, with its source."""

    key: str
    value: float
    source: str
    estimate: bool
