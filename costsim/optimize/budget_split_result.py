"""Result types of the budget split (``optimize/budget_split.py``, ``optimize/spend_split.py``).

Spend is grouped as the seed's budget rule groups it (docs/optimizer.md "Budget split"):
GPUs, memory + storage (system RAM, NVMe), CPU, network + other (NICs, fabric, chassis, data
transfer); a simulated plan's spend adds operations (power, facility, maintenance and staff).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from costsim.domain.host_parts import NodeParts
from costsim.domain.owned import BomLine
from costsim.domain.plans import Plan


class SpendGroup(StrEnum):
    """The seed rule's part groups."""

    GPU = "gpu"
    MEMORY_STORAGE = "memory-storage"
    CPU = "cpu"
    NETWORK_OTHER = "network-other"
    OPERATIONS = "operations"  # power, facility, staff: running costs, not parts (plans only)


# A BOM line's kind (costsim/data/server_components.csv) → its group.
BOM_KIND_GROUP: dict[str, SpendGroup] = {
    "gpu": SpendGroup.GPU, "ram": SpendGroup.MEMORY_STORAGE, "nvme": SpendGroup.MEMORY_STORAGE,
    "cpu": SpendGroup.CPU, "nic": SpendGroup.NETWORK_OTHER, "fabric": SpendGroup.NETWORK_OTHER,
    "chassis": SpendGroup.NETWORK_OTHER,
}


class SplitObjective(StrEnum):
    """What the budget split optimizes."""

    THROUGHPUT = "throughput"  # the most delivered tokens/s within the budget
    COST = "cost"  # the least capex that meets every training phase's deadline


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupShare:
    """Spend on one part group and its share of the total."""

    group: SpendGroup
    usd: float
    share: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleCheck:
    """A seed rule of thumb against the optimum: the rule's range and the measured value."""

    rule: str
    low: float
    high: float
    measured: float

    @property
    def holds(self) -> bool:
        """True when the measured value is inside the rule's range."""
        return self.low <= self.measured <= self.high


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseOnCluster:
    """One training phase on the chosen cluster."""

    phase: str
    tokens: float
    steady_tokens_per_s: float
    delivered_tokens_per_s: float
    wall_time_s: float
    deadline_s: float | None
    cpu_factor: float
    read_factor: float
    goodput: float
    ram_need_gib: float
    ram_to_vram_needed: float
    ram_to_vram_with_offload: float  # had the optimizer been offloaded (not modelled)
    nvme_need_tb: float
    layout: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterChoice:
    """An owned cluster: ``servers`` identical servers with their parts, and what it delivers."""

    server: str
    gpu: str
    gpus_per_server: int
    servers: int
    parts: NodeParts
    capex_usd: float  # all servers
    phases: tuple[PhaseOnCluster, ...]

    @property
    def gpus(self) -> int:
        """GPUs across the cluster."""
        return self.servers * self.gpus_per_server

    @property
    def tokens(self) -> float:
        """Tokens over every training phase."""
        return sum(p.tokens for p in self.phases)

    @property
    def wall_time_s(self) -> float:
        """The training phases one after another on the cluster."""
        return sum(p.wall_time_s for p in self.phases)

    @property
    def tokens_per_s(self) -> float:
        """Delivered tokens per wall-clock second over every training phase."""
        return self.tokens / self.wall_time_s


@dataclass(frozen=True, slots=True, kw_only=True)
class SensitivityPoint:
    """The optimum with one part's amount changed (every other part as chosen)."""

    part: str  # servers, ram_gib, nvme_tb, cpu_cores, nic_gbps
    amount: float
    chosen: bool
    capex_usd: float
    tokens_per_s: float  # 0 when a part falls short (RAM, NVMe capacity)
    within_budget: bool
    meets_deadlines: bool  # every training phase by its deadline (after the lead time)


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetSplitResult:
    """The best owned cluster for the scenario's training phases, and how its money splits."""

    scenario: str
    objective: SplitObjective
    budget_usd: float | None
    best: ClusterChoice
    bom: tuple[BomLine, ...]  # one server's
    shares: tuple[GroupShare, ...]
    rules: tuple[RuleCheck, ...]
    sensitivity: tuple[SensitivityPoint, ...]
    plan: Plan  # the chosen cluster as a scenario plan (owned servers, one use per phase)
    configurations: int  # (server, GPUs, count, parts) combinations priced and rated
    skipped: tuple[str, ...]  # servers or counts left out, and why


@dataclass(frozen=True, slots=True, kw_only=True)
class SpendSplit:
    """A simulated plan's economic cost split into the part groups."""

    plan: str
    total_usd: float
    shares: tuple[GroupShare, ...]
    notes: tuple[str, ...]  # how rented instance-hours were attributed
