"""The budget split: which owned cluster (GPU server type and count, RAM, NVMe, CPU cores and
NIC per server) delivers the most training throughput for a budget, or meets the deadlines
at the least capex (docs/optimizer.md "Budget split").

**Why an exact enumeration, not a MILP.** Delivered throughput is a product of nonlinear
terms — the step model's communication (a layout re-searched per network), min(1, c/need)
for the CPU, the goodput's √ checkpoint interval, and RAM/NVMe thresholds — so a MILP needs
piecewise linearizations that approximate what the perf engine computes. The choices are
discrete and few: server types × GPU counts × server counts (bounded by the budget) × NIC
options need one step-model call each (~10 ms); within each, the RAM × NVMe × CPU options
(11 × 6 × 7) are scored together with numpy, because each part enters throughput and price
through its own factor and BOM line. Enumerating all of them is exact by construction and
takes seconds.

The option ladders are what servers are built from: RAM as DIMM populations (128 GiB … 4 TiB,
at least one 16 GiB DIMM in each of a socket's 8 channels; DGX H100: 32 × 64 GiB), NVMe as
1–16 data drives of ``nvme_drive_tb`` (DGX H100: 8 × 3.84 TB), CPUs as the board's sockets ×
a core count of one family (8–64 cores per socket, priced per core), NICs as 1, 2, 4 or 8
of the server's NIC model carrying GPU traffic (HGX: up to one 400G NIC per GPU).

A server the scenario declares (``servers:``) is a candidate beside the shipped ones, as it
was declared: its GPU count, parts and BOM are fixed (one rung each), so only the number of
servers varies; its capex is its BOM's total.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from costsim.catalog.gpus import get_gpu
from costsim.catalog.host_parts import host_part_assumptions
from costsim.catalog.perf_defaults import perf_defaults
from costsim.catalog.servers import (
    component_row,
    default_nic_gbps,
    server_bom,
    server_names,
    server_row,
)
from costsim.domain.gpu import GpuSpec
from costsim.domain.host_parts import HostPartAssumptions, NodeParts
from costsim.domain.owned import ServerDeclaration
from costsim.domain.performance import PerfDefaults
from costsim.domain.scenario import Scenario
from costsim.errors import CatalogError, CostsimError, InputError
from costsim.optimize.budget_split_parts import (
    PhaseWork,
    cluster_choice,
    declaration_of,
    group_shares,
    lead_time_s,
    phase_works,
    plan_of,
    rule_checks,
    split_server,
    time_left_s,
)
from costsim.optimize.budget_split_result import (
    BudgetSplitResult,
    SensitivityPoint,
    SplitObjective,
)
from costsim.perf.host_parts import (
    cpu_factor,
    nvme_goodput,
    part_needs,
    read_factor,
    saved_params,
    steady_on_nic,
)
from costsim.units import BYTES_PER_GIB

RAM_GIB_OPTIONS = (128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
NVME_DRIVE_COUNTS = (1, 2, 4, 8, 12, 16)
CORES_PER_SOCKET = (8, 16, 24, 32, 48, 56, 64)
NIC_COUNTS = (1, 2, 4, 8)
MIN_RAM_GIB_PER_SOCKET = 128  # every one of a socket's 8 DDR5 channels holds a 16 GiB DIMM
MAX_SERVERS = 64  # the enumeration's bound on servers of one type (a budget may buy more)
BYTES_PER_TB = 1e12
# Throughputs within 0.1 % of the best are ties, won by the lower capex: the model resolves
# nothing that fine (its steady-state throughput error is σ ≈ 10 %, perf_assumptions.csv
# allin), and without it a budget's leftover buys parts for a 0.01 % gain.
THROUGHPUT_TIE_SHARE = 0.001


@dataclass(frozen=True, slots=True, kw_only=True)
class PartLadder:
    """The part amounts one server type can be built with."""

    ram_gib: tuple[int, ...]
    nvme_tb: tuple[float, ...]
    cpu_cores: tuple[int, ...]
    nic_gbps: tuple[float, ...]


def part_ladder(server: str, gpus: int, assumptions: HostPartAssumptions) -> PartLadder:
    """The discrete part options of ``server`` with ``gpus`` GPUs (see the module docstring)."""
    row = server_row(server)
    sockets = int(row["cpu_count"])
    per_socket = int(component_row(row["cpu_component"])["capacity"])
    nic = float(component_row(row["nic_component"])["capacity"])
    most_nics = max(1, round(default_nic_gbps(server, gpus) / nic))
    return PartLadder(
        ram_gib=tuple(r for r in RAM_GIB_OPTIONS if r >= sockets * MIN_RAM_GIB_PER_SOCKET),
        nvme_tb=tuple(round(k * assumptions.nvme_drive_tb, 2) for k in NVME_DRIVE_COUNTS),
        cpu_cores=tuple(sockets * c for c in CORES_PER_SOCKET if c <= per_socket),
        nic_gbps=tuple(k * nic for k in NIC_COUNTS if k <= most_nics),
    )


def declared_ladder(parts: NodeParts) -> PartLadder:
    """A declared server's one rung of each part: its parts as declared."""
    return PartLadder(ram_gib=(parts.ram_gib,), nvme_tb=(parts.nvme_tb,),
                      cpu_cores=(parts.cpu_cores,), nic_gbps=(parts.nic_gbps,))


def _line_usd(server: str, gpus: int, kinds: tuple[str, ...], *, ram_gib: int | None = None,
              nvme_tb: float | None = None, cpu_cores: int | None = None,
              nic_gbps: float | None = None) -> float:
    """The BOM lines of ``kinds`` of one shipped server with the given parts."""
    bom = server_bom(server, gpus, ram_gib, "budget split", nvme_tb=nvme_tb,
                     cpu_cores=cpu_cores, nic_gbps=nic_gbps)
    return sum(line.amount_usd for line in bom.bom if line.kind in kinds)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Prices:
    """One server's price as fixed lines + one line per part option (the BOM is additive)."""

    fixed_usd: float
    ram_usd: np.ndarray
    nvme_usd: np.ndarray
    cpu_usd: np.ndarray
    nic_usd: np.ndarray


def _prices(server: str, gpus: int, ladder: PartLadder) -> _Prices:
    fixed = _line_usd(server, gpus, ("gpu", "chassis"))
    return _Prices(
        fixed_usd=fixed,
        ram_usd=np.array([_line_usd(server, gpus, ("ram",), ram_gib=r) for r in ladder.ram_gib]),
        nvme_usd=np.array([_line_usd(server, gpus, ("nvme",), nvme_tb=t)
                           for t in ladder.nvme_tb]),
        cpu_usd=np.array([_line_usd(server, gpus, ("cpu",), cpu_cores=c)
                          for c in ladder.cpu_cores]),
        nic_usd=np.array([_line_usd(server, gpus, ("nic", "fabric"), nic_gbps=g)
                          for g in ladder.nic_gbps]),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Cluster:
    server: str
    gpus_per_server: int
    servers: int
    nic_gbps: float
    ladder: PartLadder


@dataclass(frozen=True, slots=True, kw_only=True)
class _Best:
    key: tuple[float, float]
    server: str
    gpus_per_server: int
    servers: int
    parts: NodeParts


def _phase_seconds(work: PhaseWork, gpu: GpuSpec, gpus: int, gpus_per_node: int,
                   nic_gbps: float, ladder: PartLadder, defaults: PerfDefaults,
                   assumptions: HostPartAssumptions) -> np.ndarray | None:
    """Wall seconds of one phase for every (cpu, nvme, ram) option (inf where a part is short);
    None when no layout fits the GPUs."""
    try:
        base, fixed = work.setup(gpu)
        est = steady_on_nic(work.arch, gpu, gpus, work.tokens, base, fixed,
                            nic_gbps=nic_gbps, gpus_per_node=gpus_per_node, defaults=defaults)
    except CostsimError:
        return None
    nodes = max(1, math.ceil(gpus / gpus_per_node))
    saved = saved_params(work.arch, base)
    needs = part_needs(estimate=est, gpu=gpu, nodes=nodes, gpus_per_node=gpus_per_node,
                       saved=saved, dataset_bytes=work.dataset_bytes,
                       checkpoints_retained=work.checkpoints_retained, defaults=defaults,
                       assumptions=assumptions)
    steady = est.step.tokens_per_s
    on_node = min(gpus, gpus_per_node)
    f_cpu = np.array([cpu_factor(c, on_node, assumptions.cpu_cores_per_gpu)
                      for c in ladder.cpu_cores])
    f_read = np.array([read_factor(t, steady / nodes, assumptions) for t in ladder.nvme_tb])
    good = np.array([nvme_goodput(1.0, gpus, saved, gpus_per_node=gpus_per_node,
                                  nvme_tb=t, defaults=defaults, assumptions=assumptions).goodput
                     for t in ladder.nvme_tb])
    nvme_ok = np.array([t * BYTES_PER_TB >= needs.nvme_bytes for t in ladder.nvme_tb])
    ram_ok = np.array([r * BYTES_PER_GIB >= needs.ram_bytes for r in ladder.ram_gib])
    shape = (len(ladder.cpu_cores), len(ladder.nvme_tb), len(ladder.ram_gib))
    rate = np.broadcast_to(steady * f_cpu[:, None, None] * (f_read * good)[None, :, None], shape)
    ok = np.broadcast_to(nvme_ok[None, :, None] & ram_ok[None, None, :], shape)
    return np.where(ok, work.tokens / rate, np.inf)


def optimize_budget_split(scenario: Scenario, *, budget_usd: float | None = None,
                          objective: SplitObjective | None = None,
                          servers: Sequence[str] | None = None) -> BudgetSplitResult:
    """The owned cluster for ``scenario``'s training phases (see the module docstring).

    ``budget_usd`` (else the scenario's) caps the capex; ``objective`` defaults to the most
    throughput when there is a budget, else the least capex meeting every deadline.
    ``servers`` limits the server types (default: every one in costsim/data/servers.csv and
    every one the scenario declares in ``servers:``).

    Raises:
        InputError: no training phase, no budget and no deadline, an unknown server, or no
            cluster within the budget (or meeting the deadlines).
    """
    budget = budget_usd if budget_usd is not None else scenario.budget_usd
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise InputError("--budget-split", "budget_usd", f"must be > 0, got {budget}")
    works = phase_works(scenario, host_part_assumptions())
    if not works:
        raise InputError(scenario.name, "phases", "the budget split needs a training phase "
                         "(kind: training); this scenario has none")
    if objective is None and budget is None and any(w.deadline_s is None for w in works):
        raise InputError(scenario.name, "budget_usd", "the budget split needs a budget (the "
                         "most throughput for it) or a deadline on every training phase (the "
                         "least capex that meets them); the scenario has neither")
    goal = objective or (SplitObjective.THROUGHPUT if budget is not None
                         else SplitObjective.COST)
    if goal is SplitObjective.THROUGHPUT and budget is None:
        raise InputError(scenario.name, "budget_usd", "the most throughput needs a budget: "
                         "set budget_usd in the scenario or pass one")
    if goal is SplitObjective.COST and any(w.deadline_s is None for w in works):
        raise InputError(scenario.name, "phases.deadline_days", "the least-cost split needs "
                         "a deadline on every training phase")
    declared = scenario.servers
    known = (*server_names(), *(d.name for d in declared))
    names = tuple(servers) if servers is not None else known
    for name in names:
        if name not in known:
            raise CatalogError("server", name, known, source="--budget-split servers")
    search = _Search(works=works, goal=goal, budget=budget, defaults=perf_defaults(),
                     assumptions=host_part_assumptions(), declared=declared)
    for name in names:
        search.server(name)
    best = search.best
    if best is None:
        what = (f"within ${budget:,.0f}" if goal is SplitObjective.THROUGHPUT
                else "that meets every deadline" + (f" within ${budget:,.0f}" if budget else ""))
        raise InputError(scenario.name, "budget_usd", f"no owned cluster of {', '.join(names)} "
                         f"fits the training phases {what}; " + "; ".join(search.skipped[:3]))
    choice = cluster_choice(best.server, best.gpus_per_server, best.servers, best.parts, works,
                            perf_defaults(), host_part_assumptions(), declared)
    bom = split_server(best.server, best.gpus_per_server, best.parts, declared).bom
    shares = group_shares(bom, best.servers)
    return BudgetSplitResult(
        scenario=scenario.name, objective=goal, budget_usd=budget, best=choice, bom=bom,
        shares=shares, rules=rule_checks(shares, choice),
        sensitivity=_sensitivity(best, works, budget, search.ladder_of(best), declared),
        plan=plan_of(scenario, choice), configurations=search.configurations,
        skipped=tuple(search.skipped))


class _Search:
    """The enumeration's state: the best key so far and the counts for the report."""

    def __init__(self, *, works: tuple[PhaseWork, ...], goal: SplitObjective,
                 budget: float | None, defaults: PerfDefaults,
                 assumptions: HostPartAssumptions,
                 declared: tuple[ServerDeclaration, ...] = ()) -> None:
        self.works, self.goal, self.budget = works, goal, budget
        self.defaults, self.assumptions = defaults, assumptions
        self.declared = declared
        self._found: list[tuple[_Cluster, np.ndarray, np.ndarray]] = []
        self.configurations = 0
        self.skipped: list[str] = []

    def ladder_of(self, best: _Best) -> PartLadder:
        """The part ladder of the chosen server."""
        mine = declaration_of(best.server, self.declared)
        if mine is not None:
            return declared_ladder(mine.parts)
        return part_ladder(best.server, best.gpus_per_server, self.assumptions)

    def _options(self, name: str) -> list[tuple[int, PartLadder, _Prices]]:
        """(GPUs per server, part ladder, prices) of each build of server type ``name``."""
        mine = declaration_of(name, self.declared)
        if mine is not None:
            zero = np.zeros(1)
            capex = split_server(name, mine.gpu_count, None, self.declared).capex_usd
            return [(mine.gpu_count, declared_ladder(mine.parts),
                     _Prices(fixed_usd=capex, ram_usd=zero, nvme_usd=zero, cpu_usd=zero,
                             nic_usd=zero))]
        row = server_row(name)
        options = []
        for per_server in (int(n) for n in row["allowed_gpu_counts"].split(";")):
            ladder = part_ladder(name, per_server, self.assumptions)
            options.append((per_server, ladder, _prices(name, per_server, ladder)))
        return options

    def server(self, name: str) -> None:
        """Score every cluster of server type ``name``."""
        mine = declaration_of(name, self.declared)
        gpu = get_gpu(mine.gpu if mine is not None else server_row(name)["gpu"])
        for per_server, ladder, prices in self._options(name):
            cheapest = (prices.fixed_usd + prices.ram_usd.min() + prices.nvme_usd.min()
                        + prices.cpu_usd.min() + prices.nic_usd.min())
            most = MAX_SERVERS if self.budget is None else min(
                MAX_SERVERS, math.floor(self.budget / cheapest))
            if most < 1:
                self.skipped.append(f"{name} x{per_server}: one server costs at least "
                                    f"${cheapest:,.0f}")
                continue
            for count in range(1, most + 1):
                self._cluster(name, gpu, per_server, count, ladder, prices)

    def _cluster(self, name: str, gpu: GpuSpec, per_server: int, count: int,
                 ladder: PartLadder, prices: _Prices) -> None:
        lead_s = lead_time_s(name, self.declared)
        node_usd = (prices.fixed_usd + prices.cpu_usd[:, None, None]
                    + prices.nvme_usd[None, :, None] + prices.ram_usd[None, None, :])
        for k, nic in enumerate(ladder.nic_gbps):
            seconds = []
            for work in self.works:
                phase_s = _phase_seconds(work, gpu, count * per_server, per_server, nic, ladder,
                                         self.defaults, self.assumptions)
                if phase_s is None:
                    if k == 0:
                        self.skipped.append(f"{name} x{per_server} x{count}: {work.name} does "
                                            f"not fit {count * per_server} {gpu.name}")
                    return
                if self.goal is SplitObjective.COST:
                    phase_s = np.where(phase_s <= time_left_s(work, lead_s), phase_s, np.inf)
                seconds.append(phase_s)
            total_s = np.sum(seconds, axis=0)
            capex = count * (node_usd + prices.nic_usd[k])
            ok = np.isfinite(total_s)
            if self.budget is not None:
                ok &= capex <= self.budget + 1e-6
            self.configurations += total_s.size
            if ok.any():
                self._found.append((_Cluster(server=name, gpus_per_server=per_server,
                                             servers=count, nic_gbps=nic, ladder=ladder),
                                    np.where(ok, total_s, np.inf), np.where(ok, capex, np.inf)))

    @property
    def best(self) -> _Best | None:
        """The chosen cluster: the least time (ties within ``THROUGHPUT_TIE_SHARE`` go to the
        lower capex), or the least capex (ties to the lower time)."""
        if not self._found:
            return None
        if self.goal is SplitObjective.THROUGHPUT:
            limit = min(float(t.min()) for _, t, _ in self._found) * (1 + THROUGHPUT_TIE_SHARE)
            keyed = [(np.where(t <= limit, c, np.inf), t) for _, t, c in self._found]
        else:
            keyed = [(c, t) for _, t, c in self._found]
        best: _Best | None = None
        for (cluster, _, _), (first, second) in zip(self._found, keyed, strict=True):
            low = float(first.min())
            if not math.isfinite(low):
                continue
            tied = np.where(first <= low, second, np.inf)
            c, d, r = np.unravel_index(int(np.argmin(tied)), tied.shape)
            key = (low, float(tied[c, d, r]))
            if best is None or key < best.key:
                ladder = cluster.ladder
                parts = NodeParts(cpu_cores=ladder.cpu_cores[c], ram_gib=ladder.ram_gib[r],
                                  nvme_tb=ladder.nvme_tb[d], nic_gbps=cluster.nic_gbps)
                best = _Best(key=key, server=cluster.server,
                             gpus_per_server=cluster.gpus_per_server, servers=cluster.servers,
                             parts=parts)
        return best


def _sensitivity(best: _Best, works: tuple[PhaseWork, ...], budget: float | None,
                 ladder: PartLadder,
                 declared: tuple[ServerDeclaration, ...] = ()) -> tuple[SensitivityPoint, ...]:
    """Throughput and capex with one part changed along its ladder, the rest as chosen."""
    defaults, assumptions = perf_defaults(), host_part_assumptions()
    points: list[SensitivityPoint] = []
    chosen = best.parts
    variants: list[tuple[str, float, int, NodeParts]] = [
        ("servers", float(n), n, chosen)
        for n in range(max(1, best.servers - 3), best.servers + 4)]
    count = best.servers
    variants += [("ram_gib", float(r), count, replace(chosen, ram_gib=r)) for r in ladder.ram_gib]
    variants += [("nvme_tb", t, count, replace(chosen, nvme_tb=t)) for t in ladder.nvme_tb]
    variants += [("cpu_cores", float(c), count, replace(chosen, cpu_cores=c))
                 for c in ladder.cpu_cores]
    variants += [("nic_gbps", g, count, replace(chosen, nic_gbps=g)) for g in ladder.nic_gbps]
    lead_s = lead_time_s(best.server, declared)
    for part, amount, servers, parts in variants:
        server = split_server(best.server, best.gpus_per_server, parts, declared)
        capex = servers * server.capex_usd
        try:
            cluster = cluster_choice(best.server, best.gpus_per_server, servers, parts, works,
                                     defaults, assumptions, declared)
        except CostsimError:
            rate, on_time = 0.0, False
        else:
            rate = cluster.tokens_per_s
            on_time = all(p.wall_time_s <= time_left_s(w, lead_s)
                          for p, w in zip(cluster.phases, works, strict=True))
        points.append(SensitivityPoint(
            part=part, amount=amount, capex_usd=capex, tokens_per_s=rate,
            chosen=(servers == best.servers and parts == chosen),
            within_budget=budget is None or capex <= budget + 1e-6, meets_deadlines=on_time))
    return tuple(points)
