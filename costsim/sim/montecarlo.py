"""Monte Carlo over a plan: N replications on independent, named streams, and their summary.

Replication r of every plan draws from ``SeedSequence(seed).spawn(N)[r]`` (docs/simulator.md
§4), so plans are compared on the same futures, and the result is the same bit for bit whether the
replications run in one process or several. Engine results that do not depend on the draw are
prepared once per plan (:func:`costsim.sim.prepare.prepare_plan`). Progress is reported through a
callback; the engine never prints.
"""

from __future__ import annotations

import math
import signal
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from costsim.domain.phases import PhaseKind
from costsim.domain.scenario import Scenario
from costsim.sim.api_serving import ApiComparison, api_comparisons, api_warnings
from costsim.sim.demand import DemandHistogram
from costsim.sim.engine import simulate_replication
from costsim.sim.ledger import Category, Ledger, average_ledgers
from costsim.sim.prepare import PreparedPlan, TrainingPrep, prepare_plan
from costsim.sim.results import (
    EstimatedInput,
    FleetBands,
    MeasuredUsed,
    PhaseTimeline,
    PoolUse,
    PriceUsed,
    Replication,
    TrainingRate,
    estimated_inputs,
)
from costsim.sim.streams import replication_seeds
from costsim.sim.unrun import cut_replications, unrun_training
from costsim.sim.waits import WaitHistogram

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Stats:
    """Mean and P10/P50/P90 of a quantity over the replications."""

    mean: float
    p10: float
    p50: float
    p90: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
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
    """Simulate ``replications`` futures of a prepared plan and summarize them."""
    if replications < 1:
        raise ValueError(f"replications must be >= 1, got {replications}")
    if not prep.feasible:
        if progress:
            progress(replications, replications)
        return infeasible_result(prep)
    reps: list[Replication] = []
    if workers <= 1:
        roots = replication_seeds(seed, replications)
        for i in range(replications):
            reps.append(simulate_replication(prep, roots[i], i))
            if progress:
                progress(i + 1, replications)
    else:
        chunks = [list(range(replications))[k::workers] for k in range(workers)]
        with ProcessPoolExecutor(max_workers=workers, initializer=quiet_on_interrupt) as pool:
            futures = [pool.submit(_simulate_chunk, prep, seed, replications, c)
                       for c in chunks if c]
            for future in futures:
                reps.extend(future.result())
                if progress:
                    progress(len(reps), replications)
        reps.sort(key=lambda r: r.index)
    return summarize(prep, reps)


def summarize(prep: PreparedPlan, reps: Sequence[Replication]) -> PlanResult:
    """The plan's result from its replications (in index order)."""
    unrun = unrun_training(prep, reps)
    if unrun.reasons:  # its work never ran: no cost to rank (costsim.sim.unrun)
        return PlanResult(name=prep.plan.name, feasible=False,
                          infeasible_reasons=unrun.reasons, replications=0,
                          prices=prep.prices_used(), measured=prep.measured_used())
    scenario = prep.scenario
    costs = [r.cost_usd for r in reps]
    mean_ledger = average_ledgers([r.ledger for r in reps])
    rate = scenario.discount_rate_pct_per_year / 100
    discount = [(1 + rate) ** ((m + 1) / 12) for m in range(len(reps[0].ledger.months))]
    npv = [sum(row.cash_usd / discount[m] for m, row in enumerate(r.ledger.months))
           for r in reps]
    finish = [max((t.end_s if t.end_s is not None else math.inf) for t in r.timelines)
              for r in reps]
    finite_finish = [f if math.isfinite(f) else scenario.calendar.horizon_s for f in finish]
    training_names = {p.name for p in scenario.phases if p.kind is PhaseKind.TRAINING}
    serving_names = {p.name for p in scenario.phases if p.kind is PhaseKind.SERVING}
    missed = [any(t.deadline_met is False for t in r.timelines) for r in reps]
    has_deadline = any(t.deadline_s is not None for t in reps[0].timelines)
    committed = sum(r.reserved_gpu_hours_committed for r in reps)
    waits = WaitHistogram.pooled(r.queue_waits for r in reps)
    serving_requests = sum(s.requests for r in reps for s in r.serving)
    tokens = float(np.mean([sum(s.tokens_served for s in r.serving) for r in reps]))
    output_tokens = float(np.mean([sum(s.output_tokens_served for s in r.serving)
                                   for r in reps]))
    budget = scenario.budget_usd
    by_cat = mean_ledger.by_category()
    return PlanResult(
        name=prep.plan.name, feasible=True, infeasible_reasons=(), replications=len(reps),
        cost_usd=Stats(mean=mean_ledger.cost_usd, **_percentiles(costs)),
        cash_usd_mean=mean_ledger.cash_usd, npv_usd_mean=float(np.mean(npv)),
        finish_s=Stats.of(finite_finish),
        p_over_budget=None if budget is None else float(np.mean([c > budget for c in costs])),
        p_deadline_missed=float(np.mean(missed)) if has_deadline else None,
        cost_per_training_run_usd=_phase_cost(reps, training_names),
        training_gpu_hours=(Stats.of([sum(t.gpu_hours for t in r.training) for r in reps])
                            if training_names else None),
        cost_per_million_tokens_usd=_per_million(reps, serving_names, tokens),
        cost_per_million_output_tokens_usd=_per_million(reps, serving_names, output_tokens),
        ledger=mean_ledger,
        prices=prep.prices_used(),
        measured=prep.measured_used(),
        metrics=PlanMetrics(
            gpu_hours_used=float(np.mean([r.gpu_hours_used for r in reps])),
            gpu_hours_paid=float(np.mean([r.gpu_hours_paid for r in reps])),
            reserved_utilization=(sum(r.reserved_gpu_hours_used for r in reps) / committed
                                  if committed > 0 else None),
            stranded_commitment_usd=by_cat.get(Category.STRANDED_COMMITMENT, 0.0),
            queue_wait_p95_s=waits.percentile(95) if waits.jobs else None,
            slo_attainment=(sum(s.served_within_slo for r in reps for s in r.serving)
                            / serving_requests if serving_requests > 0 else None)),
        pools=_mean_pools(reps),
        reserved_by_month=tuple(
            (row.month, float(np.mean([r.reserved_by_month[m][0] for r in reps])),
             float(np.mean([r.reserved_by_month[m][1] for r in reps])))
            for m, row in enumerate(mean_ledger.months)),
        cumulative_cash_usd_by_month=_cumulative_cash(reps),
        timelines=reps[0].timelines,
        serving_replicas_by_hour=tuple((s.phase, s.replicas_by_hour) for s in reps[0].serving),
        serving_fleet=_fleet_bands(reps),
        gpu_demand=_pooled_demand(reps), gpu_demand_by_hour=reps[0].gpu_demand_by_hour,
        gpu_demand_in_phases=tuple(
            DemandHistogram.pooled(hists) for _, hists in sorted(_by_gpu(
                h for r in reps for h in r.gpu_demand_in_phases).items())),
        events=sum(r.events for r in reps), training_rates=training_rates(prep),
        warnings=(horizon_cuts(scenario, reps) + unrun.warnings + block_warnings(prep, reps)
                  + api_warnings(prep)),
        horizon_cut_replications=cut_replications(scenario, reps),
        api_comparison=api_comparisons(prep, reps))


def horizon_cuts(scenario: Scenario, reps: Sequence[Replication]) -> tuple[str, ...]:
    """The plan's phases the horizon cut in some replications: unfinished at its end (a
    training run or a queue still running), or never started (waiting on such a phase). A
    phase whose months run past the horizon in every plan is the run-wide warning
    (:meth:`Scenario.horizon_warnings`), not repeated here."""
    static = {w.split("'")[1] for w in scenario.horizon_warnings()}
    end = scenario.calendar.end.isoformat()
    out = []
    for k, phase in enumerate(scenario.phase_order()):
        if phase.name in static:
            continue
        lines = [r.timelines[k] for r in reps]
        never = sum(t.start_s is None for t in lines)
        cut = sum(t.start_s is not None and t.end_s is None for t in lines)
        if cut:
            out.append(f"phase '{phase.name}' had not ended when the horizon ended ({end}) in "
                       f"{cut} of {len(reps)} replications: what it would cost after that is "
                       f"not counted")
        if never:
            out.append(f"phase '{phase.name}' never started within the horizon in {never} of "
                       f"{len(reps)} replications (a phase it comes after had not ended): it "
                       f"costs nothing there")
    return tuple(out)


def block_warnings(prep: PreparedPlan, reps: Sequence[Replication]) -> tuple[str, ...]:
    """What a reader of a plan with capacity blocks must know: a training run that outlasted
    its block (the rest ran on the phase's own pool), a block no run used."""
    if not prep.capacity_blocks:
        return ()
    out = []
    for phase in prep.phases:
        overruns = [t.block_overrun_s for r in reps for t in r.training if t.phase == phase]
        late = [s for s in overruns if s > 0]
        phase_prep = prep.phases[phase]
        if late and isinstance(phase_prep, TrainingPrep):
            rental = phase_prep.source.rental
            option = rental.option.value if rental is not None else "its pool"
            out.append(f"phase '{phase}' outlasted its capacity block in {len(late)} of "
                       f"{len(reps)} replications (by {np.mean(late) / 3600:.1f} h on average): "
                       f"the rest ran on {option} after a restart from the last checkpoint")
    for block in prep.capacity_blocks:
        used = [u.used_gpu_hours for r in reps for u in r.pools if u.pool == block.name]
        if not any(h > 0 for h in used):
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


def _by_gpu(hists: Iterable[DemandHistogram]) -> dict[str, list[DemandHistogram]]:
    out: dict[str, list[DemandHistogram]] = {}
    for hist in hists:
        out.setdefault(hist.gpu, []).append(hist)
    return out


def _pooled_demand(reps: Sequence[Replication]) -> tuple[DemandHistogram, ...]:
    """Each GPU type's demand histogram over all replications; a replication in which the
    type was never used counts its hours at zero demand."""
    parts: dict[str, list[DemandHistogram]] = {}
    for rep in reps:
        for hist in rep.gpu_demand:
            parts.setdefault(hist.gpu, []).append(hist)
    if not parts:
        return ()
    hours = round(next(iter(parts.values()))[0].hours_per_replication)
    for gpu, hists in parts.items():
        idle = len(reps) - len(hists)
        if idle:
            hists.append(DemandHistogram(gpu=gpu, replications=idle, levels=(0,),
                                         hours=(hours * idle,), gpu_hours=(0.0,)))
    return tuple(DemandHistogram.pooled(hists) for _, hists in sorted(parts.items()))


def _cumulative_cash(reps: Sequence[Replication]) -> tuple[tuple[str, Stats], ...]:
    """Cash paid from the start to each month's end, over the replications (the report's
    cumulative-cost chart draws its P10–P90 band from these; a mean ledger has no spread)."""
    cash = np.cumsum([[row.cash_usd for row in r.ledger.months] for r in reps], axis=1)
    labels = [row.month for row in reps[0].ledger.months]
    return tuple((label, Stats.of(cash[:, m].tolist())) for m, label in enumerate(labels))


def _fleet_bands(reps: Sequence[Replication]) -> tuple[FleetBands, ...]:
    """Each serving phase's fleet bands over the replications (a replication in which the
    phase did not run counts as no replicas)."""
    phases = list(dict.fromkeys(s.phase for r in reps for s in r.serving))
    bands = (FleetBands.of(phase, [next((s.fleet for s in r.serving if s.phase == phase), None)
                                   for r in reps]) for phase in phases)
    return tuple(band for band in bands if band is not None)


def _mean_pools(reps: Sequence[Replication]) -> tuple[PoolUse, ...]:
    """Each pool's paid and used GPU-hours averaged over the replications (a pool absent from
    a replication counts as 0 there)."""
    sums: dict[tuple[str, str, str], list[float]] = {}
    for rep in reps:
        for use in rep.pools:
            acc = sums.setdefault((use.pool, use.gpu, use.option), [0.0, 0.0])
            acc[0] += use.paid_gpu_hours
            acc[1] += use.used_gpu_hours
    n = len(reps)
    return tuple(PoolUse(pool=k[0], gpu=k[1], option=k[2], paid_gpu_hours=v[0] / n,
                         used_gpu_hours=v[1] / n) for k, v in sorted(sums.items()))


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    p10, p50, p90 = np.percentile(np.asarray(values, dtype=np.float64), [10, 50, 90])
    return {"p10": round(float(p10), 2), "p50": round(float(p50), 2), "p90": round(float(p90), 2)}


def _mean_phase_cost(reps: Sequence[Replication], phases: set[str]) -> float:
    """Mean over the replications of the named phases' cost (their ledger lines plus their
    use-share of owned servers)."""
    return float(np.mean([sum(cost for phase, cost in r.phase_costs if phase in phases)
                          for r in reps]))


def _phase_cost(reps: Sequence[Replication], phases: set[str]) -> float | None:
    """Mean cost of the named phases per phase (cost per training run)."""
    if not phases:
        return None
    return round(_mean_phase_cost(reps, phases) / len(phases), 2)


def _per_million(reps: Sequence[Replication], phases: set[str], tokens: float) -> float | None:
    if not phases or tokens <= 0:
        return None
    return _mean_phase_cost(reps, phases) / tokens * 1e6


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
