"""A plan's replications folded into what its summary needs, so a run holds a few hundred bytes
per replication instead of every :class:`~costsim.sim.results.Replication` (issue 20 item 4:
100,000 flagship replications within 1 GB).

Replications are added in index order (:class:`PlanTally` refuses any other order), and every
figure is reduced exactly as :func:`costsim.sim.montecarlo.summarize` reduced the list of
replications before: the summary is the same bit for bit however the replications were
simulated (in one process, in blocks, on workers). What is kept, and why that is exact:

* per replication, the scalars a percentile or a ``numpy.mean`` (pairwise summation) needs:
  cost, NPV, finish, training GPU-hours, tokens, phase costs, GPU-hours used and paid, the
  reserved hours committed and used, each month's cash and reserved hours (a column that is
  0 in every replication so far is not stored: its mean is exactly 0);
* running sums where the old summary added in replication order (``sum``, a ledger line's
  GPU-hours, a pool's hours, a demand histogram's GPU-hours — ``numpy.bincount`` adds weights
  in input order, so pooling the running histogram with the next ones adds the same floats in
  the same order) and integer sums (cents, counts), which no order changes;
* a serving phase's daily fleet peaks as counts of (day, peak) pairs: a percentile depends only
  on the multiset of its values, so each day's P10/P50/P90 is taken on the column rebuilt from
  the counts (the replications that did not serve that day at 0 replicas);
* replication 0 whole (the report's timelines and hour-by-hour series come from it).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from costsim.sim.demand import DemandHistogram
from costsim.sim.ledger import LedgerSums
from costsim.sim.results import (
    Band,
    FleetBands,
    FleetProfile,
    Replication,
    daily_peak_array,
    percentile_bands,
)
from costsim.sim.waits import WaitHistogram

FloatArray = NDArray[np.float64]

# histograms waiting to be pooled into the running one: pooling one at a time would sort the
# running levels once per replication
_POOL_EVERY = 64


class Column:
    """One float per replication, allocated at the first value that is not +0.0 (an absent
    column reads as zeros: the same values, the same means and percentiles)."""

    __slots__ = ("_n", "_values")

    def __init__(self, n: int) -> None:
        self._n = n
        self._values: FloatArray | None = None

    def set(self, index: int, value: float) -> None:
        if self._values is None:
            if value == 0.0 and math.copysign(1.0, value) > 0:
                return
            self._values = np.zeros(self._n)
        self._values[index] = value

    def values(self, count: int) -> FloatArray:
        """The first ``count`` values."""
        if self._values is None:
            return np.zeros(count)
        return self._values[:count]


class Rows:
    """A row of floats per replication (one per month), allocated at the first row that is not
    all +0.0, like :class:`Column`."""

    __slots__ = ("_n", "_values", "_width")

    def __init__(self, n: int, width: int) -> None:
        self._n = n
        self._width = width
        self._values: FloatArray | None = None

    def set(self, index: int, row: Sequence[float]) -> None:
        if self._values is None:
            # all +0.0 (a NaN is truthy; −0.0 has its sign bit, so its bytes are not zero):
            # nothing to store yet
            if not any(row) and array("d", row).tobytes() == bytes(8 * len(row)):
                return
            self._values = np.zeros((self._n, self._width))
        self._values[index] = row

    def values(self, count: int) -> FloatArray:
        """The first ``count`` rows (count × width)."""
        if self._values is None:
            return np.zeros((count, self._width))
        return self._values[:count]

    def column(self, count: int, j: int) -> FloatArray:
        """Column ``j`` of the first ``count`` rows, contiguous (a mean of it sums as the mean
        of a list of the same values does)."""
        return np.ascontiguousarray(self.values(count)[:, j])


class _Histograms:
    """Demand histograms of one GPU type pooled in replication order, in batches."""

    __slots__ = ("parts", "pending", "pooled")

    def __init__(self) -> None:
        self.pending: list[DemandHistogram] = []
        self.pooled: DemandHistogram | None = None
        self.parts = 0  # replications that had a histogram of this type

    def add(self, hist: DemandHistogram) -> None:
        self.pending.append(hist)
        self.parts += 1
        if len(self.pending) >= _POOL_EVERY:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            head = [] if self.pooled is None else [self.pooled]
            self.pooled = DemandHistogram.pooled([*head, *self.pending])
            self.pending = []

    def total(self, extra: list[DemandHistogram]) -> DemandHistogram:
        self.pending.extend(extra)
        self.flush()
        assert self.pooled is not None
        return self.pooled


class FleetTally:
    """One serving phase's fleet profiles over the replications, reduced to what
    :class:`FleetBands` takes percentiles of."""

    __slots__ = ("_clock", "_first", "_last", "_peaks", "_ran")

    def __init__(self, n: int) -> None:
        self._clock = np.zeros((n, 24))  # by_clock_hour of the replications that served
        self._ran = 0
        self._peaks = np.zeros((0, 1), dtype=np.int64)  # [day, peak] -> replications
        self._first: int | None = None
        self._last = 0

    def add(self, profile: FleetProfile | None) -> None:
        if profile is None or not profile.daily_peak:
            return
        self._clock[self._ran] = profile.by_clock_hour
        self._ran += 1
        peaks, highest = daily_peak_array(profile)
        days = np.arange(profile.first_day, profile.first_day + peaks.size)
        rows, cols = profile.first_day + peaks.size, highest + 1
        if rows > self._peaks.shape[0] or cols > self._peaks.shape[1]:
            grown = np.zeros((max(rows, self._peaks.shape[0]), max(cols, self._peaks.shape[1])),
                             dtype=np.int64)
            grown[:self._peaks.shape[0], :self._peaks.shape[1]] = self._peaks
            self._peaks = grown
        # one peak a day: no repeated (day, peak) pair; indexed in the flat array (a view:
        # _peaks is always a C-contiguous array np.zeros made)
        self._peaks.reshape(-1)[days * self._peaks.shape[1] + peaks] += 1
        self._first = (profile.first_day if self._first is None
                       else min(self._first, profile.first_day))
        self._last = max(self._last, profile.first_day + peaks.size)

    def bands(self, phase: str, replications: int) -> FleetBands | None:
        """:meth:`FleetBands.of` of the profiles added, ``replications`` of them in all."""
        if self._first is None:
            return None
        clock = self._clock[:self._ran]
        levels = np.arange(self._peaks.shape[1], dtype=np.float64)
        peak_bands: list[Band] = []
        # the days' columns rebuilt a block at a time (at most ~4M floats), each block's bands
        # in one percentile call as FleetBands.of takes them
        step = max(1, (1 << 22) // max(1, replications))
        for a in range(self._first, self._last, step):
            b = min(self._last, a + step)
            # each day's column: its peaks' levels repeated by their counts, the replications
            # that did not serve that day at level 0 (one repeat for the block's days: each
            # day's counts add up to the replications, so the days' columns follow each other)
            counts = self._peaks[a:b].copy()
            counts[:, 0] += replications - counts.sum(axis=1)
            columns = np.repeat(np.tile(levels, b - a), counts.ravel())
            block = np.ascontiguousarray(columns.reshape(b - a, replications).T)
            peak_bands.extend(percentile_bands(block))
        return FleetBands(phase=phase, first_day=self._first, daily_peak=tuple(peak_bands),
                          by_clock_hour=percentile_bands(clock))


@dataclass(slots=True)
class _PhaseLines:
    never: int = 0  # replications in which the phase never started
    cut: int = 0  # started but unfinished at the horizon's end
    # a training phase that started but whose run never did (costsim.sim.unrun)
    unrun: int = 0


# the per-replication columns every replication sets, in :meth:`PlanTally.add`'s order
_COLUMNS = ("cost", "npv", "finish", "missed", "training_gpu_hours", "tokens", "output_tokens",
            "training_cost", "serving_cost", "gpu_hours_used", "gpu_hours_paid",
            "reserved_committed", "reserved_used")


@dataclass(slots=True)
class PlanTally:
    """The running reduction of one plan's replications (see the module docstring)."""

    replications: int  # how many will be added
    first: Replication | None = None
    count: int = 0
    columns: dict[str, Column] = field(default_factory=dict)
    months: int = 0
    cash: Rows | None = None  # each month's cash
    reserved_committed: Rows | None = None  # each month's reserved GPU-hours
    reserved_used: Rows | None = None
    # ledger: per line, GPU-hours in replication order and integer cents; per month and view,
    # integer cents
    ledger: LedgerSums = field(default_factory=LedgerSums)
    serving_requests: float = 0
    served_within_slo: float = 0
    events: int = 0
    pools: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    waits: list[WaitHistogram] = field(default_factory=list)
    demand: dict[str, _Histograms] = field(default_factory=dict)
    demand_hours: int | None = None  # horizon hours of the first demand histogram
    demand_in_phases: dict[str, _Histograms] = field(default_factory=dict)
    fleets: dict[str, FleetTally] = field(default_factory=dict)
    phases: list[_PhaseLines] = field(default_factory=list)
    block_late: dict[str, list[float]] = field(default_factory=dict)
    block_used: set[str] = field(default_factory=set)
    api_served: dict[str, tuple[array[float], array[float]]] = field(default_factory=dict)
    # how many replications cut each set of phases (indices in phase order): the horizon
    # cut them (not started, or not ended); costsim.sim.unrun.cut_replications
    cut_patterns: dict[tuple[int, ...], int] = field(default_factory=dict)
    _columns: tuple[Column, ...] | None = None  # the _COLUMNS, once made

    def column(self, name: str) -> Column:
        found = self.columns.get(name)
        if found is None:
            found = self.columns[name] = Column(self.replications)
        return found

    def values(self, name: str) -> FloatArray:
        """A per-replication column's values, in replication order."""
        return self.column(name).values(self.count)

    def add(self, rep: Replication, *, discount: Sequence[float], training: AbstractSet[str],
            serving: AbstractSet[str]) -> None:
        """Fold in the next replication (its index must be :attr:`count`)."""
        if rep.index != self.count or self.count >= self.replications:
            raise ValueError(f"replication {rep.index} added out of order (next: {self.count} "
                             f"of {self.replications})")
        i = self.count
        if self.first is None:
            self.first = rep
            self.months = len(rep.ledger.months)
            self.cash = Rows(self.replications, self.months)
            width = len(rep.reserved_by_month)
            self.reserved_committed = Rows(self.replications, width)
            self.reserved_used = Rows(self.replications, width)
            self.phases = [_PhaseLines() for _ in rep.timelines]
        cost_cents = self.ledger.add(rep.ledger)
        months, serving_records, timelines = rep.ledger.months, rep.serving, rep.timelines
        cash = [row.cash_usd for row in months]
        finish = max((t.end_s if t.end_s is not None else math.inf) for t in timelines)
        phase_costs = rep.phase_costs
        # the columns in _COLUMNS' order
        values = (
            cost_cents / 100,  # rep.cost_usd: the lines' cents over 100
            sum(c / discount[m] for m, c in enumerate(cash)),
            finish,
            float(any(t.deadline_met is False for t in timelines)),
            sum(t.gpu_hours for t in rep.training),
            sum(s.tokens_served for s in serving_records),
            sum(s.output_tokens_served for s in serving_records),
            sum(c for phase, c in phase_costs if phase in training),
            sum(c for phase, c in phase_costs if phase in serving),
            rep.gpu_hours_used, rep.gpu_hours_paid, rep.reserved_gpu_hours_committed,
            rep.reserved_gpu_hours_used)
        if self._columns is None:
            self._columns = tuple(self.column(name) for name in _COLUMNS)
        for column, value in zip(self._columns, values, strict=True):
            column.set(i, value)
        assert self.cash is not None
        assert self.reserved_committed is not None
        assert self.reserved_used is not None
        self.reserved_committed.set(i, [c for c, _ in rep.reserved_by_month])
        self.reserved_used.set(i, [u for _, u in rep.reserved_by_month])
        self.cash.set(i, cash)
        fleets = self.fleets
        for s in serving_records:
            self.serving_requests += s.requests
            self.served_within_slo += s.served_within_slo
            if s.phase not in fleets:
                fleets[s.phase] = FleetTally(self.replications)
        self.events += rep.events
        pools, block_used = self.pools, self.block_used
        for use in rep.pools:
            acc = pools.get((use.pool, use.gpu, use.option))
            if acc is None:
                acc = pools[use.pool, use.gpu, use.option] = [0.0, 0.0]
            acc[0] += use.paid_gpu_hours
            acc[1] += use.used_gpu_hours
            if use.used_gpu_hours > 0:
                block_used.add(use.pool)
        self.waits.append(rep.queue_waits)
        if len(self.waits) >= _POOL_EVERY:
            self.waits = [WaitHistogram.pooled(self.waits)]
        for hist in rep.gpu_demand:
            if self.demand_hours is None:
                self.demand_hours = round(hist.hours_per_replication)
            found = self.demand.get(hist.gpu)
            if found is None:
                found = self.demand[hist.gpu] = _Histograms()
            found.add(hist)
        for hist in rep.gpu_demand_in_phases:
            found = self.demand_in_phases.get(hist.gpu)
            if found is None:
                found = self.demand_in_phases[hist.gpu] = _Histograms()
            found.add(hist)
        if len(serving_records) == 1 and len(fleets) == 1:  # the usual: one serving phase
            (phase, fleet), = fleets.items()
            fleet.add(serving_records[0].fleet if serving_records[0].phase == phase else None)
        else:
            for phase, fleet in fleets.items():
                fleet.add(next((s.fleet for s in serving_records if s.phase == phase), None))
        trained = {run.phase for run in rep.training} if rep.training else set()
        lines = self.phases
        cut = []
        for k, t in enumerate(timelines):
            started = t.start_s is not None
            if not started:
                lines[k].never += 1
                cut.append(k)
            elif t.end_s is None:
                lines[k].cut += 1
                cut.append(k)
            if started and t.phase not in trained:
                lines[k].unrun += 1
        if cut:
            pattern = tuple(cut)
            self.cut_patterns[pattern] = self.cut_patterns.get(pattern, 0) + 1
        for run in rep.training:
            if run.block_overrun_s > 0:
                self.block_late.setdefault(run.phase, []).append(run.block_overrun_s)
        for s in serving_records:
            api = self.api_served.get(s.phase)
            if api is None:
                api = self.api_served[s.phase] = (array("d"), array("d"))
            api[0].append(s.tokens_served)
            api[1].append(s.cost_usd)
        self.count += 1

    def month_labels(self) -> list[str]:
        assert self.first is not None
        return [row.month for row in self.first.ledger.months]

    def pooled_waits(self) -> WaitHistogram:
        return WaitHistogram.pooled(self.waits)

    def pooled_demand(self) -> tuple[DemandHistogram, ...]:
        """Each GPU type's demand over the replications; a replication that did not use the
        type counts its hours at zero demand (added last, as one part)."""
        out = []
        for gpu, hists in sorted(self.demand.items()):
            idle = self.count - hists.parts
            extra = ([DemandHistogram(gpu=gpu, replications=idle, levels=(0,),
                                      hours=((self.demand_hours or 0) * idle,),
                                      gpu_hours=(0.0,))] if idle else [])
            out.append(hists.total(extra))
        return tuple(out)

    def pooled_demand_in_phases(self) -> tuple[DemandHistogram, ...]:
        return tuple(h.total([]) for _, h in sorted(self.demand_in_phases.items()))

    def api_sums(self) -> dict[str, tuple[float, float]]:
        """Per serving phase, the tokens served and the phase's cost summed exactly
        (``math.fsum``: no order changes it) over the replications."""
        return {phase: (math.fsum(tokens), math.fsum(cost))
                for phase, (tokens, cost) in self.api_served.items()}
