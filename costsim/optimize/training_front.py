"""Training options for one training phase and their time–cost Pareto front (issue 11 item 5).

For every (GPU type, GPU count, framework) the performance model's layout search runs exactly
as the simulator's preparation does (:func:`costsim.sim.prepare.training_estimate`); every
purchase option is priced through the simulator's own pools (:mod:`costsim.sim.pools`: job-sized
whole instances, the cloud's billing increments, the scenario's price overrides and planned
change) and the run's wall time, billed time and P(deadline missed) come from the analytic run
model of :mod:`costsim.optimize.training_time`. No simulation runs here: a flagship phase is
rated in about a second (docs/optimizer.md "Training: time–cost front").

Counts are whole nodes, doubling (1, 2, 4, 8, 16, …), from the smallest that could finish
within the horizon at peak FLOPs, until one of: the expected wall time is under a sixteenth of
the deadline (four doublings past meeting it: faster options only add cost), the steady time is
under an hour (instance start-up and billing minimums then weigh more than the saving), a
doubling gains under 10 % (the global batch caps data parallelism: more GPUs only add cost), or
16,384 GPUs (the largest published training run, Llama 3 405B). A phase with a fixed layout
is rated at its tp · pp · dp GPUs only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from costsim.catalog.gpus import get_gpu
from costsim.catalog.perf_defaults import allin_loss_defaults, perf_defaults
from costsim.catalog.prices import PriceBook, price_book
from costsim.catalog.sim_defaults import sim_assumptions
from costsim.domain.gpu import GpuSpec
from costsim.domain.measurements import Basis
from costsim.domain.performance import AllinLossAssumptions, PerfDefaults
from costsim.domain.phases import ExperimentsPhase, ServingPhase, TrainingPhase
from costsim.domain.plans import Commitment, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Distribution, Fixed, LogNormal
from costsim.domain.workload import TrainingFramework
from costsim.errors import CostsimError, InputError
from costsim.memory.estimate import shape_of
from costsim.optimize.pareto import pareto_mask
from costsim.optimize.training_time import (
    Quadrature,
    RunExpectation,
    RunFactors,
    RunInputs,
    expect_run,
    quadrature,
    run_factors,
)
from costsim.perf.allin_loss import extra_loss_median
from costsim.perf.train_estimate import TrainingEstimate
from costsim.sim.capacity import price_factor
from costsim.sim.pools import RentalPool, commitment_pool, rental_pool
from costsim.sim.prepare import checkpoint_interval_s, layout_label, training_estimate
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

ON_DEMAND, SPOT = PurchaseOption.ON_DEMAND, PurchaseOption.SPOT
# The largest published training run (Llama 3 405B on 16,384 H100s, arXiv 2407.21783 §3.3).
MAX_COUNT = 16_384
# Stop doubling once the expected wall time is under this share of the deadline.
DEADLINE_STOP_SHARE = 1 / 16
# Stop doubling below this steady time (instance start-up is 300 s, billing minimums ~60 s).
SHORT_RUN_S = SECONDS_PER_HOUR
# A doubling that shortens the steady time by less than this share ends the scan.
MIN_DOUBLING_GAIN = 0.10


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingOption:
    """One way to run a training phase, estimated analytically (no simulation)."""

    gpu: str  # canonical GPU name
    gpus: int
    layout: str  # as the simulator reports it: "tp=… pp=… dp=… zero=… micro_batch=… …"
    framework: str  # the training framework whose efficiency factor applies
    option: PurchaseOption  # on-demand, spot (with on-demand fallback), reserved, owned
    cloud: str | None  # the offering's cloud (None: owned)
    wall_time_s: float  # all-in expected wall time (steady ÷ goodput, with start-up)
    gpu_hours: float  # GPU-hours paid (whole instances)
    cost_usd: float  # expected cost of the phase with this option
    p_deadline_missed: float | None  # analytic P(wall time > deadline); None: no deadline
    meets_deadline: bool  # P(deadline missed) within the limit asked for (or expected time
    # within the deadline when no limit is given)
    on_front: bool  # not dominated in (wall_time_s, cost_usd)
    # -- added by i11-train ------------------------------------------------------------------
    fallback: PurchaseOption | None = None  # spot's on-demand fallback
    instance_type: str = ""  # the offering's ``cloud region instance_type``
    entry_cloud: str | None = None  # the cloud the rating was restricted to (None: any)
    entry_region: str | None = None
    steady_s: float = 0.0  # the performance model's steady-state time
    mfu: float = 0.0
    preemptions: float = 0.0  # expected spot preemptions
    faults: float = 0.0  # expected hardware faults
    lost_s: float = 0.0  # expected wall time lost to interruptions (redone work, restarts,
    # reacquire waits)

    def use_entry(self) -> UseEntry:
        """The plan's use entry that the simulator prices as this option was rated."""
        return UseEntry(gpu=self.gpu, option=self.option, count=self.gpus,
                        fallback=self.fallback, cloud=self.entry_cloud,
                        region=self.entry_region)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingFront:
    """Every memory-feasible option the search rated for one phase, and its Pareto front."""

    phase: str
    options: tuple[TrainingOption, ...]  # sorted by cost
    rated: int  # configurations rated (incl. those memory or the batch ruled out)
    # -- added by i11-train ------------------------------------------------------------------
    deadline_s: float | None = None
    max_p_deadline_missed: float | None = None  # the limit applied (None: expected time)
    notes: tuple[str, ...] = ()

    @property
    def front(self) -> tuple[TrainingOption, ...]:
        """The non-dominated options, fastest first."""
        return tuple(sorted((o for o in self.options if o.on_front),
                            key=lambda o: (o.wall_time_s, o.cost_usd)))

    def cheapest_meeting_deadline(self) -> TrainingOption | None:
        """The cheapest option that meets the deadline (None: none does)."""
        return next((o for o in self.options if o.meets_deadline), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Context:
    scenario: Scenario
    phase: TrainingPhase
    book: PriceBook
    defaults: PerfDefaults
    allin: AllinLossAssumptions
    throughput_error: Distribution  # the model's error (a measured rate has none: DESIGN §12)
    drift: Quadrature
    start_s: float
    deadline_s: float | None
    limit: float | None
    cloud: str | None
    region: str | None
    startup_s: float
    reacquire_s: float
    pools: dict[tuple[str, int, PurchaseOption], RentalPool] = field(default_factory=dict)
    factor_rules: dict[tuple[Distribution, bool], RunFactors] = field(default_factory=dict)


def training_front(scenario: Scenario, phase: TrainingPhase, *, book: PriceBook | None = None,
                   gpus: Sequence[str] | None = None, counts: Sequence[int] | None = None,
                   options: Sequence[PurchaseOption] = (ON_DEMAND, SPOT),
                   frameworks: Sequence[TrainingFramework] | None = None,
                   max_p_deadline_missed: float | None = None, cloud: str | None = None,
                   region: str | None = None) -> TrainingFront:
    """Rate every memory-feasible (GPU, count, layout, framework, option) of ``phase`` and
    mark the time–cost front (module docstring).

    ``gpus``: GPU names (default: every GPU the price book sells under one of ``options``);
    ``counts``: GPU counts (default: doubling whole nodes within the stop rules); ``frameworks``
    (default: all); ``max_p_deadline_missed`` (default: the scenario's risk limit; without one
    an option meets the deadline when its expected wall time does); ``cloud``/``region``
    restrict the offerings as a plan's ``cloud``/``region`` would. Spot runs with an on-demand
    fallback. Owned servers are not rated (their cost depends on the purchase date, lead
    time and the other phases sharing them: the plan search prices them with the simulator).

    Raises:
        InputError: an owned option, or an empty list of options.
    """
    if not options:
        raise InputError("", "options", "need at least one purchase option to rate")
    if PurchaseOption.OWNED in options:
        raise InputError("", "options", "owned servers are not rated per phase (their cost "
                         "depends on the purchase date, lead time and the other phases using "
                         "them); simulate a plan with an owned block instead")
    book = book or price_book(scenario.prices.overrides)
    ctx = _context(scenario, phase, book, max_p_deadline_missed, cloud, region)
    names = [get_gpu(g, source="gpus").name for g in gpus] if gpus else _offered_gpus(
        book, options, cloud, region)
    chosen = tuple(frameworks) if frameworks else tuple(TrainingFramework)
    rated = 0
    rows: list[TrainingOption] = []
    for name in names:
        gpu = get_gpu(name)
        for framework in chosen:
            fw_phase = replace(phase, framework=framework)
            for count, est in _scan_counts(ctx, fw_phase, gpu, counts):
                rated += 1
                if est is None:
                    continue
                for option in options:
                    row = _rate(ctx, gpu, count, est, framework, option)
                    if row is not None:
                        rows.append(row)
    mask = pareto_mask([r.wall_time_s for r in rows], [r.cost_usd for r in rows])
    marked = [replace(r, on_front=bool(on)) for r, on in zip(rows, mask, strict=True)]
    marked.sort(key=lambda o: (o.cost_usd, o.wall_time_s, o.gpu, o.gpus, o.option.value,
                               o.framework))
    return TrainingFront(phase=phase.name, options=tuple(marked), rated=rated,
                         deadline_s=ctx.deadline_s, max_p_deadline_missed=ctx.limit,
                         notes=("owned servers not rated per phase",))


def _context(scenario: Scenario, phase: TrainingPhase, book: PriceBook,
             limit: float | None, cloud: str | None, region: str | None) -> _Context:
    allin = allin_loss_defaults()
    block = scenario.uncertainty
    sim = sim_assumptions()
    return _Context(
        scenario=scenario, phase=phase, book=book, defaults=perf_defaults(), allin=allin,
        # the default: the shared throughput error times the training model's own extra error
        # (sim/phase_runs.py draws both; their product is lognormal with training_sigma)
        throughput_error=block.throughput_error or LogNormal(sigma=allin.training_sigma),
        drift=quadrature(block.price_drift_pct_per_year),
        start_s=earliest_start_s(scenario, phase.name),
        deadline_s=(None if phase.deadline_days is None
                    else phase.deadline_days * SECONDS_PER_DAY),
        limit=limit if limit is not None else scenario.risk.max_p_deadline_missed,
        cloud=cloud, region=region, startup_s=sim.instance_startup_s,
        reacquire_s=sim.spot_reacquire_s)


def earliest_start_s(scenario: Scenario, name: str) -> float:
    """When a phase starts if its predecessors take their set durations (a training
    predecessor counts as taking no time: its length depends on its own plan)."""
    phase = scenario.phase(name)
    start = 0.0
    for before in phase.after:
        previous = scenario.phase(before)
        length = (scenario.calendar.months_s(previous.duration_months)
                  if isinstance(previous, ExperimentsPhase | ServingPhase) else 0.0)
        start = max(start, earliest_start_s(scenario, before) + length)
    return start


def _offered_gpus(book: PriceBook, options: Sequence[PurchaseOption], cloud: str | None,
                  region: str | None) -> list[str]:
    names: set[str] = set()
    for option in options:
        names.update(o.gpu for o in book.offerings(cloud=cloud, region=region, option=option,
                                                   include_marketplaces=cloud is not None))
    return sorted(names)


def _scan_counts(ctx: _Context, phase: TrainingPhase, gpu: GpuSpec,
                 counts: Sequence[int] | None) -> list[tuple[int, TrainingEstimate | None]]:
    """The counts rated for one GPU and framework, each with its estimate (None: memory or
    the batch ruled it out)."""
    if counts is None and phase.layout is not None:
        counts = (phase.layout.gpus,)  # the phase fixes tp, pp and dp: one count
    if counts is not None:
        return [(n, _estimate(ctx, phase, gpu, n)) for n in sorted(set(counts))]
    left_s = ctx.scenario.calendar.horizon_s - ctx.start_s
    arch = ctx.scenario.model(phase.model).architecture
    # forward pass only, at the GPU's fastest dense rate: no run can be quicker than this
    peak = max(t for t in (gpu.fp8_tflops, gpu.bf16_tflops, gpu.fp16_tflops, gpu.fp32_tflops)
               if t is not None) * 1e12
    floor_gpu_s = phase.tokens * 2.0 * shape_of(arch).params_active / peak
    scanned: list[tuple[int, TrainingEstimate | None]] = []
    previous: TrainingEstimate | None = None
    count = 1
    while count <= MAX_COUNT:
        if floor_gpu_s / count <= left_s:
            est = _estimate(ctx, phase, gpu, count)
            scanned.append((count, est))
            if est is None and previous is not None:
                break  # the batch cannot be split further
            if est is not None:
                steady = est.goodput.steady_wall_time_s
                if _should_stop(ctx, est, previous):
                    break
                if steady <= SHORT_RUN_S:
                    break
                previous = est
        count *= 2
    return scanned


def _should_stop(ctx: _Context, est: TrainingEstimate,
                 previous: TrainingEstimate | None) -> bool:
    steady = est.goodput.steady_wall_time_s
    if previous is not None and steady > (1 - MIN_DOUBLING_GAIN) * (
            previous.goodput.steady_wall_time_s):
        return True
    if ctx.deadline_s is None:
        return False
    wall = expect_run(_run_inputs(ctx, est, 0.0, False, ctx.startup_s),
                      _factors(ctx, est)).wall_s
    return wall <= DEADLINE_STOP_SHARE * ctx.deadline_s


def _estimate(ctx: _Context, phase: TrainingPhase, gpu: GpuSpec,
              count: int) -> TrainingEstimate | None:
    try:
        return training_estimate(ctx.scenario, phase, gpu, count, ctx.defaults)
    except CostsimError:
        return None


def _factors(ctx: _Context, est: TrainingEstimate) -> RunFactors:
    """The run's random factors, as the simulator draws them (sim/prepare.py ``_training``): a
    measured steady rate draws no model throughput error, and the calibrated extra loss grows
    with the run's steady duration (cached per distinct distribution)."""
    phase, block = ctx.phase, ctx.scenario.uncertainty
    extra = phase.allin_extra_loss or LogNormal(
        sigma=ctx.allin.extra_loss_sigma,
        median=extra_loss_median(ctx.allin, est.goodput.steady_wall_time_s))
    measured = est.basis is Basis.MEASURED
    key = (extra, measured)
    if key not in ctx.factor_rules:
        ctx.factor_rules[key] = run_factors(
            tokens_scale=block.training_tokens_scale,
            throughput_error=Fixed(value=1.0) if measured else ctx.throughput_error,
            failure_scale=block.failure_rate_scale, hazard_scale=block.spot_hazard_scale,
            extra_loss=extra, allin_scale=block.allin_loss_scale)
    return ctx.factor_rules[key]


def _run_inputs(ctx: _Context, est: TrainingEstimate, preemptions_per_s: float,
                fallback: bool, startup_s: float, notice_s: float = 0.0) -> RunInputs:
    """The simulator's run of ``est`` (sim/prepare.py ``_training``, sim/phase_runs.py)."""
    goodput = est.goodput
    return RunInputs(
        steady_s=goodput.steady_wall_time_s, checkpoint_s=goodput.checkpoint_s,
        interval_s=checkpoint_interval_s(goodput), restart_s=goodput.restart_s,
        evaluation_fraction=goodput.evaluation_fraction,
        fault_rate_per_s=(ctx.defaults.goodput.interruptions_per_gpu_hour * est.gpus
                          / SECONDS_PER_HOUR),
        preemption_rate_per_s=preemptions_per_s, spot_notice_s=notice_s,
        reacquire_s=ctx.reacquire_s, fallback=fallback, startup_s=startup_s)


def _drift_factor(ctx: _Context, run: RunExpectation, effective_date: str) -> float:
    """E[(1 + drift/100)^(months/12)] at the month of the run's midpoint, months counted from
    the price's ``effective_date`` (the simulator prices each billed hour in its own month)."""
    calendar = ctx.scenario.calendar
    month = calendar.months_priced_since(
        effective_date, calendar.month_index(ctx.start_s + run.wall_s / 2))
    values = (1 + ctx.drift.values / 100) ** (month / 12)
    return float(ctx.drift.weights @ values)


def _rental(ctx: _Context, gpu: str, count: int, option: PurchaseOption) -> RentalPool:
    """The simulator's rental pool for a run of ``count`` GPUs (cached: every framework and
    spot's fallback ask for the same pools)."""
    key = (gpu, count, option)
    if key not in ctx.pools:
        ctx.pools[key] = rental_pool(ctx.book, gpu, count, option, cloud=ctx.cloud,
                                     region=ctx.region,
                                     price_factor=price_factor(ctx.scenario, gpu))
    return ctx.pools[key]


def _finishes(ctx: _Context, run: RunExpectation) -> bool:
    """The run is expected to end within the horizon (a run whose failures outpace its
    progress never does)."""
    return ctx.start_s + run.wall_s <= ctx.scenario.calendar.horizon_s


def _rate(ctx: _Context, gpu: GpuSpec, count: int, est: TrainingEstimate,
          framework: TrainingFramework, option: PurchaseOption) -> TrainingOption | None:
    """One priced option, or None when nothing sells it (or the run outlasts the horizon)."""
    factor = price_factor(ctx.scenario, gpu.name)
    fallback = None
    try:
        if option.is_reserved:
            pool = commitment_pool(ctx.book, Commitment(
                gpu=gpu.name, count=count, term_years=option.term_years or 1,
                payment=option.payment or Payment.NO_UPFRONT,
                start=ctx.scenario.calendar.start, cloud=ctx.cloud, region=ctx.region),
                ctx.scenario.calendar, job_gpus=count, price_factor=factor)
            run = expect_run(_run_inputs(ctx, est, 0.0, False, 0.0), _factors(ctx, est))
            cost = pool.obligation_usd
            gpu_hours = pool.gpus * pool.terms.term_hours
            offering, cloud = pool.offering, pool.offering.cloud
        else:
            rent = _rental(ctx, gpu.name, count, option)
            hazard = 0.0
            if option is SPOT:
                try:  # spot runs with an on-demand fallback where one is sold
                    fallback = _rental(ctx, gpu.name, count, ON_DEMAND)
                except CostsimError:
                    fallback = None
                hazard = rent.spot_hazard_per_s(count)
            run = expect_run(_run_inputs(ctx, est, hazard, fallback is not None,
                                         ctx.startup_s, rent.billing.spot_notice_s),
                             _factors(ctx, est))
            if not _finishes(ctx, run):
                return None
            drift = _drift_factor(ctx, run, rent.offering.effective_date)
            own_h = rent.billing.billed_hours(run.own_billed_s) * rent.gpus_paid_for(count)
            cost = own_h * rent.rate_usd_per_gpu_hour * drift
            gpu_hours = own_h
            if fallback is not None and run.fallback_s > 0:
                back_h = fallback.billing.billed_hours(run.fallback_s) * (
                    fallback.gpus_paid_for(count))
                cost += back_h * fallback.rate_usd_per_gpu_hour * drift
                gpu_hours += back_h
            offering, cloud = rent.offering, rent.offering.cloud
    except CostsimError:
        return None
    if not _finishes(ctx, run):
        return None
    p_miss = None if ctx.deadline_s is None else run.p_longer_than(ctx.deadline_s)
    if p_miss is None or ctx.deadline_s is None:
        meets = True
    elif ctx.limit is not None:
        meets = p_miss <= ctx.limit
    else:
        meets = run.wall_s <= ctx.deadline_s
    return TrainingOption(
        gpu=gpu.name, gpus=count, layout=layout_label(est.setup), framework=framework.value,
        option=option, cloud=cloud, wall_time_s=run.wall_s, gpu_hours=gpu_hours,
        cost_usd=round(cost, 2), p_deadline_missed=p_miss, meets_deadline=meets,
        on_front=False, fallback=ON_DEMAND if fallback is not None else None,
        instance_type=offering.key, entry_cloud=ctx.cloud, entry_region=ctx.region,
        steady_s=est.goodput.steady_wall_time_s, mfu=est.step.mfu,
        preemptions=run.preemptions, faults=run.faults, lost_s=run.lost_s)


__all__ = ["MAX_COUNT", "TrainingFront", "TrainingOption", "earliest_start_s", "pareto_mask",
           "training_front"]

