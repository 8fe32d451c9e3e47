"""The experiments phase's arrivals and its fixed-fleet FIFO queue in closed form, against
hand-computed cases and against the same queue simulated job by job in SimPy."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain.calendar import Calendar
from costsim.domain.phases import ExperimentsPhase, GenericJob
from costsim.domain.plans import OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.domain.uncertainty import Fixed, LogNormal
from costsim.sim import phase_runs
from costsim.sim.engine import simulate_replication
from costsim.sim.fifo import arrival_clock, fifo_queue, uniform_slots
from costsim.sim.packing import Cluster, JobNeed, NodeShape
from costsim.sim.phase_runs import poisson_arrivals
from costsim.sim.prepare import prepare_plan
from costsim.sim.results import Replication
from costsim.sim.streams import replication_seeds

GIB = 2**30


def test_three_identical_jobs_on_two_slots_wait_as_computed_by_hand() -> None:
    """Jobs of 10 s arrive at 0, 1 and 2 s on 2 slots: the first two start on arrival, the
    third when the first ends (10 s), after 8 s in the queue; the queue drains at 20 s."""
    clock = np.array([0.0, 1.0, 2.0])
    run = np.full(3, 10.0)
    queue = fifo_queue(clock, run, 2, start_s=0.0, horizon_s=1000.0)
    assert queue.start_s.tolist() == [0.0, 1.0, 10.0]
    assert (queue.start_s - clock).tolist() == [0.0, 0.0, 8.0]
    assert queue.finish_s.tolist() == [10.0, 11.0, 20.0]
    assert queue.drained_s == 20.0
    # the arrival process's start, 3 arrivals, its end; per job: start, run's end, job's end
    assert queue.events == 1 + 3 + 1 + 3 * 3
    # a horizon at 15 s: the third job started (10 s) but had not ended, nor had the second
    cut = fifo_queue(clock, run, 2, start_s=0.0, horizon_s=15.0)
    assert cut.start_s.tolist() == [0.0, 1.0, 10.0]
    assert cut.drained_s is None
    assert cut.events == 1 + 3 + 1 + 3 + 2 * 2


def test_a_job_arriving_as_a_slot_frees_starts_at_once() -> None:
    queue = fifo_queue(np.array([0.0, 10.0]), np.array([10.0, 5.0]), 1, start_s=0.0,
                       horizon_s=100.0)
    assert queue.start_s.tolist() == [0.0, 10.0]
    assert queue.drained_s == 15.0


def test_no_jobs_drain_at_the_phase_start() -> None:
    queue = fifo_queue(np.zeros(0), np.zeros(0), 4, start_s=50.0, horizon_s=100.0)
    assert queue.drained_s == 50.0
    assert queue.events == 2  # the arrival process starts and ends


def test_a_single_slot_is_lindleys_recursion() -> None:
    rng = np.random.default_rng(4)
    clock = np.cumsum(rng.exponential(5.0, 500))
    run = 1.0 + rng.exponential(4.0, 500)
    queue = fifo_queue(clock, run, 1, start_s=0.0, horizon_s=math.inf)
    free, starts = 0.0, []
    for arrival, length in zip(clock.tolist(), run.tolist(), strict=True):
        starts.append(max(arrival, free))
        free = starts[-1] + length
    assert queue.start_s.tolist() == starts


@given(start=st.floats(0, 1e8), gaps=st.lists(st.floats(0, 1e7), max_size=30))
def test_the_arrival_clock_is_simpys_clock(start: float, gaps: list[float]) -> None:
    """SimPy's arrival process at clock c waits timeout(a − c) and wakes at c + (a − c)."""
    arrivals = np.cumsum(np.concatenate(([start], gaps)))[1:]
    clock, expected = start, []
    for arrival in arrivals.tolist():
        clock = clock + (arrival - clock)
        expected.append(clock)
    assert arrival_clock(start, arrivals).tolist() == expected


def test_the_arrival_clock_can_miss_an_arrival_by_an_ulp() -> None:
    start, arrival = 0.49, 3.93  # 0.49 + (3.93 - 0.49) = 3.9300000000000006
    assert start + (arrival - start) != arrival
    assert arrival_clock(start, np.array([arrival])).tolist() == [start + (arrival - start)]


@given(seed=st.integers(0, 2**32 - 1), rate_per_day=st.floats(0.1, 2000),
       start=st.floats(0, 1e7), days=st.floats(0.01, 60), block=st.sampled_from([None, 1, 7]))
@settings(max_examples=60, deadline=None)
def test_block_arrivals_are_the_scalar_loops(seed: int, rate_per_day: float, start: float,
                                             days: float, block: int | None) -> None:
    """The arrival times drawn in blocks (of any size) are those of the one-at-a-time loop
    they replace, to the bit."""
    rate = rate_per_day / 86400
    end = start + days * 86400
    rng = np.random.default_rng(seed)
    expected, t = [], start
    while True:
        t += float(rng.exponential(1.0 / rate))
        if t >= end:
            break
        expected.append(t)
    got = poisson_arrivals(np.random.default_rng(seed), rate, start, end, block=block)
    assert got.tolist() == expected


NODE = NodeShape(gpus=4, gpu_usable_bytes=22 * GIB, host_ram_bytes=192 * GIB)


@pytest.mark.parametrize(("need", "slots"), [
    (JobNeed(gpus=1, gpu_bytes=7 * GIB, host_ram_bytes=0), 2 * 4),  # N+1: 3 x 7 <= 22
    (JobNeed(gpus=1, gpu_bytes=6 * GIB, host_ram_bytes=32 * GIB), 6),  # RAM: 192/32
    (JobNeed(gpus=4, gpu_bytes=18 * GIB, host_ram_bytes=0), 1),  # whole node
    (JobNeed(gpus=2, gpu_bytes=18 * GIB, host_ram_bytes=0), 2),  # disjoint GPU pairs
    (JobNeed(gpus=5, gpu_bytes=1 * GIB, host_ram_bytes=0), 0),  # never fits
])
def test_uniform_slots_counts_what_the_cluster_places(need: JobNeed, slots: int) -> None:
    assert uniform_slots(need, NODE, 1) == slots
    assert uniform_slots(need, NODE, 3) == 3 * slots


def test_multi_gpu_jobs_sharing_gpus_are_not_slots() -> None:
    need = JobNeed(gpus=2, gpu_bytes=5 * GIB, host_ram_bytes=0)  # 3 a GPU, 2 GPUs a job
    assert uniform_slots(need, NODE, 1) is None


@given(gpus=st.integers(1, 8), node_gpus=st.integers(1, 8), job_gib=st.integers(1, 40),
       ram_gib=st.integers(0, 64), nodes=st.integers(1, 3),
       ops=st.lists(st.booleans(), max_size=60))
@settings(max_examples=150, deadline=None)
def test_where_slots_apply_the_cluster_places_a_job_exactly_when_fewer_run(
        gpus: int, node_gpus: int, job_gib: int, ram_gib: int, nodes: int,
        ops: list[bool]) -> None:
    """Any sequence of placements and releases: the first-fit cluster takes one more job
    exactly when fewer than ``uniform_slots`` run."""
    need = JobNeed(gpus=gpus, gpu_bytes=job_gib * GIB, host_ram_bytes=ram_gib * GIB)
    node = NodeShape(gpus=node_gpus, gpu_usable_bytes=22 * GIB, host_ram_bytes=128 * GIB)
    slots = uniform_slots(need, node, nodes)
    if slots is None:
        return
    cluster = Cluster(node, nodes)
    running = []
    for place in ops:
        if place or not running:
            placement = cluster.place(need)
            assert (placement is not None) == (len(running) < slots)
            if placement is not None:
                running.append(placement)
        else:
            cluster.release(need, running.pop(len(running) // 2))


def _fixed_fleet(phase: ExperimentsPhase, entry: UseEntry, months: int = 2,
                 owned: tuple[OwnedPurchase, ...] = ()) -> Scenario:
    plan = Plan(name="p", uses=(PhaseUse(phase=phase.name, entries=(entry,)),), owned=owned)
    return Scenario(name="q", calendar=Calendar(start=date(2027, 1, 1), horizon_months=months),
                    models=(), phases=(phase,), plans=(plan,))


def _both_ways(scenario: Scenario, monkeypatch: pytest.MonkeyPatch,
               index: int = 0) -> tuple[Replication, Replication]:
    prep = prepare_plan(scenario, scenario.plans[0])
    assert prep.feasible, prep.infeasible_reasons
    root = replication_seeds(5, index + 1)[index]
    closed = simulate_replication(prep, root, index)
    with monkeypatch.context() as patch:
        patch.setattr(phase_runs, "uniform_slots", lambda *_: None)  # job by job in SimPy
        simulated = simulate_replication(prep, root, index)
    return closed, simulated


BUSY = ExperimentsPhase(name="proto", duration_months=0.5, arrivals_per_day=40,
                        job=GenericJob(gpu_memory_gib=30,
                                       gpu_hours=LogNormal(median=8, sigma=0.6)))
FLOOD = ExperimentsPhase(name="proto", duration_months=1.5, arrivals_per_day=120,
                         job=GenericJob(gpu_memory_gib=30, gpu_hours=Fixed(value=8)))
WHOLE_NODE = ExperimentsPhase(name="research", duration_months=3, arrivals_per_day=0.8,
                              job=GenericJob(gpu_memory_gib=60, gpus=8, host_ram_gib=100,
                                             gpu_hours=LogNormal(median=190, sigma=0.5)))
RAM_BOUND = ExperimentsPhase(name="tune", duration_months=1, arrivals_per_day=30,
                             job=GenericJob(gpu_memory_gib=8, host_ram_gib=64,
                                            gpu_hours=LogNormal(median=3, sigma=0.5)))


def _after_a_first_queue() -> Scenario:
    """Two fixed-fleet queues on the same cards, the second starting when the first drains
    (mid-hour, at an odd time) and running past the horizon."""
    first = ExperimentsPhase(name="proto", duration_months=0.3, arrivals_per_day=40,
                             job=GenericJob(gpu_memory_gib=30,
                                            gpu_hours=LogNormal(median=8, sigma=0.6)))
    second = ExperimentsPhase(name="more", after=("proto",), duration_months=3,
                              arrivals_per_day=30,
                              job=GenericJob(gpu_memory_gib=30,
                                             gpu_hours=LogNormal(median=6, sigma=0.8)))
    entry = UseEntry(gpu="A100-80GB", count=8, cloud="aws")
    plan = Plan(name="p", uses=(PhaseUse(phase="proto", entries=(entry,)),
                                PhaseUse(phase="more", entries=(entry,))))
    return Scenario(name="q", calendar=Calendar(start=date(2027, 1, 1), horizon_months=2),
                    models=(), phases=(first, second), plans=(plan,))


@pytest.mark.parametrize(("scenario", "index"), [
    (_fixed_fleet(BUSY, UseEntry(gpu="A100-80GB", count=8, cloud="aws")), 0),
    (_fixed_fleet(BUSY, UseEntry(gpu="A100-80GB", count=8, cloud="aws")), 3),
    (_fixed_fleet(FLOOD, UseEntry(gpu="A100-80GB", count=8, cloud="aws",
                                  option=PurchaseOption.RESERVED_1Y_NO_UPFRONT)), 1),
    (_fixed_fleet(WHOLE_NODE, UseEntry(gpu="H100", option=PurchaseOption.OWNED, count=8),
                  months=6, owned=(OwnedPurchase(server="hgx-h100-8", count=1,
                                                 purchase=date(2027, 1, 1)),)), 0),
    (_fixed_fleet(RAM_BOUND, UseEntry(gpu="RTX4090", option=PurchaseOption.OWNED, count=4),
                  owned=(OwnedPurchase(server="rtx4090-4", count=1,
                                       purchase=date(2027, 1, 1)),)), 2),
    (_after_a_first_queue(), 4),
    (_fixed_fleet(replace(BUSY, arrivals_per_day=4),
                  UseEntry(gpu="A100-80GB", count=8, cloud="aws")), 0),
], ids=["busy", "busy-rep3", "cut-by-horizon", "whole-node", "host-ram", "second-phase",
        "never-full"])
def test_the_closed_form_queue_is_the_job_by_job_simulation(
        scenario: Scenario, index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same waits, events, phase end, ledger and utilization, to the bit."""
    closed, simulated = _both_ways(scenario, monkeypatch, index)
    assert closed.queue_waits.jobs > 0
    assert closed.queue_waits == simulated.queue_waits
    assert closed.events == simulated.events
    assert closed.timelines == simulated.timelines
    assert closed.ledger == simulated.ledger
    assert closed.pools == simulated.pools
    assert closed.gpu_hours_used == simulated.gpu_hours_used


def test_the_busy_fleet_queues_and_the_flood_never_drains(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The equivalence above covers queues that form and a queue cut by the horizon."""
    busy, _ = _both_ways(_fixed_fleet(BUSY, UseEntry(gpu="A100-80GB", count=8, cloud="aws")),
                         monkeypatch)
    assert busy.queue_waits.waited > 0
    light, _ = _both_ways(_fixed_fleet(replace(BUSY, arrivals_per_day=4), UseEntry(
        gpu="A100-80GB", count=8, cloud="aws")), monkeypatch)
    assert light.queue_waits.jobs > 0
    assert light.queue_waits.waited == 0  # every job found a free slot: no heap needed
    flood, _ = _both_ways(_fixed_fleet(FLOOD, UseEntry(
        gpu="A100-80GB", count=8, cloud="aws", option=PurchaseOption.RESERVED_1Y_NO_UPFRONT)),
        monkeypatch, 1)
    assert flood.timelines[0].end_s is None
