"""The part-shortage model: each part's factor or threshold from hand-computed cases, the NIC
through the perf engine's own network model, and monotonicity (more of a part never costs
throughput)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.catalog.host_parts import host_part_assumptions
from costsim.catalog.models import load_preset
from costsim.domain.host_parts import NodeParts
from costsim.domain.performance import PerfDefaults
from costsim.domain.workload import Quant, Task
from costsim.memory.host import PROCESS_BYTES
from costsim.perf.host_parts import (
    PartsThroughput,
    cpu_factor,
    nvme_drives,
    read_factor,
    training_on_parts,
)
from costsim.perf.layouts import LayoutConstraints
from costsim.perf.setups import training_setup
from costsim.perf.train_estimate import SPEED_TIE_SHARE, estimate_training_run
from costsim.units import BYTES_PER_GB, BYTES_PER_GIB

ARCH = load_preset("llama-3-8b").architecture
H100 = get_gpu("H100")
DGX = NodeParts(cpu_cores=128, ram_gib=2048, nvme_tb=30.72, nic_gbps=3200)
TOKENS = 1e11
DATASET = 4e11  # bytes: 1e11 tokens × 4


def _run(parts: NodeParts, gpus: int, defaults: PerfDefaults, *,
         retained: int = 3) -> PartsThroughput:
    base = training_setup(ARCH, H100, task=Task.TRAIN, precision=None, seq_len=4096,
                          lora_rank=None, quant=Quant.NONE, source="test")
    return training_on_parts(ARCH, H100, gpus, TOKENS, base, LayoutConstraints(), parts,
                             gpus_per_node=8, checkpoints_retained=retained, defaults=defaults,
                             assumptions=host_part_assumptions(), dataset_bytes=DATASET)


def test_cpu_factor_is_the_share_of_the_needed_cores_present() -> None:
    assert cpu_factor(32, 8, 4.0) == 1.0  # 4 cores per GPU: enough
    assert cpu_factor(16, 8, 4.0) == 0.5  # half the cores: the loader halves the step rate
    assert cpu_factor(8, 4, 4.0) == 0.5
    assert cpu_factor(128, 8, 4.0) == 1.0  # extra cores buy nothing


def test_drives_and_the_read_factor() -> None:
    assert nvme_drives(30.72, 3.84) == 8
    assert nvme_drives(3.85, 3.84) == 2
    assert nvme_drives(0.5, 3.84) == 1
    assumptions = host_part_assumptions()
    # one drive reads 6.5 GB/s; 2e9 tokens/s × 4 B = 8 GB/s needed → 6.5/8
    assert read_factor(3.84, 2e9, assumptions) == pytest.approx(6.5 / 8)
    assert read_factor(3.84, 1e6, assumptions) == 1.0


def test_ram_need_is_the_memory_engines_host_ram_plus_the_staged_checkpoint(
        defaults: PerfDefaults) -> None:
    run = _run(DGX, 8, defaults)
    params = ARCH.params().total
    needs = run.needs
    # host.py: bf16 weights once per node + 2 GiB per GPU process + prefetch; staging: the
    # node's share (one node) of the 14 B/param training state
    assert needs.host_ram.checkpoint_bytes == params * 2
    assert needs.host_ram.processes_bytes == 8 * PROCESS_BYTES
    assert needs.staging_bytes == round(params * 14)
    assert needs.ram_bytes == needs.host_ram.total_bytes + needs.staging_bytes
    assert needs.ram_to_vram == pytest.approx(needs.ram_bytes / (8 * H100.capacity_bytes))
    assert needs.ram_to_vram < 1.5  # an 8B run without offload needs far less than the rule
    # NVMe: the dataset plus three retained checkpoints on the one node
    assert needs.nvme_bytes == round(DATASET) + round(3 * params * 14)
    assert needs.cpu_cores == 8 * 4


def test_ram_or_nvme_capacity_below_the_need_makes_the_run_impossible(
        defaults: PerfDefaults) -> None:
    need_gib = _run(DGX, 8, defaults).needs.ram_bytes / BYTES_PER_GIB
    short = _run(replace(DGX, ram_gib=math.floor(need_gib) - 1), 8, defaults)
    assert not short.feasible
    assert short.delivered_tokens_per_s == 0
    assert "system RAM" in short.shortfalls[0]
    enough = _run(replace(DGX, ram_gib=math.ceil(need_gib)), 8, defaults)
    assert enough.feasible
    assert enough.delivered_tokens_per_s > 0
    tiny_disk = _run(replace(DGX, nvme_tb=0.2), 8, defaults)
    assert any("NVMe" in why for why in tiny_disk.shortfalls)


def test_checkpoints_are_written_at_the_drives_rate(defaults: PerfDefaults) -> None:
    run = _run(DGX, 16, defaults)
    state = ARCH.params().total * defaults.goodput.checkpoint_bytes_per_param
    # C = 10 s + B / (2 nodes × 8 drives × 3 GB/s)
    expected = defaults.goodput.checkpoint_fixed_s + state / (2 * 8 * 3.0 * BYTES_PER_GB)
    assert run.goodput.checkpoint_s == pytest.approx(expected)
    one_drive = _run(replace(DGX, nvme_tb=3.84), 16, defaults)
    assert one_drive.goodput.checkpoint_s == pytest.approx(
        defaults.goodput.checkpoint_fixed_s + state / (2 * 1 * 3.0 * BYTES_PER_GB))
    assert one_drive.goodput.goodput < run.goodput.goodput


def test_delivered_is_steady_times_the_factors_and_the_goodput(defaults: PerfDefaults) -> None:
    starved = _run(replace(DGX, cpu_cores=16), 8, defaults)
    assert starved.cpu_factor == 0.5
    assert starved.delivered_tokens_per_s == pytest.approx(
        starved.steady_tokens_per_s * 0.5 * starved.read_factor * starved.goodput.goodput)


def test_the_nic_is_the_perf_engines_network(defaults: PerfDefaults) -> None:
    base = training_setup(ARCH, H100, task=Task.TRAIN, precision=None, seq_len=4096,
                          lora_rank=None, quant=Quant.NONE, source="test")
    reference = estimate_training_run(ARCH, H100, 32, TOKENS, base, LayoutConstraints(),
                                      defaults=defaults, price_usd_per_gpu_hour=0.0)
    # 8 × 400 Gb/s at the default network's efficiency: the same step as ib-ndr-3200
    assert _run(DGX, 32, defaults).steady_tokens_per_s == pytest.approx(
        reference.step.tokens_per_s)
    slow = _run(replace(DGX, nic_gbps=100), 32, defaults)
    assert slow.steady_tokens_per_s < reference.step.tokens_per_s
    assert slow.estimate.network == "owned-100g"


PART_STEPS = st.sampled_from(["cpu_cores", "ram_gib", "nvme_tb", "nic_gbps"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(part=PART_STEPS, cores=st.integers(4, 128), ram=st.integers(16, 4096),
       nvme=st.floats(0.5, 64), nic=st.sampled_from([100.0, 400.0, 800.0, 1600.0, 3200.0]),
       more=st.floats(1.0, 8.0), gpus=st.sampled_from([8, 16, 32]))
def test_more_of_a_part_never_lowers_throughput(part: str, cores: int, ram: int, nvme: float,
                                                nic: float, more: float, gpus: int,
                                                defaults: PerfDefaults) -> None:
    parts = NodeParts(cpu_cores=cores, ram_gib=ram, nvme_tb=nvme, nic_gbps=nic)
    value = getattr(parts, part)
    bigger = value * more
    larger = replace(parts, **{part: round(bigger) if isinstance(value, int) else bigger})
    # up to the layout search's tie rule: among layouts within SPEED_TIE_SHARE of the fastest
    # it takes the simplest, so a faster NIC may trade a 1 % edge for less sharding
    assert (_run(larger, gpus, defaults).delivered_tokens_per_s
            >= _run(parts, gpus, defaults).delivered_tokens_per_s * (1 - SPEED_TIE_SHARE))
