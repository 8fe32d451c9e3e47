"""The budget split: the enumeration against a brute force that calls the part-shortage model
for every combination, the budget and deadline constraints, the split adding up, the seed
rules, the sensitivity and the plan it proposes."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from datetime import date

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.host_parts import host_part_assumptions
from costsim.catalog.perf_defaults import perf_defaults
from costsim.catalog.servers import server_bom, server_row
from costsim.domain.host_parts import NodeParts
from costsim.domain.phases import ExperimentsPhase, GenericJob, TrainingPhase
from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Fixed
from costsim.errors import CostsimError, InputError
from costsim.optimize import budget_split as bs
from costsim.optimize.budget_split import optimize_budget_split, part_ladder
from costsim.optimize.budget_split_parts import phase_works
from costsim.optimize.budget_split_result import SpendGroup, SplitObjective
from costsim.perf.host_parts import delivered_on_parts, saved_params, steady_on_nic
from costsim.units import SECONDS_PER_DAY
from tests.optimize.split_scenarios import SERVER, training_scenario


@pytest.fixture
def small_ladders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Few options per part, so that the brute force stays quick."""
    monkeypatch.setattr(bs, "RAM_GIB_OPTIONS", (256, 512, 1024, 2048))
    monkeypatch.setattr(bs, "NVME_DRIVE_COUNTS", (1, 8))
    monkeypatch.setattr(bs, "CORES_PER_SOCKET", (8, 16, 64))
    monkeypatch.setattr(bs, "NIC_COUNTS", (1, 8))


def _brute_force(scenario: Scenario, goal: SplitObjective,
                 budget: float | None) -> tuple[int, int, NodeParts, float]:
    """Every (GPUs per server, servers, parts) of SERVER scored one by one with the perf
    engine's own functions and priced with the catalog's BOM; the same choice rule."""
    defaults, assumptions = perf_defaults(), host_part_assumptions()
    (work,) = phase_works(scenario, assumptions)
    gpu = get_gpu("H100")
    lead_s = float(server_row(SERVER)["lead_time_weeks"]) * 7 * SECONDS_PER_DAY
    rows = []
    for per_server in (4, 8):
        ladder = part_ladder(SERVER, per_server, assumptions)
        for count in range(1, 9):
            for nic in ladder.nic_gbps:
                base, fixed = work.setup(gpu)
                try:
                    est = steady_on_nic(work.arch, gpu, count * per_server, work.tokens, base,
                                        fixed, nic_gbps=nic,
                                        gpus_per_node=per_server, defaults=defaults)
                except CostsimError:
                    continue
                for cores, nvme, ram in itertools.product(ladder.cpu_cores, ladder.nvme_tb,
                                                          ladder.ram_gib):
                    parts = NodeParts(cpu_cores=cores, ram_gib=ram, nvme_tb=nvme, nic_gbps=nic)
                    run = delivered_on_parts(est, gpu, parts, gpus_per_node=per_server,
                                             saved=saved_params(work.arch, base),
                                             checkpoints_retained=work.checkpoints_retained,
                                             defaults=defaults, assumptions=assumptions,
                                             dataset_bytes=work.dataset_bytes)
                    capex = count * server_bom(SERVER, per_server, ram_gib=ram, nvme_tb=nvme,
                                               cpu_cores=cores, nic_gbps=nic).capex_usd
                    rate = run.delivered_tokens_per_s
                    seconds = work.tokens / rate if rate > 0 else math.inf
                    if budget is not None and capex > budget + 1e-6:
                        continue
                    if goal is SplitObjective.COST and (
                            work.deadline_s is None or seconds > work.deadline_s - lead_s):
                        continue
                    if math.isfinite(seconds):
                        rows.append((seconds, capex, per_server, count, parts))
    assert rows, "the test case needs a feasible cluster"
    if goal is SplitObjective.THROUGHPUT:
        limit = min(r[0] for r in rows) * (1 + bs.THROUGHPUT_TIE_SHARE)
        best = min((r for r in rows if r[0] <= limit), key=lambda r: (r[1], r[0]))
    else:
        best = min(rows, key=lambda r: (r[1], r[0]))
    return best[2], best[3], best[4], best[1]


def test_the_enumeration_finds_the_brute_force_optimum(small_ladders: None) -> None:
    """A 70B run: RAM (its staged checkpoint), CPU, NVMe and NIC all bind somewhere."""
    scenario = training_scenario("llama-3-70b", 2e11, budget=1_300_000, deadline_days=None)
    result = optimize_budget_split(scenario, servers=[SERVER])
    per_server, count, parts, capex = _brute_force(scenario, SplitObjective.THROUGHPUT,
                                                   1_300_000)
    best = result.best
    assert (best.gpus_per_server, best.servers, best.parts) == (per_server, count, parts)
    assert best.capex_usd == pytest.approx(capex, abs=0.01)
    # the staged 70B checkpoint needs more than the smallest RAM option
    assert best.parts.ram_gib > 256


def test_least_cost_meets_the_deadline_as_the_brute_force_does(small_ladders: None) -> None:
    scenario = training_scenario("llama-3-8b", 2e11, budget=None, deadline_days=100)
    result = optimize_budget_split(scenario, servers=[SERVER])
    assert result.objective is SplitObjective.COST
    per_server, count, parts, capex = _brute_force(scenario, SplitObjective.COST, None)
    best = result.best
    assert (best.gpus_per_server, best.servers, best.parts) == (per_server, count, parts)
    lead_s = float(server_row(SERVER)["lead_time_weeks"]) * 7 * SECONDS_PER_DAY
    assert best.wall_time_s <= 100 * SECONDS_PER_DAY - lead_s
    assert best.capex_usd == pytest.approx(capex, abs=0.01)


def test_the_budget_holds_and_the_split_adds_up_to_the_capex(small_ladders: None) -> None:
    scenario = training_scenario("llama-3-8b", 5e11, budget=900_000, deadline_days=None)
    result = optimize_budget_split(scenario, servers=[SERVER])
    best = result.best
    assert best.capex_usd <= 900_000
    assert best.capex_usd == pytest.approx(best.servers * server_bom(
        SERVER, best.gpus_per_server, ram_gib=best.parts.ram_gib, nvme_tb=best.parts.nvme_tb,
        cpu_cores=best.parts.cpu_cores, nic_gbps=best.parts.nic_gbps).capex_usd, abs=0.01)
    assert sum(s.usd for s in result.shares) == pytest.approx(best.capex_usd, abs=0.02)
    assert sum(s.share for s in result.shares) == pytest.approx(1.0)
    shares = {s.group: s.share for s in result.shares}
    assert shares[SpendGroup.OPERATIONS] == 0  # capex only
    # the seed's RAM rule is checked, not assumed: an 8B run needs a fraction of the VRAM
    needed = next(r for r in result.rules if r.rule.startswith("system RAM needed"))
    assert needed.measured < 0.5
    assert not needed.holds
    # an 8B data-parallel run spends little on host parts: GPUs above the seed's 60-70 %
    assert shares[SpendGroup.GPU] > 0.7
    # the budget buys what it can: one more server would not fit
    more = next(p for p in result.sensitivity
                if p.part == "servers" and p.amount == best.servers + 1)
    assert not more.within_budget
    assert more.tokens_per_s > best.tokens_per_s


def test_the_sensitivity_moves_one_part_around_the_optimum(small_ladders: None) -> None:
    scenario = training_scenario("llama-3-8b", 5e11, budget=900_000, deadline_days=None)
    result = optimize_budget_split(scenario, servers=[SERVER])
    chosen = [p for p in result.sensitivity if p.chosen]
    assert {p.part for p in chosen} == {"servers", "ram_gib", "nvme_tb", "cpu_cores",
                                        "nic_gbps"}
    assert all(p.tokens_per_s == pytest.approx(result.best.tokens_per_s) for p in chosen)
    cores = sorted((p for p in result.sensitivity if p.part == "cpu_cores"),
                   key=lambda p: p.amount)
    rates = [p.tokens_per_s for p in cores]
    assert rates == sorted(rates)  # fewer cores never help
    assert rates[0] < rates[-1]  # 16 cores for 8 GPUs starve the loader (4 per GPU needed)
    # no point within the budget beats the optimum
    assert all(p.tokens_per_s <= result.best.tokens_per_s * (1 + bs.THROUGHPUT_TIE_SHARE)
               for p in result.sensitivity if p.within_budget)


def test_the_proposed_plan_buys_the_cluster_with_its_parts(small_ladders: None) -> None:
    scenario = training_scenario("llama-3-8b", 5e11, budget=900_000, deadline_days=None)
    result = optimize_budget_split(scenario, servers=[SERVER])
    (owned,) = result.plan.owned
    best = result.best
    assert (owned.server, owned.count, owned.purchase) == (SERVER, best.servers,
                                                           date(2027, 1, 1))
    assert (owned.ram_gib, owned.nvme_tb, owned.cpu_cores, owned.nic_gbps) == (
        best.parts.ram_gib, best.parts.nvme_tb, best.parts.cpu_cores, best.parts.nic_gbps)
    (use,) = result.plan.uses
    assert use.entries[0].option is PurchaseOption.OWNED
    assert use.entries[0].count == best.gpus


def test_bad_requests_say_what_is_missing() -> None:
    scenario = training_scenario("llama-3-8b", 5e11, budget=None, deadline_days=None)
    with pytest.raises(InputError, match="budget_usd"):
        optimize_budget_split(scenario, servers=[SERVER])
    experiments = replace(
        scenario, phases=(ExperimentsPhase(name="proto", duration_months=1, arrivals_per_day=1,
                                           job=GenericJob(gpu_memory_gib=12,
                                                          gpu_hours=Fixed(value=6))),),
        plans=(Plan(name="rent", uses=(PhaseUse(phase="proto",
                                                entries=(UseEntry(gpu="A10G"),)),)),))
    with pytest.raises(InputError, match="needs a training phase"):
        optimize_budget_split(experiments, budget_usd=1e6)
    with pytest.raises(InputError, match="no owned cluster"):
        optimize_budget_split(scenario, budget_usd=10_000, servers=[SERVER])
    with pytest.raises(CostsimError, match="did you mean"):
        optimize_budget_split(scenario, budget_usd=1e6, servers=["hgx-h100"])


def test_training_phases_run_one_after_another_on_the_cluster(small_ladders: None) -> None:
    single = training_scenario("llama-3-8b", 3e11, budget=900_000, deadline_days=None)
    (pretrain,) = single.phases
    assert isinstance(pretrain, TrainingPhase)
    finetune = replace(pretrain, name="finetune", after=("pretrain",), tokens=1e11)
    two = replace(single, phases=(pretrain, finetune), plans=(replace(
        single.plans[0], uses=(*single.plans[0].uses, PhaseUse(
            phase="finetune", entries=(UseEntry(gpu="H100", count=16),)))),))
    best = optimize_budget_split(two, servers=[SERVER]).best
    assert [p.phase for p in best.phases] == ["pretrain", "finetune"]
    assert best.wall_time_s == pytest.approx(sum(p.wall_time_s for p in best.phases))
    assert best.tokens_per_s == pytest.approx(4e11 / best.wall_time_s)


def test_more_budget_never_buys_less_throughput(small_ladders: None) -> None:
    rates = [optimize_budget_split(training_scenario("llama-3-8b", 3e11, budget=budget,
                                                     deadline_days=None),
                                   servers=[SERVER]).best.tokens_per_s
             for budget in (400_000, 700_000, 1_000_000)]
    assert rates[0] < rates[1] < rates[2]


def test_in_the_least_cost_split_one_server_fewer_misses_the_deadline(
        small_ladders: None) -> None:
    result = optimize_budget_split(training_scenario("llama-3-8b", 2e11, budget=None,
                                                     deadline_days=100), servers=[SERVER])
    servers = {p.amount: p for p in result.sensitivity if p.part == "servers"}
    best = result.best.servers
    assert best > 1  # 16 days left after the 12 weeks' delivery: a cluster, not a box
    assert servers[best].meets_deadlines
    assert not servers[best - 1].meets_deadlines
