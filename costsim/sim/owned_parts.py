"""A training phase on owned servers: the part-shortage model (``perf/host_parts.py``) applied
to the servers' parts (the ``owned`` entry's ram_gib, nvme_tb, cpu_cores, nic_gbps).

The servers' NICs are the phase's network (the layout is searched again for them); a node
short of system RAM or NVMe capacity makes the plan infeasible; too few CPU cores, or drives
that read the dataset slower than it is used, stretch the steady time by 1 / (f_cpu · f_read).
Checkpoints keep the goodput model's shared-storage rate, as for rented capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.catalog.host_parts import host_part_assumptions
from costsim.catalog.servers import parts_of
from costsim.domain.gpu import GpuSpec
from costsim.domain.performance import PerfDefaults
from costsim.domain.phases import TrainingPhase
from costsim.domain.scenario import Scenario
from costsim.perf.host_parts import (
    delivered_on_parts,
    node_network,
    saved_params,
    steady_on_nic,
)
from costsim.perf.measured_training import apply_measurements
from costsim.perf.train_estimate import TrainingEstimate
from costsim.sim.phase_setup import phase_setup
from costsim.sim.pools import OwnedPool
from costsim.units import BYTES_PER_GB


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedTraining:
    """The phase's estimate on the owned servers' network and the parts' slow-down."""

    estimate: TrainingEstimate
    slowdown: float  # 1 / (f_cpu · f_read) ≥ 1
    shortfalls: tuple[str, ...]


def owned_training(scenario: Scenario, pool: OwnedPool, phase: TrainingPhase, gpu: GpuSpec,
                   gpus: int, defaults: PerfDefaults) -> OwnedTraining:
    """The phase on ``pool``'s servers with their parts.

    Raises:
        CostsimError: no layout fits the GPUs on this network, or a bad setup.
    """
    parts = parts_of(pool.server)
    arch = scenario.model(phase.model).architecture
    base, fixed = phase_setup(arch, phase, gpu)
    estimate = steady_on_nic(arch, gpu, gpus, phase.tokens, base, fixed,
                             nic_gbps=parts.nic_gbps, gpus_per_node=pool.server.gpu_count,
                             defaults=defaults)
    if scenario.measurements.training:  # a measured rate holds on the servers' parts too
        network = node_network(parts.nic_gbps, pool.server.gpu_count,
                               defaults.network_for(gpu.name).efficiency)
        estimate = apply_measurements(estimate, scenario.measurements.training, arch=arch,
                                      gpu=gpu, base=base, defaults=defaults, network=network)
    dataset = scenario.data.dataset_gb * BYTES_PER_GB
    run = delivered_on_parts(estimate, gpu, parts, gpus_per_node=pool.server.gpu_count,
                             saved=saved_params(arch, base),
                             checkpoints_retained=scenario.data.checkpoints_retained,
                             defaults=defaults, assumptions=host_part_assumptions(),
                             dataset_bytes=dataset if dataset > 0 else None)
    return OwnedTraining(estimate=estimate, slowdown=1.0 / (run.cpu_factor * run.read_factor),
                         shortfalls=run.shortfalls)
