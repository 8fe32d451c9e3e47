"""Monte Carlo over a plan: N replications on independent, named streams, and their summary.

Replication r of every plan draws from ``SeedSequence(seed).spawn(N)[r]`` (docs/simulator.md
§4), so plans are compared on the same futures, and the result is the same bit for bit whether the
replications run in one process or several. Engine results that do not depend on the draw are
prepared once per plan (:func:`costsim.sim.prepare.prepare_plan`). Progress is reported through a
callback; the engine never prints.
"""

from __future__ import annotations

import signal
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from costsim.domain.phases import PhaseKind
from costsim.domain.scenario import Scenario
from costsim.sim.api_serving import ApiComparison, api_comparisons_of, api_warnings
from costsim.sim.demand import DemandHistogram
from costsim.sim.engine import simulate_replication
from costsim.sim.ledger import Category, Ledger
from costsim.sim.performance_basis import performance_bases
from costsim.sim.prepare import PreparedPlan, TrainingPrep, prepare_plan
from costsim.sim.results import (
    EstimatedInput,
    FleetBands,
    MeasuredUsed,
    PerformanceBasis,
    PhaseTimeline,
    PoolUse,
    PriceUsed,
    Replication,
    TrainingRate,
    estimated_inputs,
)
from costsim.sim.streams import replication_seeds
from costsim.sim.tally import PlanTally
from costsim.sim.unrun import cut_replications, unrun_training

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Stats:
    """Mean and P10/P50/P90 of a quantity over the replications."""

    mean: float
    p10: float
    p50: float
    p90: float

    @classmethod
    def of(cls, values: Sequence[float] | np.ndarray) -> Stats:
        """Summary of ``values`` (linear-interpolated percentiles)."""
        array = np.asarray(values, dtype=np.float64)
        p10, p50, p90 = np.percentile(array, [10, 50, 90])
        return cls(mean=float(array.mean()), p10=float(p10), p50=float(p50), p90=float(p90))


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanMetrics:
    """Utilization and service metrics, averaged over the replications."""

    gpu_hours_used: float
    gpu_hours_paid: float
    reserved_utilization: float | None  # None: the plan reserves nothing
    stranded_commitment_usd: float
    # from the pooled waits histogram (costsim.sim.waits: within 0.39 %, 0 exact)
    queue_wait_p95_s: float | None  # None: no experiment queue
    slo_attainment: float | None  # None: no serving phase


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanResult:
    """What ``run`` reports for one plan."""

    name: str
    feasible: bool
    infeasible_reasons: tuple[str, ...]
    replications: int
    cost_usd: Stats | None = None
    cash_usd_mean: float | None = None
    npv_usd_mean: float | None = None
    finish_s: Stats | None = None  # when the last phase ended
    p_over_budget: float | None = None
    p_deadline_missed: float | None = None
    cost_per_training_run_usd: float | None = None
    training_gpu_hours: Stats | None = None
    cost_per_million_tokens_usd: float | None = None
    cost_per_million_output_tokens_usd: float | None = None
    ledger: Ledger | None = None  # mean ledger: lines add up to cost_usd.mean
    prices: tuple[PriceUsed, ...] = ()  # every price relied on, with source and date
    measured: tuple[MeasuredUsed, ...] = ()  # figures taken from measurement files
    metrics: PlanMetrics | None = None
    pools: tuple[PoolUse, ...] = ()  # mean paid and used GPU-hours per pool
    reserved_by_month: tuple[tuple[str, float, float], ...] = ()  # (month, committed, used) h
    cumulative_cash_usd_by_month: tuple[tuple[str, Stats], ...] = ()  # cash paid to month's end
    timelines: tuple[PhaseTimeline, ...] = ()  # replication 0, for charts
    serving_replicas_by_hour: tuple[tuple[str, tuple[int, ...]], ...] = ()  # replication 0
    serving_fleet: tuple[FleetBands, ...] = ()  # per serving phase, over every replication
    # GPU demand per GPU type pooled over the replications (reservation sizing), and hour by
    # hour in replication 0 (costsim.sim.demand)
    gpu_demand: tuple[DemandHistogram, ...] = ()
    gpu_demand_by_hour: tuple[tuple[str, tuple[float, ...]], ...] = ()
    # per GPU type, the demand within each replication's window of the experiments and
    # serving phases using it, pooled over the replications (a window placed per replication)
    gpu_demand_in_phases: tuple[DemandHistogram, ...] = ()
    events: int = 0
    # each training phase's steady rate and its basis; filled when the scenario has measured
    # training runs (its summary then lists them)
    training_rates: tuple[TrainingRate, ...] = ()
    # what this plan's run did that a reader must know (DESIGN §7 "Warnings")
    warnings: tuple[str, ...] = ()
    # replications in which the horizon cut a phase (:func:`horizon_cuts`): its cost there
    # leaves out the rest of the work (run_result.horizon_passed_over)
    horizon_cut_replications: int = 0
    # self-host vs API per serving phase (costsim.sim.api_serving)
    api_comparison: tuple[ApiComparison, ...] = ()
    # per phase, what its performance figure rests on and the error drawn on it (prior,
    # measured, mixed or stated: costsim.sim.performance_basis); empty when infeasible
    performance_basis: tuple[PerformanceBasis, ...] = ()

    @property
    def estimated_inputs(self) -> tuple[EstimatedInput, ...]:
        """The prices the plan's figures rest on that are estimates (marked ``~``)."""
        return estimated_inputs(self.prices)


def quiet_on_interrupt() -> None:
    """In a worker process: Ctrl-C (SIGINT, sent to the whole terminal process group) ends the
    worker at once, silently, instead of printing a KeyboardInterrupt traceback per worker; the
    parent process gets KeyboardInterrupt and decides what to do."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def simulate_block(prep: PreparedPlan, *, seed: int, replications: int,
                   indices: Sequence[int]) -> tuple[Replication, ...]:
    """Replications ``indices`` (each in ``range(replications)``) of a feasible prepared plan,
    each on the stream ``run`` gives it: a run split into blocks anywhere, in any order, on any
    machine, summarizes to the same figures (:func:`plan_result`)."""
    roots = replication_seeds(seed, replications)
    return tuple(simulate_replication(prep, roots[i], i) for i in indices)


def _simulate_chunk(prep: PreparedPlan, seed: int, replications: int,
                    indices: Sequence[int]) -> list[Replication]:
    return list(simulate_block(prep, seed=seed, replications=replications, indices=indices))


def infeasible_result(prep: PreparedPlan) -> PlanResult:
    """The result of a plan that cannot work: its reasons, nothing simulated."""
    return PlanResult(name=prep.plan.name, feasible=False,
                      infeasible_reasons=prep.infeasible_reasons, replications=0,
                      prices=prep.prices_used(), measured=prep.measured_used())


def plan_result(prep: PreparedPlan, reps: Sequence[Replication]) -> PlanResult:
    """The plan's result from replications simulated in blocks, in any order: they are put in
    index order first, so the figures equal :func:`run_plan`'s bit for bit.

    Raises:
        ValueError: the plan is feasible and ``reps`` is empty or repeats an index.
    """
    if not prep.feasible:
        return infeasible_result(prep)
    ordered = sorted(reps, key=lambda r: r.index)
    if not ordered or len({r.index for r in ordered}) != len(ordered):
        raise ValueError(f"plan {prep.plan.name!r}: replications must be distinct and non-empty")
    return summarize(prep, ordered)


def run_plan(prep: PreparedPlan, *, seed: int, replications: int,
             progress: Progress | None = None, workers: int = 1) -> PlanResult:
    """Simulate ``replications`` futures of a prepared plan and summarize them.

    Each replication is folded into the plan's tally as soon as it is done (in index order:
    workers simulate consecutive blocks, folded in block order), so a run holds a few hundred
    bytes per replication, not the replications (:mod:`costsim.sim.tally`)."""
    if replications < 1:
        raise ValueError(f"replications must be >= 1, got {replications}")
    if not prep.feasible:
        if progress:
            progress(replications, replications)
        return infeasible_result(prep)
    tally = new_tally(prep, replications)
    if workers <= 1:
        roots = replication_seeds(seed, replications)
        for i in range(replications):
            fold(prep, tally, simulate_replication(prep, roots[i], i))
            if progress:
                progress(i + 1, replications)
    else:
        # blocks small enough that the ones done ahead of the next to fold stay few; at most
        # two blocks a worker in flight
        size = max(1, min(_BLOCK, -(-replications // workers)))
        blocks = [range(a, min(a + size, replications)) for a in range(0, replications, size)]
        with ProcessPoolExecutor(max_workers=workers, initializer=quiet_on_interrupt) as pool:
            pending: deque[Future[list[Replication]]] = deque()
            queued = iter(blocks)
            for block in queued:
                pending.append(pool.submit(_simulate_chunk, prep, seed, replications, block))
                if len(pending) >= 2 * workers:
                    break
            while pending:
                for rep in pending.popleft().result():
                    fold(prep, tally, rep)
                if progress:
                    progress(tally.count, replications)
                after = next(queued, None)
                if after is not None:
                    pending.append(pool.submit(_simulate_chunk, prep, seed, replications,
                                               after))
    return tally_result(prep, tally)


_BLOCK = 64  # replications a worker simulates per task


def new_tally(prep: PreparedPlan, replications: int) -> PlanTally:
    """An empty tally for ``replications`` replications of ``prep``."""
    return PlanTally(replications=replications)


def fold(prep: PreparedPlan, tally: PlanTally, rep: Replication) -> None:
    """Add the next replication (in index order) to the plan's tally."""
    scenario = prep.scenario
    discount, training, serving = _fold_constants(scenario, len(rep.ledger.months))
    tally.add(rep, discount=discount, training=training, serving=serving)


_FoldConstants = tuple[tuple[float, ...], frozenset[str], frozenset[str]]
# Scenarios folded lately, by identity (hashing a scenario hashes every phase and plan), kept
# with their constants so an id cannot be reused while here.
_FOLD_CONSTANTS: dict[int, tuple[Scenario, int, _FoldConstants]] = {}
_FOLD_KEPT = 64


def _fold_constants(scenario: Scenario, months: int) -> _FoldConstants:
    """Each month's discount factor and the training and serving phases' names: the same
    for every replication (computed once per scenario, the same values)."""
    kept = _FOLD_CONSTANTS.get(id(scenario))
    if kept is not None and kept[0] is scenario and kept[1] == months:
        return kept[2]
    rate = scenario.discount_rate_pct_per_year / 100
    constants = (tuple((1 + rate) ** ((m + 1) / 12) for m in range(months)),
                 frozenset(p.name for p in scenario.phases if p.kind is PhaseKind.TRAINING),
                 frozenset(p.name for p in scenario.phases if p.kind is PhaseKind.SERVING))
    if len(_FOLD_CONSTANTS) >= _FOLD_KEPT:
        _FOLD_CONSTANTS.pop(next(iter(_FOLD_CONSTANTS)))
    _FOLD_CONSTANTS[id(scenario)] = (scenario, months, constants)
    return constants


def summarize(prep: PreparedPlan, reps: Sequence[Replication]) -> PlanResult:
    """The plan's result from its replications (in index order)."""
    return tally_result(prep, tally_of(prep, reps))


def tally_of(prep: PreparedPlan, reps: Sequence[Replication]) -> PlanTally:
    """The tally of ``reps`` (the plan's replications in index order from 0)."""
    tally = new_tally(prep, len(reps))
    for rep in reps:
        fold(prep, tally, rep)
    return tally


def tally_result(prep: PreparedPlan, tally: PlanTally) -> PlanResult:
    """The plan's result from the tally of all its replications."""
    unrun = unrun_training(prep, tally)
    if unrun.reasons:  # its work never ran: no cost to rank (costsim.sim.unrun)
        return PlanResult(name=prep.plan.name, feasible=False,
                          infeasible_reasons=unrun.reasons, replications=0,
                          prices=prep.prices_used(), measured=prep.measured_used())
    scenario = prep.scenario
    first = tally.first
    if first is None or tally.count != tally.replications:
        raise ValueError(f"plan {prep.plan.name!r}: {tally.count} of {tally.replications} "
                         f"replications tallied")
    n = tally.count
    costs = tally.values("cost")
    mean_ledger = tally.ledger.mean()
    finish = tally.values("finish")
    finite_finish = np.where(np.isfinite(finish), finish, scenario.calendar.horizon_s)
    training_names = {p.name for p in scenario.phases if p.kind is PhaseKind.TRAINING}
    serving_names = {p.name for p in scenario.phases if p.kind is PhaseKind.SERVING}
    has_deadline = any(t.deadline_s is not None for t in first.timelines)
    committed = sum(tally.values("reserved_committed").tolist())
    waits = tally.pooled_waits()
    serving_requests = tally.serving_requests
    tokens = float(np.mean(tally.values("tokens")))
    output_tokens = float(np.mean(tally.values("output_tokens")))
    budget = scenario.budget_usd
    by_cat = mean_ledger.by_category()
    training_cost = float(np.mean(tally.values("training_cost")))
    serving_cost = float(np.mean(tally.values("serving_cost")))
    return PlanResult(
        name=prep.plan.name, feasible=True, infeasible_reasons=(), replications=n,
        cost_usd=Stats(mean=mean_ledger.cost_usd, **_percentiles(costs)),
        cash_usd_mean=mean_ledger.cash_usd, npv_usd_mean=float(np.mean(tally.values("npv"))),
        finish_s=Stats.of(finite_finish),
        p_over_budget=None if budget is None else float(np.mean(costs > budget)),
        p_deadline_missed=(float(np.mean(tally.values("missed") > 0)) if has_deadline
                           else None),
        cost_per_training_run_usd=_phase_cost(training_cost, training_names),
        training_gpu_hours=(Stats.of(tally.values("training_gpu_hours"))
                            if training_names else None),
        cost_per_million_tokens_usd=_per_million(serving_cost, serving_names, tokens),
        cost_per_million_output_tokens_usd=_per_million(serving_cost, serving_names,
                                                        output_tokens),
        ledger=mean_ledger,
        prices=prep.prices_used(),
        measured=prep.measured_used(),
        metrics=PlanMetrics(
            gpu_hours_used=float(np.mean(tally.values("gpu_hours_used"))),
            gpu_hours_paid=float(np.mean(tally.values("gpu_hours_paid"))),
            reserved_utilization=(sum(tally.values("reserved_used").tolist()) / committed
                                  if committed > 0 else None),
            stranded_commitment_usd=by_cat.get(Category.STRANDED_COMMITMENT, 0.0),
            queue_wait_p95_s=waits.percentile(95) if waits.jobs else None,
            slo_attainment=(tally.served_within_slo / serving_requests
                            if serving_requests > 0 else None)),
        pools=tuple(PoolUse(pool=k[0], gpu=k[1], option=k[2], paid_gpu_hours=v[0] / n,
                            used_gpu_hours=v[1] / n) for k, v in sorted(tally.pools.items())),
        reserved_by_month=_reserved_by_month(tally, mean_ledger),
        cumulative_cash_usd_by_month=_cumulative_cash(tally),
        timelines=first.timelines,
        serving_replicas_by_hour=tuple((s.phase, s.replicas_by_hour) for s in first.serving),
        serving_fleet=tuple(band for phase, fleet in tally.fleets.items()
                            if (band := fleet.bands(phase, n)) is not None),
        gpu_demand=tally.pooled_demand(), gpu_demand_by_hour=first.gpu_demand_by_hour,
        gpu_demand_in_phases=tally.pooled_demand_in_phases(),
        events=tally.events, training_rates=training_rates(prep),
        warnings=(horizon_cuts(scenario, tally) + unrun.warnings + block_warnings(prep, tally)
                  + api_warnings(prep)),
        horizon_cut_replications=cut_replications(scenario, tally),
        api_comparison=api_comparisons_of(prep, tally.api_sums()),
        performance_basis=performance_bases(prep))


def _reserved_by_month(tally: PlanTally, mean_ledger: Ledger
                       ) -> tuple[tuple[str, float, float], ...]:
    committed, used = tally.reserved_committed, tally.reserved_used
    assert committed is not None
    assert used is not None
    n = tally.count
    return tuple((row.month, float(np.mean(committed.column(n, m))),
                  float(np.mean(used.column(n, m))))
                 for m, row in enumerate(mean_ledger.months))


def horizon_cuts(scenario: Scenario, tally: PlanTally) -> tuple[str, ...]:
    """The plan's phases the horizon cut in some replications: unfinished at its end (a
    training run or a queue still running), or never started (waiting on such a phase). A
    phase whose months run past the horizon in every plan is the run-wide warning
    (:meth:`Scenario.horizon_warnings`), not repeated here."""
    static = {w.split("'")[1] for w in scenario.horizon_warnings()}
    end = scenario.calendar.end.isoformat()
    n = tally.count
    out = []
    for k, phase in enumerate(scenario.phase_order()):
        if phase.name in static:
            continue
        never, cut = tally.phases[k].never, tally.phases[k].cut
        if cut:
            out.append(f"phase '{phase.name}' had not ended when the horizon ended ({end}) in "
                       f"{cut} of {n} replications: what it would cost after that is "
                       f"not counted")
        if never:
            out.append(f"phase '{phase.name}' never started within the horizon in {never} of "
                       f"{n} replications (a phase it comes after had not ended): it "
                       f"costs nothing there")
    return tuple(out)


def block_warnings(prep: PreparedPlan, tally: PlanTally) -> tuple[str, ...]:
    """What a reader of a plan with capacity blocks must know: a training run that outlasted
    its block (the rest ran on the phase's own pool), a block no run used."""
    if not prep.capacity_blocks:
        return ()
    out = []
    for phase in prep.phases:
        late = tally.block_late.get(phase, [])
        phase_prep = prep.phases[phase]
        if late and isinstance(phase_prep, TrainingPrep):
            rental = phase_prep.source.rental
            option = rental.option.value if rental is not None else "its pool"
            out.append(f"phase '{phase}' outlasted its capacity block in {len(late)} of "
                       f"{tally.count} replications (by {np.mean(late) / 3600:.1f} h on "
                       f"average): the rest ran on {option} after a restart from the last "
                       f"checkpoint")
    for block in prep.capacity_blocks:
        if block.name not in tally.block_used:
            out.append(f"the {block.name} ({block.block.days} days) was used by no training "
                       f"run in any replication: all of it is idle or stranded")
    return tuple(out)


def training_rates(prep: PreparedPlan) -> tuple[TrainingRate, ...]:
    """The plan's training phases' steady rates and bases, when the scenario measured any
    training run (else none: a run without measurements reports as it always did)."""
    if not prep.scenario.measurements.training:
        return ()
    return tuple(TrainingRate(phase=name, gpu=p.source.gpu, gpus=p.gpus,
                              tokens_per_s=p.tokens_per_s, basis=p.basis.value,
                              profile_source=p.profile_source)
                 for name, p in prep.phases.items() if isinstance(p, TrainingPrep))


def _cumulative_cash(tally: PlanTally) -> tuple[tuple[str, Stats], ...]:
    """Cash paid from the start to each month's end, over the replications (the report's
    cumulative-cost chart draws its P10–P90 band from these; a mean ledger has no spread)."""
    labels = tally.month_labels()
    assert tally.cash is not None
    cash = np.cumsum(tally.cash.values(tally.count), axis=1)
    # every month's P10/P50/P90 in one call (numpy takes each column's order statistics and
    # interpolates elementwise: the values Stats.of gets column by column,
    # tests/sim/test_tally.py); each mean of the column as a contiguous copy (what a list of
    # its values gives Stats.of)
    p10, p50, p90 = np.percentile(cash, [10, 50, 90], axis=0).tolist()
    return tuple((label, Stats(mean=float(np.ascontiguousarray(cash[:, m]).mean()),
                               p10=p10[m], p50=p50[m], p90=p90[m]))
                 for m, label in enumerate(labels))


def _percentiles(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    p10, p50, p90 = np.percentile(np.asarray(values, dtype=np.float64), [10, 50, 90])
    return {"p10": round(float(p10), 2), "p50": round(float(p50), 2), "p90": round(float(p90), 2)}


def _phase_cost(mean_cost: float, phases: set[str]) -> float | None:
    """Mean cost of the named phases per phase (cost per training run); ``mean_cost``: the
    mean over the replications of those phases' cost (their ledger lines plus their use-share
    of owned servers)."""
    if not phases:
        return None
    return round(mean_cost / len(phases), 2)


def _per_million(mean_cost: float, phases: set[str], tokens: float) -> float | None:
    if not phases or tokens <= 0:
        return None
    return mean_cost / tokens * 1e6


def run_scenario(scenario: Scenario, *, seed: int, replications: int,
                 plans: Sequence[str] | None = None, progress: Progress | None = None,
                 workers: int = 1) -> tuple[PlanResult, ...]:
    """Prepare and simulate every plan (or those named), each on the same futures."""
    chosen = [p for p in scenario.plans if plans is None or p.name in plans]
    results = []
    for plan in chosen:
        prep = prepare_plan(scenario, plan)
        results.append(run_plan(prep, seed=seed, replications=replications, progress=progress,
                                workers=workers))
    return tuple(results)
