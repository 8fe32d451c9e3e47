"""Everything about a plan that does not depend on the random draw, computed once per plan.

For each phase: the GPUs and their priced sources (:mod:`costsim.sim.capacity`), and the
engines' answers — the training layout and steady-state time, serving capacity per replica at
the SLO, an experiment job's memory and GPU-hours. A plan that cannot work (the model does not fit
the GPU, no offering sells the option, the SLO cannot be met, a commitment names a GPU no phase
uses) collects every reason and is reported infeasible, never simulated into nonsense.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from costsim.catalog.gpus import find_gpu, get_gpu
from costsim.catalog.perf_defaults import allin_loss_defaults, perf_defaults
from costsim.catalog.prices import PriceBook, price_book
from costsim.catalog.sim_defaults import sim_assumptions
from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.measurements import Basis, TrainingPoint
from costsim.domain.performance import AllinLossAssumptions, PerfDefaults
from costsim.domain.phases import (
    ExperimentsPhase,
    GenericJob,
    ModelJob,
    ServingPhase,
    TrainingPhase,
)
from costsim.domain.plans import Plan
from costsim.domain.pricing import PriceFlag, PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.simulation import SimAssumptions
from costsim.domain.uncertainty import Distribution, Fixed, LogNormal
from costsim.domain.workload import TrainingSetup
from costsim.errors import CostsimError
from costsim.memory.estimate import estimate_training
from costsim.memory.host import host_ram
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.perf.allin_loss import extra_loss_median
from costsim.perf.goodput import Goodput
from costsim.perf.measured_training import estimate_measured_training_run
from costsim.perf.setups import training_setup
from costsim.perf.train_estimate import (
    LayoutConstraints,
    TrainingEstimate,
    estimate_training_run,
)
from costsim.sim.api_serving import ApiPhasePrep, prepare_api
from costsim.sim.capacity import EntrySource, entry_source, plan_commitments
from costsim.sim.commit_pools import (
    CapacityBlockPool,
    SavingsPlanPool,
    capacity_block_pool,
    savings_plan_pool,
)
from costsim.sim.delivery import undelivered
from costsim.sim.memo import Same
from costsim.sim.owned_parts import owned_training
from costsim.sim.packing import JobNeed, NodeShape, fits_anywhere
from costsim.sim.phase_setup import phase_setup
from costsim.sim.pools import CommitmentPool, OwnedPool, RentalPool, owned_pool
from costsim.sim.quotas import over_quota, pool_quota, quota_units
from costsim.sim.results import MeasuredUsed, PriceUsed
from costsim.sim.serving_prep import ServingEntryPrep, prepare_serving
from costsim.sim.transfer import DataMove, data_moves, entry_clouds
from costsim.units import BYTES_PER_GIB, SECONDS_PER_HOUR, gib_to_bytes

# a phase without a training- or serving-only model error (a scenario's own throughput_error)
NO_MODEL_ERROR = Fixed(value=1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingPrep:
    """A training phase's GPUs, layout and steady-state time, and what interrupts it."""

    phase: TrainingPhase
    source: EntrySource
    gpus: int
    steady_s: float
    tokens_per_s: float
    layout: str
    mfu: float
    checkpoint_s: float
    interval_s: float
    restart_s: float
    faults_per_gpu_hour: float
    evaluation_fraction: float
    checkpoint_bytes: float
    extra_loss: Distribution  # x beyond hardware faults: the phase's, else the calibrated one
    # the training model's error beyond the shared throughput error (default uncertainty only)
    model_error: Distribution = NO_MODEL_ERROR
    # where the steady rate comes from (DESIGN §12): a measured one is not drawn a throughput
    # error (uncertainty.throughput_error is the performance model's)
    basis: Basis = Basis.PREDICTED
    profile_source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExperimentsPrep:
    """An experiments phase: one job's needs, the node it runs on, and the fixed node count
    (None: elastic, each job on its own instance)."""

    phase: ExperimentsPhase
    source: EntrySource
    need: JobNeed
    gpu_hours: Distribution
    node: NodeShape
    nodes: int | None
    # elastic jobs running at once under the pool's quota (None: no quota applies)
    max_concurrent_jobs: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingPrep:
    """A serving phase and its fleet entries (requests routed by size)."""

    phase: ServingPhase
    entries: tuple[ServingEntryPrep, ...]
    api: ApiPhasePrep | None = None  # option api: a pay-per-token API serves it (no entries)
    # the serving model's error beyond the shared throughput error (default uncertainty only),
    # on the predicted share of each entry's capacity (ServingEntryPrep.service_capacity_at)
    model_error: Distribution = NO_MODEL_ERROR


PhasePrep = TrainingPrep | ExperimentsPrep | ServingPrep


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedPlan:
    """A plan ready to simulate, or the reasons it cannot work."""

    scenario: Scenario
    plan: Plan
    phases: dict[str, PhasePrep]
    commitments: tuple[CommitmentPool, ...]
    owned: tuple[OwnedPool, ...]
    infeasible_reasons: tuple[str, ...]
    sim_defaults: SimAssumptions
    throughput_error: Distribution  # the performance model's validated error (default draw)
    savings_plans: tuple[SavingsPlanPool, ...] = ()
    capacity_blocks: tuple[CapacityBlockPool, ...] = ()

    @property
    def feasible(self) -> bool:
        """True when the plan can be simulated."""
        return not self.infeasible_reasons

    def measured_used(self) -> tuple[MeasuredUsed, ...]:
        """Every figure of the plan taken from a measurement file (DESIGN §12)."""
        return tuple(
            MeasuredUsed(phase=name, gpu=entry.source.gpu,
                         figure=f"replica capacity, {size} requests", basis=basis,
                         source=source)
            for name, phase in self.phases.items() if isinstance(phase, ServingPrep)
            for entry in phase.entries for size, basis, source in entry.measured)

    def data_moves(self) -> tuple[DataMove, ...]:
        """The copies of the plan's data between clouds its phases make (:mod:`costsim.sim.
        transfer`)."""
        clouds = []
        for name, phase in self.phases.items():  # in the scenario's phase order
            sources = ([e.source for e in phase.entries] if isinstance(phase, ServingPrep)
                       else [phase.source])
            clouds.append((name, tuple(c for s in sources
                                       for c in entry_clouds(s, self.commitments))))
        return data_moves(clouds)

    def prices_used(self) -> tuple[PriceUsed, ...]:
        """Every price the plan relies on, with its source and date."""
        used: list[PriceUsed] = []
        for name, phase in self.phases.items():
            sources = ([e.source for e in phase.entries] if isinstance(phase, ServingPrep)
                       else [phase.source])
            for source in sources:
                for pool in (source.rental, source.spill, source.fallback):
                    if pool is not None:
                        used.append(_rental_price(name, pool))
                if source.implied_commitment is not None:
                    used.append(_commitment_price(name, source.implied_commitment))
        used.extend(_api_price(name, phase.api) for name, phase in self.phases.items()
                    if isinstance(phase, ServingPrep) and phase.api is not None)
        used.extend(_commitment_price("", pool) for pool in self.commitments)
        used.extend(_savings_plan_prices(self))
        used.extend(_block_price(block) for block in self.capacity_blocks)
        for owned in self.owned:
            server = owned.server
            estimated = any(line.estimate for line in server.bom)
            used.append(PriceUsed(
                phase="", pool=owned.name, gpu=owned.gpu, option="owned",
                rate_usd_per_gpu_hour=server.cost_usd_per_delivered_gpu_hour(1.0),
                upfront_usd=owned.count * server.capex_usd, source=server.source,
                effective_date=server.effective_date, estimate=estimated,
                flags=(PriceFlag.OWNED_COST_ESTIMATE.value,) if estimated else ()))
        used.extend(PriceUsed(phase=move.phase, pool=move.pool, gpu="", option="data-transfer",
                              rate_usd_per_gpu_hour=0.0, upfront_usd=0.0, source=move.source,
                              effective_date=move.effective_date, estimate=move.estimate,
                              usd_per_gb=move.usd_per_gb) for move in self.data_moves())
        unique = {(u.phase, u.pool, u.option): u for u in used}
        return tuple(unique[k] for k in sorted(unique))


def prepare_plan(scenario: Scenario, plan: Plan, *, book: PriceBook | None = None,
                 defaults: PerfDefaults | None = None,
                 sim_defaults: SimAssumptions | None = None) -> PreparedPlan:
    """Price and size every phase of ``plan`` (the engines run here, once per plan)."""
    book = book or price_book(scenario.prices.overrides)
    defaults = defaults or perf_defaults()
    sim_defaults = sim_defaults or sim_assumptions()
    reasons: list[str] = []
    commitments = plan_commitments(scenario, plan, book, reasons)
    for pool in commitments:
        over = over_quota(scenario, pool, pool.gpus, f"plan '{plan.name}', commitment of "
                          f"{pool.gpu} from {scenario.calendar.date_at(pool.start_s)}")
        if over is not None:
            reasons.append(over)
    used_gpus = {_canonical(e.gpu) for u in plan.uses for e in u.entries}
    for pool in commitments:
        if pool.gpu not in used_gpus:
            reasons.append(f"plan '{plan.name}': the commitment of {pool.gpus} {pool.gpu} "
                           f"({pool.option}) is for a GPU no phase of the plan uses")
    owned = []
    for i, purchase in enumerate(plan.owned):
        try:
            owned.append(owned_pool(purchase, scenario.calendar, scenario.servers))
        except CostsimError as error:
            reasons.append(f"plan '{plan.name}', owned {i}: {error}")
    reasons.extend(undelivered(scenario, plan, tuple(owned), _canonical))
    phases: dict[str, PhasePrep] = {}
    for phase in scenario.phase_order():
        use = plan.use_of(phase.name)
        prep: PhasePrep | None
        if isinstance(phase, TrainingPhase):
            prep = _training(scenario, plan, phase, book, defaults, allin_loss_defaults(),
                             tuple(owned), reasons)
        elif isinstance(phase, ExperimentsPhase):
            prep = _experiments(scenario, plan, phase, book, defaults, sim_defaults,
                                tuple(commitments), tuple(owned), reasons)
        elif use.api is not None:
            api = prepare_api(scenario, plan.name, phase, use.api, reasons)
            prep = None if api is None else ServingPrep(phase=phase, entries=(), api=api)
        else:
            entries = prepare_serving(scenario, plan, phase, use.entries, book, defaults,
                                      sim_defaults, reasons)
            prep = None if entries is None else ServingPrep(
                phase=phase, entries=entries,
                model_error=_serving_model_error(scenario, entries, allin_loss_defaults()))
        if prep is not None:
            phases[phase.name] = prep
    savings_plans = _savings_plans(scenario, plan, phases, reasons)
    blocks = _capacity_blocks(scenario, plan, book, reasons)
    return PreparedPlan(scenario=scenario, plan=plan, phases=phases,
                        commitments=tuple(commitments), owned=tuple(owned),
                        infeasible_reasons=tuple(reasons), sim_defaults=sim_defaults,
                        throughput_error=LogNormal(
                            sigma=allin_loss_defaults().throughput_error_sigma),
                        savings_plans=savings_plans, capacity_blocks=blocks)


def _rentals(phases: dict[str, PhasePrep]) -> list[tuple[str, RentalPool]]:
    """Every rental pool the phases use, with the phase, in phase order."""
    out: list[tuple[str, RentalPool]] = []
    for name, phase in phases.items():
        sources = ([e.source for e in phase.entries] if isinstance(phase, ServingPrep)
                   else [phase.source])
        for source in sources:
            out.extend((name, pool) for pool in (source.rental, source.spill, source.fallback)
                       if pool is not None)
    return out


def _savings_plans(scenario: Scenario, plan: Plan, phases: dict[str, PhasePrep],
                   reasons: list[str]) -> tuple[SavingsPlanPool, ...]:
    """The plan's savings plans priced against its rental pools; family plans are applied
    before compute plans (AWS applies EC2 Instance Savings Plans first: the narrower plan)."""
    rentals = [pool for _, pool in _rentals(phases)]
    pools = []
    for sp in plan.savings_plans:
        try:
            pools.append(savings_plan_pool(sp, rentals, scenario.calendar))
        except CostsimError as error:
            reasons.append(f"plan '{plan.name}', commitment {sp.index}: {error}")
    return tuple(sorted(pools, key=lambda p: (p.plan.family is None, p.plan.index)))


def _capacity_blocks(scenario: Scenario, plan: Plan, book: PriceBook,
                     reasons: list[str]) -> tuple[CapacityBlockPool, ...]:
    """The plan's capacity blocks priced; a block of a GPU no training phase of the plan runs
    on rentals could never be used (a plan buying it is refused, as a reservation of an unused
    GPU is)."""
    pools = []
    trained = {_canonical(plan.use_of(p.name).entries[0].gpu) for p in scenario.phases
               if isinstance(p, TrainingPhase)
               and not plan.use_of(p.name).entries[0].option.is_reserved
               and plan.use_of(p.name).entries[0].option is not PurchaseOption.OWNED}
    for block in plan.capacity_blocks:
        where = f"plan '{plan.name}', commitment {block.index}"
        try:
            pool = capacity_block_pool(book, block, scenario.calendar)
        except CostsimError as error:
            reasons.append(f"{where}: {error}")
            continue
        if pool.gpu not in trained:
            reasons.append(f"{where}: the capacity block of {pool.gpus} {pool.gpu} is for a GPU "
                           "no training phase of the plan rents (a block serves training phases "
                           "whose use entry is on-demand or spot)")
            continue
        pools.append(pool)
    return tuple(pools)


def _savings_plan_prices(prep: PreparedPlan) -> list[PriceUsed]:
    """Each savings plan's rate on each rental pool it covers: on-demand × (1 − discount)."""
    out = []
    rentals = {pool.name: pool for _, pool in _rentals(prep.phases)}
    for sp in prep.savings_plans:
        for name, discount in sp.discounts:
            pool = rentals[name]
            out.append(PriceUsed(
                phase="", pool=f"{sp.name} on {name}", gpu=pool.gpu, option=sp.plan.option,
                rate_usd_per_gpu_hour=pool.rate_usd_per_gpu_hour * (1 - discount),
                upfront_usd=round(sp.plan.obligation_usd * sp.upfront_fraction, 2),
                source=sp.source, effective_date=sp.effective_date, estimate=sp.estimate,
                flags=(PriceFlag.RESERVED_DISCOUNT_ESTIMATE.value,) if sp.estimate else ()))
    return out


def _block_price(block: CapacityBlockPool) -> PriceUsed:
    return PriceUsed(phase="", pool=block.name, gpu=block.gpu, option=block.block.option,
                     rate_usd_per_gpu_hour=block.rate.usd_per_gpu_hour,
                     upfront_usd=block.obligation_usd, source=block.rate.source,
                     effective_date=block.rate.effective_date, estimate=block.rate.estimate,
                     flags=(PriceFlag.RESERVED_DISCOUNT_ESTIMATE.value,)
                     if block.rate.estimate else ())


def _rental_price(phase: str, pool: RentalPool) -> PriceUsed:
    return PriceUsed(phase=phase, pool=pool.name, gpu=pool.gpu, option=pool.option.value,
                     rate_usd_per_gpu_hour=pool.rate_usd_per_gpu_hour, upfront_usd=0.0,
                     source=pool.source, effective_date=pool.offering.effective_date,
                     estimate=pool.estimate,
                     flags=tuple(flag.value for flag in pool.offering.flags))


def _api_price(phase: str, api: ApiPhasePrep) -> PriceUsed:
    """An API's price as the plan relies on it: per 1M input and output tokens (no hourly
    rate; ``rate_usd_per_gpu_hour`` 0)."""
    price = api.price
    return PriceUsed(phase=phase, pool=api.pool, gpu="", option="api",
                     rate_usd_per_gpu_hour=0.0, upfront_usd=0.0, source=price.source,
                     effective_date=price.effective_date, estimate=price.estimate,
                     flags=tuple(f.value for f, on in (
                         (PriceFlag.USER_OVERRIDE, price.user_row),
                         (PriceFlag.API_PRICE_ESTIMATE, price.estimate)) if on),
                     input_usd_per_million_tokens=price.input_usd_per_million_tokens,
                     output_usd_per_million_tokens=price.output_usd_per_million_tokens)


def _commitment_price(phase: str, pool: CommitmentPool) -> PriceUsed:
    return PriceUsed(phase=phase, pool=pool.name, gpu=pool.gpu, option=pool.option.value,
                     rate_usd_per_gpu_hour=pool.rate_usd_per_gpu_hour,
                     upfront_usd=pool.instances * pool.terms.upfront_usd,
                     source=pool.terms.source, effective_date=pool.terms.effective_date,
                     estimate=pool.terms.estimate or any(f.is_estimate for f in pool.flags),
                     flags=tuple(flag.value for flag in pool.flags or pool.offering.flags))


def _canonical(gpu: str) -> str:
    """The canonical name of a GPU, or the name as written when unknown (the phase that names
    it reports that)."""
    found = find_gpu(gpu)
    return found.name if found is not None else gpu


def _training(scenario: Scenario, plan: Plan, phase: TrainingPhase, book: PriceBook,
              defaults: PerfDefaults, allin: AllinLossAssumptions,
              owned: tuple[OwnedPool, ...], reasons: list[str]) -> TrainingPrep | None:
    entry = plan.use_of(phase.name).entries[0]
    where = f"plan '{plan.name}', phase '{phase.name}'"
    try:
        gpu = get_gpu(entry.gpu, source=f"plans.{plan.name}.use.{phase.name}.gpu")
        gpus = entry.count or (phase.layout.gpus if phase.layout else None)
        if gpus is None:
            reasons.append(f"{where}: a training phase needs a GPU count (use.count)")
            return None
        est = training_estimate(scenario, phase, gpu, gpus, defaults)
    except CostsimError as error:
        reasons.append(f"{where}: {error}")
        return None
    source = entry_source(scenario, plan, phase.name, entry, gpus, book, reasons)
    if source is None:
        return None
    if source.rental is not None:
        over = over_quota(scenario, source.rental, source.rental.gpus_paid_for(gpus), where)
        if over is not None:
            reasons.append(over)
            return None
    slowdown = 1.0
    pool = next((p for p in owned if p.gpu == gpu.name), None)
    if entry.option is PurchaseOption.OWNED and pool is not None:
        try:
            on_parts = owned_training(scenario, pool, phase, gpu, gpus, defaults)
        except CostsimError as error:
            reasons.append(f"{where}: on owned {pool.server.name}: {error}")
            return None
        if on_parts.shortfalls:
            reasons.extend(f"{where}: owned {pool.server.name}: {why}"
                           for why in on_parts.shortfalls)
            return None
        est, slowdown = on_parts.estimate, on_parts.slowdown
    goodput = est.goodput
    steady_s = goodput.steady_wall_time_s * slowdown
    return TrainingPrep(
        phase=phase, source=source, gpus=gpus, steady_s=steady_s,
        tokens_per_s=est.step.tokens_per_s / slowdown, layout=layout_label(est.setup),
        mfu=est.step.mfu / slowdown, checkpoint_s=goodput.checkpoint_s,
        interval_s=checkpoint_interval_s(goodput),
        restart_s=goodput.restart_s,
        faults_per_gpu_hour=defaults.goodput.interruptions_per_gpu_hour,
        evaluation_fraction=goodput.evaluation_fraction,
        checkpoint_bytes=est.params_total * defaults.goodput.checkpoint_bytes_per_param,
        # the calibrated loss grows with the run's own duration (perf.allin_loss)
        extra_loss=phase.allin_extra_loss or LogNormal(
            sigma=allin.extra_loss_sigma, median=extra_loss_median(allin, steady_s)),
        model_error=(LogNormal(sigma=allin.training_extra_sigma)
                     if scenario.uncertainty.throughput_error is None else NO_MODEL_ERROR),
        basis=est.basis, profile_source=est.profile_source)


def _serving_model_error(scenario: Scenario, entries: tuple[ServingEntryPrep, ...],
                         allin: AllinLossAssumptions) -> Distribution:
    """The serving model's error beyond the shared throughput error, drawn once per replication
    for the phase: lognormal, median 1, log-sd √(σ_serve² − σ²) (its error on the blind
    held-out sets, costsim/data/allin_loss.csv), so that a predicted capacity carries σ_serve
    in all; none where the scenario sets its own throughput_error (which replaces both) or
    where no capacity of the phase is predicted."""
    if (scenario.uncertainty.throughput_error is not None
            or not any(entry.predicted_share > 0 for entry in entries)
            or allin.serving_extra_sigma <= 0):
        return NO_MODEL_ERROR
    return LogNormal(sigma=allin.serving_extra_sigma)


def training_estimate(scenario: Scenario, phase: TrainingPhase, gpu: GpuSpec, gpus: int,
                      defaults: PerfDefaults) -> TrainingEstimate:
    """The performance model's run of ``phase`` on ``gpus`` GPUs of ``gpu``: the phase's
    precision, sequence length, framework and fixed layout degrees, the fastest fitting layout
    for the rest (shared with the optimizer's training front); a measured run of the scenario
    (``measurements.training``) that covers it sets the steady rate
    (:mod:`costsim.perf.measured_training`).

    Memoized (:mod:`costsim.sim.memo`): the optimizer's training front, its probes and every
    candidate plan ask for the same runs. The key is the phase without its ``after`` links (a
    probe drops them; the estimate never reads them), so the cold computation is a function
    of its key alone; a failure is not memoized.

    Raises:
        CostsimError: the setup is invalid or no layout fits.
    """
    return _training_estimate(scenario.model(phase.model).architecture,
                              phase if not phase.after else replace(phase, after=()), gpu, gpus,
                              scenario.measurements.training, Same(defaults))


# Distinct runs kept: a training front rates a few hundred (GPU, count, framework); each
# estimate is a few KiB
_RUNS_KEPT = 4096


@functools.lru_cache(maxsize=_RUNS_KEPT)
def _training_estimate(arch: Architecture, phase: TrainingPhase, gpu: GpuSpec, gpus: int,
                       measured: tuple[TrainingPoint, ...],
                       defaults: Same[PerfDefaults]) -> TrainingEstimate:
    base, fixed = phase_setup(arch, phase, gpu)
    return estimate_measured_training_run(arch, gpu, gpus, phase.tokens, base, fixed,
                                          measured=measured, defaults=defaults.value,
                                          price_usd_per_gpu_hour=0.0)



def layout_label(setup: TrainingSetup) -> str:
    """A training layout as the simulator reports it."""
    lay = setup.layout
    return (f"tp={lay.tp} pp={lay.pp} dp={lay.dp} zero={lay.zero} "
            f"micro_batch={setup.micro_batch} grad_accum={setup.grad_accum} "
            f"recompute={setup.recompute.value}")


def checkpoint_interval_s(goodput: Goodput) -> float:
    """The simulator's checkpoint interval τ: Young/Daly's, at least a second; without faults
    (infinite interval) one longer than the run, so it never checkpoints."""
    if math.isfinite(goodput.checkpoint_interval_s):
        return max(goodput.checkpoint_interval_s, 1.0)
    return goodput.steady_wall_time_s + 1.0


def _experiments(scenario: Scenario, plan: Plan, phase: ExperimentsPhase, book: PriceBook,
                 defaults: PerfDefaults, sim_defaults: SimAssumptions,
                 commitments: tuple[CommitmentPool, ...], owned: tuple[OwnedPool, ...],
                 reasons: list[str]) -> ExperimentsPrep | None:
    entry = plan.use_of(phase.name).entries[0]
    where = f"plan '{plan.name}', phase '{phase.name}'"
    job = phase.job
    try:
        gpu = get_gpu(entry.gpu, source=f"plans.{plan.name}.use.{phase.name}.gpu")
        usable = int(gpu.capacity_bytes * DEFAULT_POLICY.train_utilization)
        if isinstance(job, GenericJob):
            host = job.host_ram_gib if job.host_ram_gib is not None else (
                job.gpu_memory_gib * sim_defaults.generic_job_host_ram_per_vram)
            need = JobNeed(gpus=job.gpus, gpu_bytes=gib_to_bytes(job.gpu_memory_gib),
                           host_ram_bytes=gib_to_bytes(host))
            hours: Distribution = job.gpu_hours
        else:
            need, hours = _model_job(scenario, job, gpu, defaults, f"phases.{phase.name}.job")
    except CostsimError as error:
        reasons.append(f"{where}: {error}")
        return None
    source = entry_source(scenario, plan, phase.name, entry, need.gpus, book, reasons,
                          host_ram_gib_per_gpu=need.host_ram_bytes / need.gpus / BYTES_PER_GIB)
    if source is None:
        return None
    node = _node_shape(source, usable, commitments, owned)
    if not fits_anywhere(need, node):
        reasons.append(f"{where}: a job needs {need.gpus} GPU(s) with "
                       f"{need.gpu_bytes / BYTES_PER_GIB:.1f} GiB each and "
                       f"{need.host_ram_bytes / BYTES_PER_GIB:.1f} GiB of host RAM; a "
                       f"{node.gpus}x{gpu.name} node with {node.host_ram_bytes / BYTES_PER_GIB:.0f}"
                       f" GiB RAM ({usable / BYTES_PER_GIB:.1f} GiB usable per GPU) cannot run it")
        return None
    nodes = None if entry.count is None else math.ceil(entry.count / node.gpus)
    slots = None
    if source.rental is not None and nodes is not None:
        over = over_quota(scenario, source.rental, nodes * node.gpus, where)
        if over is not None:
            reasons.append(over)
            return None
    elif nodes is None:
        slots = quota_units(scenario, source.rental or source.spill, need.gpus)
        if slots == 0:
            quota = pool_quota(scenario, source.rental or source.spill)  # type: ignore[arg-type]
            assert quota is not None
            reasons.append(f"{where}: {quota.describe()} is smaller than one job of "
                           f"{need.gpus} {source.gpu} (whole instances)")
            return None
    return ExperimentsPrep(phase=phase, source=source, need=need, gpu_hours=hours, node=node,
                           nodes=nodes, max_concurrent_jobs=slots)


def _model_job(scenario: Scenario, job: ModelJob, gpu: GpuSpec, defaults: PerfDefaults,
               source: str) -> tuple[JobNeed, Distribution]:
    """A model job on one GPU: its memory from the memory engine, its GPU-hours from the
    performance model's steady time for the job's tokens (memoized as :func:`training_estimate`
    is: every probe and candidate that runs the phase on ``gpu`` asks the same)."""
    return _model_job_on(scenario.model(job.model).architecture, job, gpu, Same(defaults),
                         source)


@functools.lru_cache(maxsize=_RUNS_KEPT)
def _model_job_on(arch: Architecture, job: ModelJob, gpu: GpuSpec,
                  same_defaults: Same[PerfDefaults], source: str) -> tuple[JobNeed, Distribution]:
    defaults = same_defaults.value
    base = training_setup(arch, gpu, task=job.task, precision=job.precision,
                          seq_len=job.seq_len, lora_rank=job.lora_rank, quant=job.quant,
                          source=f"{source}.precision")
    memory = estimate_training(arch, gpu, base)
    est = estimate_training_run(arch, gpu, 1, job.tokens, base, LayoutConstraints(tp=1, pp=1,
                                dp=1), defaults=defaults, price_usd_per_gpu_hour=0.0)
    ram = host_ram(weights_storage_bytes=memory.weights_bytes, gpus=1,
                   capacity_bytes=gpu.capacity_bytes,
                   tokens_per_micro_batch=est.step.setup.micro_batch * base.seq_len)
    need = JobNeed(gpus=1, gpu_bytes=est.memory_total_bytes, host_ram_bytes=ram.total_bytes)
    return need, Fixed(value=est.goodput.steady_wall_time_s / SECONDS_PER_HOUR)


def _node_shape(source: EntrySource, usable: int, commitments: tuple[CommitmentPool, ...],
                owned: tuple[OwnedPool, ...]) -> NodeShape:
    """The node a job lands on: the rented offering, the committed offering or the server."""
    offering = None
    if source.rental is not None:
        offering = source.rental.offering
    elif source.implied_commitment is not None:
        offering = source.implied_commitment.offering
    else:
        for pool in commitments:
            if pool.gpu == source.gpu:
                offering = pool.offering
                break
    if offering is not None:
        return NodeShape(gpus=offering.gpus_per_instance, gpu_usable_bytes=usable,
                         host_ram_bytes=gib_to_bytes(offering.host_ram_gib))
    for server_pool in owned:
        if server_pool.gpu == source.gpu:
            return NodeShape(gpus=server_pool.server.gpu_count, gpu_usable_bytes=usable,
                             host_ram_bytes=gib_to_bytes(server_pool.server.ram_gib))
    raise AssertionError("a bounded source without a pool")  # entry_source checked this
