"""Where a phase's GPUs come from, priced once per plan.

A use entry's option decides the source: on-demand and spot rent job-sized instances
(:class:`~costsim.sim.pools.RentalPool`); a reserved option draws on the plan's commitments of
that GPU (or, when the plan has none, on one bought for the phase at its start: an *implied*
commitment); ``owned`` draws on the plan's servers of that GPU. ``spill`` and ``fallback`` are
rental pools for what the bounded capacity cannot take.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from costsim.catalog.gpus import canonical_gpu_name
from costsim.catalog.prices import PriceBook
from costsim.domain.phases import ExperimentsPhase, GenericJob, TrainingPhase
from costsim.domain.plans import Commitment, Plan, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.errors import CostsimError
from costsim.sim.pools import CommitmentPool, RentalPool, commitment_pool, rental_pool
from costsim.sim.quotas import over_quota


@dataclass(frozen=True, slots=True, kw_only=True)
class EntrySource:
    """The priced sources of one use entry."""

    entry: UseEntry
    gpu: str
    rental: RentalPool | None  # on-demand / spot entries, and the elastic part of a fleet
    bounded: bool  # reserved or owned: GPUs come from the plan's bounded pools
    implied_commitment: CommitmentPool | None  # start_s set when the phase starts
    spill: RentalPool | None
    fallback: RentalPool | None

    @property
    def price_pool(self) -> RentalPool | CommitmentPool | None:
        """The pool whose rate prices this entry's work first."""
        return self.rental or self.implied_commitment or self.spill


def price_factor(scenario: Scenario, gpu: str) -> float:
    """The scenario's planned change of ``gpu``'s rental prices (``gpu_price_change_pct``)."""
    return scenario.prices.price_factor(gpu)


def entry_source(scenario: Scenario, plan: Plan, phase: str, entry: UseEntry, job_gpus: int,
                 book: PriceBook, reasons: list[str],
                 host_ram_gib_per_gpu: float = 0.0) -> EntrySource | None:
    """Price the sources of ``entry`` for jobs of ``job_gpus`` GPUs needing
    ``host_ram_gib_per_gpu`` of host RAM each; a problem becomes a reason the plan is
    infeasible (appended to ``reasons``) and None."""
    where = f"plan '{plan.name}', phase '{phase}'"
    try:
        gpu = canonical_gpu_name(entry.gpu, source=f"plans.{plan.name}.use.{phase}.gpu")
        cloud, region = entry.cloud or plan.cloud, entry.region or plan.region
        factor = price_factor(scenario, gpu)

        def rent(option: PurchaseOption | None) -> RentalPool | None:
            if option is None:
                return None
            return rental_pool(book, gpu, job_gpus, option, cloud=cloud, region=region,
                               price_factor=factor,
                               min_host_ram_gib_per_gpu=host_ram_gib_per_gpu)

        option = entry.option
        bounded = option.is_reserved or option is PurchaseOption.OWNED
        implied = None
        if option.is_reserved and not any(canonical_gpu_name(c.gpu, "commitments") == gpu
                                          for c in plan.commitments):
            if entry.count is None:
                reasons.append(f"{where}: option '{option}' with no commitment of {gpu} in the "
                               "plan needs a count (the GPUs to reserve for the phase)")
                return None
            payment = option.payment or Payment.NO_UPFRONT
            template = Commitment(gpu=gpu, count=entry.count, term_years=option.term_years or 1,
                                  payment=payment, start=scenario.calendar.start,
                                  cloud=cloud, region=region)
            implied = commitment_pool(book, template, scenario.calendar, job_gpus=job_gpus,
                                      price_factor=factor,
                                      implied_by_phase=phase)
            over = over_quota(scenario, implied, implied.gpus, where)
            if over is not None:
                reasons.append(over)
                return None
        if option is PurchaseOption.OWNED and not any(
                o.server and _owned_gpu(o.server, scenario) == gpu for o in plan.owned):
            reasons.append(f"{where}: option 'owned' but the plan buys no {gpu} servers")
            return None
        return EntrySource(entry=entry, gpu=gpu, rental=None if bounded else rent(option),
                           bounded=bounded, implied_commitment=implied, spill=rent(entry.spill),
                           fallback=rent(entry.fallback))
    except CostsimError as error:
        reasons.append(f"{where}: {error}")
        return None


def _owned_gpu(server: str, scenario: Scenario) -> str:
    for declared in scenario.servers:
        if declared.name == server:
            return declared.gpu
    from costsim.catalog.servers import server_bom

    return server_bom(server, source="owned").gpu


def plan_commitments(scenario: Scenario, plan: Plan, book: PriceBook,
                     reasons: list[str]) -> tuple[CommitmentPool, ...]:
    """Price the plan's own commitments (each a pool from its start date), at the plan's cloud
    and region unless the commitment names its own, on instances that hold the largest job the
    plan runs on reserved GPUs of that type."""
    pools = []
    for i, commitment in enumerate(plan.commitments):
        try:
            gpu = canonical_gpu_name(commitment.gpu, f"plans.{plan.name}.commitments.{i}.gpu")
            placed = replace(commitment, cloud=commitment.cloud or plan.cloud,
                             region=commitment.region or plan.region)
            pools.append(commitment_pool(book, placed, scenario.calendar,
                                         job_gpus=_largest_reserved_job(scenario, plan, gpu),
                                         price_factor=price_factor(scenario, gpu)))
        except CostsimError as error:
            reasons.append(f"plan '{plan.name}', commitment {i}: {error}")
    return tuple(pools)


def _largest_reserved_job(scenario: Scenario, plan: Plan, gpu: str) -> int:
    """GPUs of the largest single job the plan runs on reserved ``gpu``s: a training run's
    count, a generic experiment job's GPUs; model jobs and serving replicas are taken as one
    GPU (their sizes are known only once the engines have run, and most are single-GPU)."""
    largest = 1
    for use in plan.uses:
        phase = scenario.phase(use.phase)
        for entry in use.entries:
            if not entry.option.is_reserved or canonical_gpu_name(entry.gpu, "use") != gpu:
                continue
            if isinstance(phase, TrainingPhase) and entry.count is not None:
                largest = max(largest, entry.count)
            elif isinstance(phase, ExperimentsPhase) and isinstance(phase.job, GenericJob):
                largest = max(largest, phase.job.gpus)
    return largest
