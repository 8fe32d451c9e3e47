"""The budget split's pieces: the scenario's training work, the chosen cluster's figures, its
spend by part group, the seed rules against it, and the cluster as a scenario plan."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from costsim.catalog.gpus import get_gpu
from costsim.catalog.servers import declared_server, server_bom, server_row
from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.host_parts import HostPartAssumptions, NodeParts
from costsim.domain.owned import BomLine, OwnedServer, ServerDeclaration
from costsim.domain.performance import PerfDefaults
from costsim.domain.phases import TrainingPhase
from costsim.domain.plans import OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.workload import TrainingSetup
from costsim.optimize.budget_split_result import (
    BOM_KIND_GROUP,
    ClusterChoice,
    GroupShare,
    PhaseOnCluster,
    RuleCheck,
    SpendGroup,
)
from costsim.perf.host_parts import dataset_bytes_of, training_on_parts
from costsim.perf.layouts import LayoutConstraints
from costsim.sim.phase_setup import phase_setup
from costsim.units import BYTES_PER_GB, BYTES_PER_GIB, SECONDS_PER_DAY

# The seed articles' rules (docs/optimizer.md "Budget split"): GPUs 60–70 % and memory +
# storage 20–30 % of the budget; system RAM 1.5–2× total VRAM.
GPU_SHARE_RULE = (0.60, 0.70)
MEMORY_STORAGE_SHARE_RULE = (0.20, 0.30)
RAM_TO_VRAM_RULE = (1.5, 2.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseWork:
    """A training phase as the budget split needs it."""

    phase: TrainingPhase
    arch: Architecture
    dataset_bytes: float
    checkpoints_retained: int

    @property
    def name(self) -> str:
        """The phase's name."""
        return self.phase.name

    @property
    def tokens(self) -> float:
        """Tokens the phase trains on."""
        return self.phase.tokens

    @property
    def deadline_s(self) -> float | None:
        """The deadline in seconds from the phase's start (None: none)."""
        days = self.phase.deadline_days
        return None if days is None else days * SECONDS_PER_DAY

    def setup(self, gpu: GpuSpec) -> tuple[TrainingSetup, LayoutConstraints]:
        """The phase's training setup on ``gpu`` and its fixed layout, as the simulator reads
        them (the layout search fills in the rest)."""
        return phase_setup(self.arch, self.phase, gpu)


def declaration_of(server: str,
                   declared: tuple[ServerDeclaration, ...]) -> ServerDeclaration | None:
    """The scenario's declaration named ``server`` (its ``servers:`` block), or None for a
    shipped server (the loader refuses a declared name that hides a shipped one)."""
    return next((d for d in declared if d.name == server), None)


def split_server(server: str, gpus_per_server: int, parts: NodeParts | None,
                 declared: tuple[ServerDeclaration, ...] = ()) -> OwnedServer:
    """One server of a candidate cluster: a declared server as declared (its parts and BOM are
    fixed), a shipped one with ``gpus_per_server`` GPUs and ``parts`` (None: as shipped)."""
    mine = declaration_of(server, declared)
    if mine is not None:
        return declared_server(mine)
    if parts is None:
        return server_bom(server, gpus_per_server, source="budget split")
    return server_bom(server, gpus_per_server, source="budget split", ram_gib=parts.ram_gib,
                      nvme_tb=parts.nvme_tb, cpu_cores=parts.cpu_cores,
                      nic_gbps=parts.nic_gbps)


def lead_time_s(server: str, declared: tuple[ServerDeclaration, ...] = ()) -> float:
    """Weeks from order to delivery of ``server`` (its declaration, else servers.csv), in
    seconds."""
    mine = declaration_of(server, declared)
    weeks = (mine.lead_time_weeks if mine is not None
             else float(server_row(server)["lead_time_weeks"]))
    return weeks * 7 * SECONDS_PER_DAY


def time_left_s(work: PhaseWork, lead_s: float) -> float:
    """Seconds a phase may train by its deadline on servers bought on the scenario's first day:
    a phase that starts with the scenario waits for their delivery (inf: no deadline)."""
    if work.deadline_s is None:
        return math.inf
    return work.deadline_s - (lead_s if not work.phase.after else 0.0)


def phase_works(scenario: Scenario, assumptions: HostPartAssumptions) -> tuple[PhaseWork, ...]:
    """The scenario's training phases; the dataset is ``data.dataset_gb`` when given, else
    each phase's tokens pre-tokenized."""
    works = []
    for phase in scenario.phase_order():
        if not isinstance(phase, TrainingPhase):
            continue
        arch = scenario.model(phase.model).architecture
        data = scenario.data.dataset_gb * BYTES_PER_GB
        works.append(PhaseWork(
            phase=phase, arch=arch,
            dataset_bytes=data if data > 0 else dataset_bytes_of(phase.tokens, assumptions),
            checkpoints_retained=scenario.data.checkpoints_retained))
    return tuple(works)


def cluster_choice(server: str, gpus_per_server: int, servers: int, parts: NodeParts,
                   works: tuple[PhaseWork, ...], defaults: PerfDefaults,
                   assumptions: HostPartAssumptions,
                   declared: tuple[ServerDeclaration, ...] = ()) -> ClusterChoice:
    """The cluster's figures per phase from the part-shortage model (``declared``: the
    scenario's own servers, one of which ``server`` may name).

    Raises:
        InfeasibleError: a phase does not fit the GPUs' memory.
    """
    one = split_server(server, gpus_per_server, parts, declared)
    gpu = get_gpu(one.gpu)
    gpus = servers * gpus_per_server
    phases = []
    for work in works:
        base, fixed = work.setup(gpu)
        run = training_on_parts(work.arch, gpu, gpus, work.tokens, base, fixed,
                                parts, gpus_per_node=gpus_per_server,
                                checkpoints_retained=work.checkpoints_retained,
                                defaults=defaults, assumptions=assumptions,
                                dataset_bytes=work.dataset_bytes)
        rate = run.delivered_tokens_per_s
        lay = run.estimate.setup.layout
        phases.append(PhaseOnCluster(
            phase=work.name, tokens=work.tokens, steady_tokens_per_s=run.steady_tokens_per_s,
            delivered_tokens_per_s=rate,
            wall_time_s=work.tokens / rate if rate > 0 else math.inf,
            deadline_s=work.deadline_s, cpu_factor=run.cpu_factor,
            read_factor=run.read_factor, goodput=run.goodput.goodput,
            ram_need_gib=run.needs.ram_bytes / BYTES_PER_GIB,
            ram_to_vram_needed=run.needs.ram_to_vram,
            ram_to_vram_with_offload=run.needs.ram_to_vram_with_offload,
            nvme_need_tb=run.needs.nvme_bytes / 1e12,
            layout=f"tp={lay.tp} pp={lay.pp} dp={lay.dp} zero={lay.zero}"))
    capex = servers * one.capex_usd
    return ClusterChoice(server=server, gpu=gpu.name, gpus_per_server=gpus_per_server,
                         servers=servers, parts=parts, capex_usd=round(capex, 2),
                         phases=tuple(phases))


def shares_of(amounts: dict[SpendGroup, float]) -> tuple[GroupShare, ...]:
    """Every group's amount and share of the total, in the groups' order."""
    total = sum(amounts.values())
    return tuple(GroupShare(group=g, usd=round(amounts.get(g, 0.0), 2),
                            share=amounts.get(g, 0.0) / total if total else 0.0)
                 for g in SpendGroup)


def group_shares(bom: tuple[BomLine, ...], servers: int) -> tuple[GroupShare, ...]:
    """The cluster's capex by part group (``servers`` copies of one server's BOM)."""
    amounts: dict[SpendGroup, float] = defaultdict(float)
    for line in bom:
        amounts[BOM_KIND_GROUP.get(line.kind, SpendGroup.NETWORK_OTHER)] += (
            servers * line.amount_usd)
    return shares_of(amounts)


def rule_checks(shares: tuple[GroupShare, ...], choice: ClusterChoice) -> tuple[RuleCheck, ...]:
    """The seed's budget and RAM rules against the optimum (chosen and needed RAM)."""
    by_group = {s.group: s.share for s in shares}
    vram = get_gpu(choice.gpu).capacity_bytes * choice.gpus_per_server
    needed = max(p.ram_to_vram_needed for p in choice.phases)
    return (
        RuleCheck(rule="GPUs are 60–70 % of the budget", low=GPU_SHARE_RULE[0],
                  high=GPU_SHARE_RULE[1], measured=by_group[SpendGroup.GPU]),
        RuleCheck(rule="memory + storage are 20–30 % of the budget",
                  low=MEMORY_STORAGE_SHARE_RULE[0], high=MEMORY_STORAGE_SHARE_RULE[1],
                  measured=by_group[SpendGroup.MEMORY_STORAGE]),
        RuleCheck(rule="system RAM chosen is 1.5–2× VRAM", low=RAM_TO_VRAM_RULE[0],
                  high=RAM_TO_VRAM_RULE[1],
                  measured=choice.parts.ram_gib * BYTES_PER_GIB / vram),
        RuleCheck(rule="system RAM needed is 1.5–2× VRAM", low=RAM_TO_VRAM_RULE[0],
                  high=RAM_TO_VRAM_RULE[1], measured=needed),
        RuleCheck(rule="system RAM needed with the optimizer offloaded is 1.5–2× VRAM",
                  low=RAM_TO_VRAM_RULE[0], high=RAM_TO_VRAM_RULE[1],
                  measured=max(p.ram_to_vram_with_offload for p in choice.phases)),
    )


def plan_of(scenario: Scenario, choice: ClusterChoice) -> Plan:
    """The cluster as a plan: its servers bought on the scenario's first day with the chosen
    parts, every training phase on all its GPUs (other phases are left to the user). A server
    the scenario declares is bought as declared (its ``owned`` entry takes no part keys)."""
    if declaration_of(choice.server, scenario.servers) is not None:
        purchase = OwnedPurchase(server=choice.server, count=choice.servers,
                                 purchase=scenario.calendar.start)
    else:
        purchase = OwnedPurchase(server=choice.server, count=choice.servers,
                                 purchase=scenario.calendar.start,
                                 ram_gib=choice.parts.ram_gib, nvme_tb=choice.parts.nvme_tb,
                                 cpu_cores=choice.parts.cpu_cores,
                                 nic_gbps=choice.parts.nic_gbps)
    uses = tuple(PhaseUse(phase=p.phase, entries=(UseEntry(gpu=choice.gpu,
                                                           option=PurchaseOption.OWNED,
                                                           count=choice.gpus),))
                 for p in choice.phases)
    return Plan(name="budget-split", uses=uses, owned=(purchase,))


__all__ = ["PhaseWork", "cluster_choice", "declaration_of", "group_shares", "lead_time_s",
           "phase_works", "plan_of", "rule_checks", "shares_of", "split_server", "time_left_s"]
