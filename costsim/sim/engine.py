"""One replication of one plan: the phases as simpy processes on the scenario's calendar.

Each phase waits for the phases it comes ``after``, runs (:mod:`costsim.sim.phase_runs`), and
releases its dependants. When the last phase is done (or the horizon ends), the plan-level costs
are booked from what was measured: every commitment's obligation (per-phase use, idle,
stranded), owned servers (capex, residual, power by use, staff), storage and data transfer.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import weakref
from collections import defaultdict
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from costsim.catalog.storage import storage_price
from costsim.domain.phases import Phase, TrainingPhase
from costsim.domain.uncertainty import Distribution
from costsim.sim.api_serving import run_api_serving
from costsim.sim.commit_pools import book_capacity_block, book_savings_plan
from costsim.sim.context import CountingEnvironment, RunContext
from costsim.sim.demand import DemandHistogram
from costsim.sim.draws import draw_named
from costsim.sim.ledger import Category, Component, Ledger, LedgerBook, LineKey
from costsim.sim.occupancy import FloatArray, capacity_sums
from costsim.sim.phase_runs import run_experiments, run_serving, run_training
from costsim.sim.pools import OwnedBooking, book_commitment, book_owned, owned_booking
from costsim.sim.prepare import ExperimentsPrep, PreparedPlan, ServingPrep, TrainingPrep
from costsim.sim.results import (
    PhaseTimeline,
    PoolUse,
    Replication,
    ServingRecord,
    TrainingRunRecord,
)
from costsim.sim.streams import StreamKey, stream_key
from costsim.sim.transfer import DataMove, book_data_moves
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

# Storage is billed at the plan's cloud, else the cloud of its first rented pool; a plan on
# owned servers only stores at this cloud's object-storage prices (documented fallback).
DEFAULT_STORAGE_CLOUD = "aws"


# A replication's uncertainty values by (block, throughput error, replication root), the
# block kept with them so its id cannot be reused while here: every plan of a scenario shares
# the block (and each plan has an equal error distribution of its own, so that is keyed by
# value), so the plans after the first look the values up in one step.
_UNCERTAINTY: dict[tuple[int, Distribution, StreamKey],
                   tuple[object, dict[str, float]]] = {}
_UNCERTAINTY_KEPT = 2**12


def draw_uncertainty(prep: PreparedPlan, root: np.random.SeedSequence) -> dict[str, float]:
    """One value per uncertainty variable, each from its own named stream (so adding a
    variable never changes the others' draws); drawn once per replication for every plan
    (:func:`costsim.sim.draws.draw_named`)."""
    block, error = prep.scenario.uncertainty, prep.throughput_error
    root_key = stream_key(root, ())
    if root_key is None:
        return _draw_uncertainty(prep, root)
    key = (id(block), error, root_key)
    kept = _UNCERTAINTY.get(key)
    if kept is not None and kept[0] is block:
        return dict(kept[1])
    values = _draw_uncertainty(prep, root)
    if len(_UNCERTAINTY) >= _UNCERTAINTY_KEPT:
        _UNCERTAINTY.pop(next(iter(_UNCERTAINTY)))
    _UNCERTAINTY[key] = (block, dict(values))
    return values


def _draw_uncertainty(prep: PreparedPlan, root: np.random.SeedSequence) -> dict[str, float]:
    block = prep.scenario.uncertainty
    values: dict[str, float] = {}
    for name in block.variables():
        dist: Distribution | None = getattr(block, name)
        if dist is None and name == "throughput_error":
            dist = prep.throughput_error
        if dist is not None:
            values[name] = draw_named(dist, root, "uncertainty", name)
    return values


@dataclass(frozen=True, slots=True, kw_only=True)
class _StorageSegment:
    """A billing segment with what every replication books in it alike."""

    month_index: int
    start_s: float
    end_s: float
    calendar_month_s: float
    dataset_gb_s: float  # the dataset's GB-seconds over the segment
    egress_usd: float | None  # its share of its calendar month's egress bill (None: no bill)


@dataclass(frozen=True, slots=True, kw_only=True)
class _PlanStatics:
    """What a plan's replications share: derived from the prepared plan alone, computed once
    per plan (not once per replication) with the same arithmetic."""

    order: tuple[Phase, ...]  # the scenario's phase order
    data_moves: tuple[DataMove, ...]
    long_phase_gpus: dict[str, tuple[str, ...]]
    storage_key: LineKey
    egress_key: LineKey
    storage_usd_per_gb_month: float
    storage: tuple[_StorageSegment, ...]
    # the segments' columns, for the per-replication arithmetic in arrays (read-only)
    storage_start_s: FloatArray
    storage_end_s: FloatArray
    storage_dataset_gb_s: FloatArray
    storage_month_s: FloatArray
    storage_months: tuple[int, ...]  # each segment's horizon month
    egress_usd: tuple[float | None, ...]  # each segment's egress bill
    owned: tuple[OwnedBooking, ...]  # the prepared plan's owned pools, in its order


# Prepared plans seen lately and their statics, by identity (a PreparedPlan is not hashable);
# the plan is kept with them, so its id cannot be reused while it is here.
_STATICS: dict[int, tuple[PreparedPlan, _PlanStatics]] = {}
_STATICS_KEPT = 64


def _statics(prep: PreparedPlan) -> _PlanStatics:
    kept = _STATICS.get(id(prep))
    if kept is not None and kept[0] is prep:
        return kept[1]
    statics = _plan_statics(prep)
    if len(_STATICS) >= _STATICS_KEPT:
        _STATICS.pop(next(iter(_STATICS)))
    _STATICS[id(prep)] = (prep, statics)
    return statics


def _plan_statics(prep: PreparedPlan) -> _PlanStatics:
    data = prep.scenario.data
    price = storage_price(storage_cloud(prep))
    pool = f"{price.cloud} object storage"
    segments = prep.scenario.calendar.billing_segments()
    covered_s: dict[str, float] = defaultdict(float)  # horizon seconds in each calendar month
    for seg in segments:
        covered_s[seg.calendar_month] += seg.end_s - seg.start_s
    storage = []
    for seg in segments:
        egress_usd = None
        if data.egress_gb_per_month > 0:
            covered = covered_s[seg.calendar_month]
            month_gb = data.egress_gb_per_month * covered / seg.calendar_month_s
            month_usd = price.egress_usd(month_gb)
            if month_usd > 0:  # the calendar month's bill, split over its segments by time
                egress_usd = month_usd * (seg.end_s - seg.start_s) / covered
        storage.append(_StorageSegment(
            month_index=seg.month_index, start_s=seg.start_s, end_s=seg.end_s,
            calendar_month_s=seg.calendar_month_s,
            dataset_gb_s=data.dataset_gb * (seg.end_s - seg.start_s), egress_usd=egress_usd))
    return _PlanStatics(
        order=prep.scenario.phase_order(), data_moves=prep.data_moves(),
        long_phase_gpus=long_phase_gpus(prep),
        storage_key=LineKey(phase="", pool=pool, gpu="", option="",
                            category=Category.STORAGE, component=Component.STORAGE),
        egress_key=LineKey(phase="", pool=pool, gpu="", option="",
                           category=Category.DATA_TRANSFER, component=Component.NETWORK),
        storage_usd_per_gb_month=price.object_storage_usd_per_gb_month,
        storage=tuple(storage),
        storage_start_s=_frozen([seg.start_s for seg in storage]),
        storage_end_s=_frozen([seg.end_s for seg in storage]),
        storage_dataset_gb_s=_frozen([seg.dataset_gb_s for seg in storage]),
        storage_month_s=_frozen([seg.calendar_month_s for seg in storage]),
        storage_months=tuple(seg.month_index for seg in storage),
        egress_usd=tuple(seg.egress_usd for seg in storage),
        owned=tuple(owned_booking(pool, prep.scenario.calendar) for pool in prep.owned))


def _frozen(values: list[float]) -> FloatArray:
    array = np.array(values, dtype=np.float64)
    array.flags.writeable = False
    return array


def simulate_replication(prep: PreparedPlan, root: np.random.SeedSequence,
                         index: int) -> Replication:
    """Simulate ``prep`` once on the random streams under ``root``."""
    if not prep.feasible:
        raise ValueError(f"plan '{prep.plan.name}' is infeasible: {prep.infeasible_reasons}")
    calendar = prep.scenario.calendar
    statics = _statics(prep)
    env = CountingEnvironment()
    ctx = RunContext(env=env, prep=prep, root=root, book=LedgerBook(calendar.month_labels()),
                     draws=draw_uncertainty(prep, root), keep_fleet=index == 0)
    done = {name: env.event() for name in prep.phases}
    for phase in statics.order:
        env.process(_phase_process(ctx, phase.name, done))
    env.run(until=ctx.horizon_s)
    _book_plan_costs(ctx, statics)
    # commitments and capacity blocks: GPUs paid whether used or not
    reserved = [p for p in ctx.bounded if not p.owned] + [b for _, b in ctx.blocks]
    months = ctx.month_spans
    # capacity sums memoized by the (read-only) array, use sums kept by the pool: the same
    # floats added in the same order
    committed_h = sum(capacity_sums(p.capacity, months)[0] for p in reserved)
    used_h = sum(p.used_total() for p in reserved)
    owned_h = sum(capacity_sums(p.capacity, months)[0] for p in ctx.bounded if p.owned)
    ledger = ctx.book.close()
    phase_cost = _phase_costs(ctx, ledger)
    training = tuple(_with_cost(t, phase_cost.get(t.phase, 0.0)) for t in ctx.training)
    serving = tuple(_with_cost(s, phase_cost.get(s.phase, 0.0)) for s in ctx.serving)
    if reserved:
        capacities = [capacity_sums(p.capacity, months)[1] for p in reserved]
        uses = [p.used_by_month(months) for p in reserved]
        by_month: tuple[tuple[float, float], ...] = tuple(
            (sum(c[m] for c in capacities), sum(u[m] for u in uses))
            for m in range(len(months)))
    else:
        by_month = ((0, 0),) * len(months)  # what the sums of nothing give
    windows = _demand_windows(ctx, statics.long_phase_gpus)
    demand = [_demand_histograms(ctx, gpu, hourly, windows.get(gpu))
              for gpu, hourly in sorted(ctx.demand.items())]
    return Replication(
        index=index, ledger=ledger,
        timelines=tuple(ctx.timelines[p.name] for p in statics.order),
        training=training, serving=serving,
        queue_waits=ctx.waits_histogram(), gpu_hours_used=ctx.used_gpu_hours,
        gpu_hours_paid=ctx.rental_gpu_hours + committed_h + owned_h,
        reserved_gpu_hours_committed=committed_h, reserved_gpu_hours_used=used_h,
        reserved_by_month=by_month, pools=_pool_uses(ctx),
        draws=tuple(sorted(ctx.draws.items())), events=env.events_processed,
        phase_costs=tuple(sorted(phase_cost.items())),
        gpu_demand=tuple(whole for whole, _ in demand),
        gpu_demand_by_hour=tuple((gpu, tuple(hourly.tolist()))
                                 for gpu, hourly in sorted(ctx.demand.items()))
        if ctx.keep_fleet else (),
        gpu_demand_in_phases=tuple(part for _, part in demand if part is not None))


_Costed = TypeVar("_Costed", TrainingRunRecord, ServingRecord)
# each record type's fields and their slots' setters (the two record types)
_RECORD_SETTERS: dict[type, tuple[tuple[str, Callable[[Any, Any], None]], ...]] = {}


def _with_cost(record: _Costed, cost_usd: float) -> _Costed:
    """``dataclasses.replace(record, cost_usd=cost_usd)`` for a frozen slotted record without
    ``__post_init__``: a new object with every field copied through its slot and the cost set
    (an equal object; ``replace`` looks the fields up and builds keywords on every call)."""
    cls = type(record)
    setters = _RECORD_SETTERS.get(cls)
    if setters is None:
        setters = _RECORD_SETTERS[cls] = tuple(
            (f.name, cls.__dict__[f.name].__set__) for f in dataclasses.fields(cls))
    new: _Costed = object.__new__(cls)
    for name, set_field in setters:
        set_field(new, cost_usd if name == "cost_usd" else getattr(record, name))
    return new


# Demand histograms of a GPU type whose demand is one memoized, shared part (read-only: elastic
# jobs or a rented interval every plan that runs the phase alike books, :mod:`costsim.sim.
# elastic`, :func:`costsim.sim.context.interval_booking`), by that part's identity, its first
# hour and the window: such a demand is zeros plus that part, so its histograms are the same
# in every plan. The part is held weakly, and its entry dropped when it dies (so a dead part's
# reused id never finds it).
_HISTOGRAMS: dict[tuple[str, int, int, int, tuple[int, int] | None],
                  tuple[weakref.ref[FloatArray],
                        tuple[DemandHistogram, DemandHistogram | None]]] = {}
_HISTOGRAMS_KEPT = 2**11


def _demand_histograms(ctx: RunContext, gpu: str, hourly: FloatArray,
                       window: tuple[int, int] | None
                       ) -> tuple[DemandHistogram, DemandHistogram | None]:
    """:meth:`DemandHistogram.from_hourly_and_window` of the replication's demand for
    ``gpu`` (memoized where that demand is one shared part)."""
    sole = ctx.demand_sole.get(gpu)
    if sole is None or sole[1].flags.writeable:
        return DemandHistogram.from_hourly_and_window(gpu, hourly, window,
                                                      ctx.demand_span.get(gpu, (0, 0)))
    h0, part = sole
    key = (gpu, id(part), h0, ctx.hours, window)
    kept = _HISTOGRAMS.get(key)
    if kept is not None and kept[0]() is part:
        return kept[1]
    result = DemandHistogram.from_hourly_and_window(gpu, hourly, window,
                                                    ctx.demand_span.get(gpu, (0, 0)))
    if len(_HISTOGRAMS) >= _HISTOGRAMS_KEPT:
        _HISTOGRAMS.pop(next(iter(_HISTOGRAMS)))
    _HISTOGRAMS[key] = (weakref.ref(part, functools.partial(_forget_histograms, key)), result)
    return result


def _forget_histograms(key: tuple[str, int, int, int, tuple[int, int] | None],
                       ref: weakref.ref[FloatArray]) -> None:
    """Drop the histograms of a part no cache holds any more (so they hold no memory)."""
    kept = _HISTOGRAMS.get(key)
    if kept is not None and kept[0] is ref:
        del _HISTOGRAMS[key]


def long_phase_gpus(prep: PreparedPlan) -> dict[str, tuple[str, ...]]:
    """Each GPU type the plan's experiments and serving phases use, and those phases (the
    phases a commitment sized on simulated demand would serve, docs/optimizer.md)."""
    out: dict[str, list[str]] = {}
    for name, phase_prep in prep.phases.items():
        if isinstance(phase_prep, TrainingPrep):
            continue
        sources = ([e.source for e in phase_prep.entries] if isinstance(phase_prep, ServingPrep)
                   else [phase_prep.source])
        for gpu in sorted({source.gpu for source in sources}):
            out.setdefault(gpu, []).append(name)
    return {gpu: tuple(names) for gpu, names in out.items()}


def _demand_windows(ctx: RunContext, gpus: dict[str, tuple[str, ...]]
                    ) -> dict[str, tuple[int, int]]:
    """Per GPU type, the hours of this replication's window of the experiments and serving
    phases using it (first start to last end, the horizon's end for a cut phase): the window
    a commitment bought when those phases start covers, placed where they ran (its demand
    there is the replication's ``gpu_demand_in_phases``)."""
    out = {}
    for gpu, phases in sorted(gpus.items()):
        lines = [ctx.timelines[p] for p in phases if ctx.timelines[p].start_s is not None]
        if gpu not in ctx.demand or not lines:
            continue
        start_s = min(t.start_s or 0.0 for t in lines)
        end_s = min(ctx.horizon_s, max(ctx.horizon_s if t.end_s is None else t.end_s
                                       for t in lines))
        h0 = int(start_s // SECONDS_PER_HOUR)
        h1 = max(h0 + 1, math.ceil(end_s / SECONDS_PER_HOUR - 1e-9))
        out[gpu] = (h0, h1)
    return out


def _phase_costs(ctx: RunContext, ledger: Ledger) -> dict[str, float]:
    """Each phase's cost: its own ledger lines, plus its share of the owned servers it ran on.

    Owned hardware is booked plan-wide (capex, residual, power, staff). A phase's share is that
    cost per in-service GPU-hour × the GPU-hours it used, the same basis as a commitment's use
    (r_c × hours used): what nothing used stays with the plan, as a commitment's idle hours do.
    """
    costs = ledger.by_phase()
    for i, owned in enumerate(ctx.owned):
        tracked = next(p for p in ctx.bounded if p.key == f"owned:{i}")
        in_service_h = capacity_sums(tracked.capacity, ctx.month_spans)[0]
        if in_service_h <= 0:
            continue
        pool_cost = sum(line.amount_usd for line in ledger.lines
                        if line.key.phase == "" and line.key.pool == owned.name)
        for phase, use in tracked.by_phase.items():
            share = float(use.sum()) / in_service_h
            costs[phase] = round(costs.get(phase, 0.0) + pool_cost * share, 2)
    return costs


def _pool_uses(ctx: RunContext) -> tuple[PoolUse, ...]:
    """Paid and used GPU-hours of every pool: bounded pools from their hourly arrays, rented
    ones from the ledger's GPU-hours and what the phases reported using on them."""
    uses = []
    for pool in ctx.bounded:
        index = int(pool.key.split(":")[1])
        if pool.owned:
            name, option = ctx.owned[index].name, "owned"
        else:
            name, option = ctx.commitments[index].name, ctx.commitments[index].option.value
        uses.append(PoolUse(pool=name, gpu=pool.gpu, option=option,
                            paid_gpu_hours=capacity_sums(pool.capacity, ctx.month_spans)[0],
                            used_gpu_hours=pool.used_total()))
    for block, tracked in ctx.blocks:
        uses.append(PoolUse(pool=block.name, gpu=block.gpu, option=block.block.option,
                            paid_gpu_hours=capacity_sums(tracked.capacity, ctx.month_spans)[0],
                            used_gpu_hours=tracked.used_total()))
    for (name, gpu, option), paid in sorted(ctx.rental_paid.items()):
        uses.append(PoolUse(pool=name, gpu=gpu, option=option, paid_gpu_hours=paid,
                            used_gpu_hours=min(paid, ctx.rental_used.get((name, gpu, option),
                                                                           paid))))
    return tuple(uses)


def _phase_process(ctx: RunContext, name: str,
                   done: dict[str, Any]) -> Generator[Any, Any, None]:
    env = ctx.env
    phase = ctx.prep.scenario.phase(name)
    deps = [done[d] for d in phase.after]
    if deps:
        yield env.all_of(deps)
    deadline = (phase.deadline_days * SECONDS_PER_DAY
                if isinstance(phase, TrainingPhase) and phase.deadline_days is not None
                else None)
    start = env.now
    ctx.timelines[name] = PhaseTimeline(phase=name, kind=phase.kind, start_s=start, end_s=None,
                                        deadline_s=deadline)
    prep = ctx.prep.phases[name]
    if isinstance(prep, TrainingPrep):
        end = yield from run_training(ctx, prep)
    elif isinstance(prep, ExperimentsPrep):
        end = yield from run_experiments(ctx, prep)
    elif prep.api is not None:  # a pay-per-token API serves the phase
        end = yield from run_api_serving(ctx, prep)
    else:
        end = yield from run_serving(ctx, prep)
    ctx.timelines[name] = PhaseTimeline(phase=name, kind=phase.kind, start_s=start,
                                        end_s=end if end <= ctx.horizon_s else None,
                                        deadline_s=deadline)
    done[name].succeed()


def _book_plan_costs(ctx: RunContext, statics: _PlanStatics) -> None:
    calendar = ctx.prep.scenario.calendar
    for hold, from_s in ctx.open_holds:  # queues still draining: fleets held to the end
        if from_s < ctx.horizon_s:
            hold(from_s, ctx.horizon_s)
    for i, pool in enumerate(ctx.commitments):
        tracked = next(p for p in ctx.bounded if p.key == f"commitment:{i}")
        used = {phase: tracked.used_gpu_s_by_month(ctx.month_spans, phase)
                for phase in tracked.by_phase}
        book_commitment(pool, used, calendar, ctx.book)
    for block, tracked in ctx.blocks:
        book_capacity_block(block, {phase: tracked.used_gpu_s_by_month(ctx.month_spans, phase)
                                    for phase in tracked.by_phase}, calendar, ctx.book)
    for plan in ctx.prep.savings_plans:  # family plans first (prepare.py orders them)
        book_savings_plan(plan, ctx.on_demand_hourly, ctx.month_of_hour, calendar, ctx.book)
    for i, owned in enumerate(ctx.owned):
        tracked = next(p for p in ctx.bounded if p.key == f"owned:{i}")
        book_owned(owned, tracked.used_gpu_s_by_month(ctx.month_spans), calendar, ctx.book,
                   statics.owned[i] if i < len(statics.owned) else None)
    for name in ctx.prep.phases:
        if name not in ctx.timelines:  # never started: waiting on a phase that never ended
            phase = ctx.prep.scenario.phase(name)
            ctx.timelines[name] = PhaseTimeline(phase=name, kind=phase.kind, start_s=None,
                                                end_s=None)
    _book_storage(ctx, statics)
    _book_data_moves(ctx, statics)


def _book_data_moves(ctx: RunContext, statics: _PlanStatics) -> None:
    """Copies of the data between the clouds the phases run on (costsim.sim.transfer)."""
    data = ctx.prep.scenario.data
    book_data_moves(statics.data_moves,
                    {name: t.start_s for name, t in ctx.timelines.items()},
                    dataset_gb=data.dataset_gb, checkpoints_retained=data.checkpoints_retained,
                    checkpoints=ctx.checkpoint_bytes, calendar=ctx.prep.scenario.calendar,
                    book=ctx.book)


def storage_cloud(prep: PreparedPlan) -> str:
    """Where the plan keeps its data: its cloud, else its first rented or reserved pool's."""
    if prep.plan.cloud:
        return prep.plan.cloud
    for phase_prep in prep.phases.values():
        sources = ([e.source for e in phase_prep.entries] if isinstance(phase_prep, ServingPrep)
                   else [phase_prep.source])
        for source in sources:
            pool = source.price_pool
            if pool is not None:
                return pool.offering.cloud
    return DEFAULT_STORAGE_CLOUD


def _book_storage(ctx: RunContext, statics: _PlanStatics) -> None:
    """Storage and egress per calendar month, as clouds invoice them (docs/simulator.md
    "Calendar and billing"): a GB kept a whole month is one GB-month, a partial month the hours
    held ÷ that month's hours; a month's egress is the scenario's monthly GB (pro rata in a
    month the horizon only partly covers) less that month's free allowance (the same in every
    replication: :func:`_plan_statics`)."""
    retained = ctx.prep.scenario.data.checkpoints_retained
    # each segment's GB-seconds: the dataset's, then each checkpoint kept from its time on,
    # added in that order (elementwise in arrays: the same float operations as segment by
    # segment)
    gb_s = statics.storage_dataset_gb_s
    for end_s, checkpoint_bytes in ctx.checkpoint_bytes:
        gb = retained * checkpoint_bytes / 1e9
        gb_s = gb_s + gb * np.maximum(0.0, statics.storage_end_s
                                      - np.maximum(statics.storage_start_s, end_s))
    # GB-seconds -> GB-months of this calendar month (none where nothing is kept)
    storage_usd = (statics.storage_usd_per_gb_month * gb_s / statics.storage_month_s).tolist()
    ctx.book.spend_segments(
        statics.storage_key, [usd if held else None
                              for usd, held in zip(storage_usd, (gb_s > 0).tolist(), strict=True)],
        statics.egress_key, statics.egress_usd, statics.storage_months)
