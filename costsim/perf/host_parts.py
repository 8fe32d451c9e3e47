"""What a short part costs a training run on owned nodes: CPU, system RAM, NVMe and network.

The GPUs set the steady step time (``train_estimate``); the node's other parts can only take
throughput away. Per node of ``k`` GPUs (assumptions and their sources:
``costsim/data/host_parts.csv``):

* **CPU.** Each rank keeps ``c_need`` cores busy per step (training loop and kernel launches,
  NCCL's proxy thread, data-loader workers). That work overlaps the GPU step (the loader
  prefetches), so with ``c`` cores the step is max(t_gpu, t_gpu · k·c_need / c):

      f_cpu = min(1, c / (k · c_need))

* **System RAM** is a threshold, not a rate: below the need the host processes are killed
  (out of memory), above it the extra RAM only grows the page cache. The need is the memory
  engine's host RAM (``memory/host.py``: checkpoint loading, one process per GPU with its
  pinned buffers, data-loader prefetch) plus the staged checkpoint of asynchronous
  checkpointing (the node's share of the training state, ``checkpoint_bytes_per_param`` ·
  params ÷ nodes):

      need_ram = host_ram + staging_copies · B_ckpt / nodes;   RAM < need_ram → infeasible

* **NVMe capacity**: the node's share of the dataset (tokens × bytes per token ÷ nodes) plus
  its share of the retained checkpoints (retained · B_ckpt ÷ nodes); short → infeasible.
* **NVMe bandwidth.** Checkpoints are written to the local drives (⌈TB ÷ drive TB⌉ drives
  × the drive's write rate): the goodput model's checkpoint time C = C_fixed + B_ckpt ÷
  (nodes · W_nvme), at its Young interval τ = √(2·C·MTBF), costs C/τ of the run
  (``perf/goodput.py``, the same model the simulator uses). Dataset reads need
  tokens/s ÷ nodes × bytes per token; the drives read R_nvme:

      f_read = min(1, R_nvme / read_need)

* **Network.** The node's compute NICs (``nic_gbps``) are the perf engine's inter-node
  network (``Interconnect``, at the default network's NCCL efficiency), so the step model
  prices their exposed communication and re-picks the layout for them — no second model.

Delivered tokens/s = steady(network) · f_cpu · f_read · goodput(W_nvme), or 0 when RAM or
NVMe capacity is short.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.host_parts import HostPartAssumptions, NodeParts
from costsim.domain.performance import GoodputAssumptions, Interconnect, PerfDefaults
from costsim.domain.workload import TrainingSetup
from costsim.memory.estimate import adapter_counts_of
from costsim.memory.host import HostRam, host_ram, offload_optimizer_host_bytes
from costsim.perf.goodput import Goodput, estimate_goodput
from costsim.perf.layouts import LayoutConstraints
from costsim.perf.train_estimate import TrainingEstimate, estimate_training_run
from costsim.units import BYTES_PER_GB, BYTES_PER_GIB

BYTES_PER_TB = 1000 * BYTES_PER_GB


@dataclass(frozen=True, slots=True, kw_only=True)
class PartNeeds:
    """What one node needs of its parts for a training run."""

    cpu_cores: float
    host_ram: HostRam  # the memory engine's estimate (without staging)
    staging_bytes: int  # asynchronous checkpoint staging in host RAM
    offload_bytes: int  # what ZeRO-3 with the optimizer on the CPU would add (not modelled)
    nvme_dataset_bytes: int
    nvme_checkpoint_bytes: int
    vram_bytes: int  # GPU memory of the node, for the RAM/VRAM ratio

    @property
    def ram_bytes(self) -> int:
        """System RAM the node needs."""
        return self.host_ram.total_bytes + self.staging_bytes

    @property
    def ram_to_vram_with_offload(self) -> float:
        """The RAM the node would need with the optimizer offloaded ÷ its GPU memory."""
        return (self.host_ram.total_bytes + self.offload_bytes) / self.vram_bytes

    @property
    def nvme_bytes(self) -> int:
        """NVMe capacity the node needs."""
        return self.nvme_dataset_bytes + self.nvme_checkpoint_bytes

    @property
    def ram_to_vram(self) -> float:
        """The RAM the node needs ÷ its GPU memory (the seed rule says 1.5–2)."""
        return self.ram_bytes / self.vram_bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class PartsThroughput:
    """Delivered training throughput of a cluster of identical owned nodes."""

    parts: NodeParts
    nodes: int
    gpus_per_node: int
    estimate: TrainingEstimate  # the GPU step model on this NIC (layout re-searched)
    needs: PartNeeds
    cpu_factor: float
    read_factor: float
    goodput: Goodput  # with checkpoints written to the local NVMe
    shortfalls: tuple[str, ...]  # why the run cannot start (RAM or NVMe capacity)

    @property
    def feasible(self) -> bool:
        """True when RAM and NVMe capacity cover the need."""
        return not self.shortfalls

    @property
    def steady_tokens_per_s(self) -> float:
        """The GPUs' steady rate on this network (before CPU, reads and goodput)."""
        return self.estimate.step.tokens_per_s

    @property
    def delivered_tokens_per_s(self) -> float:
        """Tokens per wall-clock second: steady · f_cpu · f_read · goodput (0 if short)."""
        if not self.feasible:
            return 0.0
        return (self.steady_tokens_per_s * self.cpu_factor * self.read_factor
                * self.goodput.goodput)


def cpu_factor(cpu_cores: float, gpus_on_node: int, cores_per_gpu: float) -> float:
    """min(1, c / (k · c_need)): the share of the GPU step rate the node's cores sustain."""
    return min(1.0, cpu_cores / (gpus_on_node * cores_per_gpu))


def nvme_drives(nvme_tb: float, drive_tb: float) -> int:
    """Data drives holding ``nvme_tb`` (at least one; a 30.72 TB node is 8 × 3.84 TB)."""
    return max(1, math.ceil(nvme_tb / drive_tb - 1e-9))


def nvme_write_gb_per_s(nvme_tb: float, assumptions: HostPartAssumptions) -> float:
    """Sequential write of the node's drives together (GB/s)."""
    return (nvme_drives(nvme_tb, assumptions.nvme_drive_tb)
            * assumptions.nvme_write_gb_per_s_per_drive)


def read_factor(nvme_tb: float, tokens_per_s_per_node: float,
                assumptions: HostPartAssumptions) -> float:
    """min(1, R_nvme / need): whether the drives stream the dataset as fast as it is used."""
    need = tokens_per_s_per_node * assumptions.dataset_bytes_per_token
    have = (nvme_drives(nvme_tb, assumptions.nvme_drive_tb)
            * assumptions.nvme_read_gb_per_s_per_drive * BYTES_PER_GB)
    return 1.0 if need <= 0 else min(1.0, have / need)


def node_network(nic_gbps: float, gpus_per_node: int, efficiency: float) -> Interconnect:
    """The node's compute NICs as the perf engine's inter-node network."""
    return Interconnect(name=f"owned-{nic_gbps:g}g", node_bandwidth_gbit_per_s=nic_gbps,
                        gpus_per_node=gpus_per_node, efficiency=efficiency,
                        source="owned server's nic_gbps at the default network's efficiency")


def saved_params(arch: Architecture, setup: TrainingSetup) -> int:
    """Parameters a checkpoint saves: a LoRA run saves its adapters (and their optimizer
    states), not the frozen base (PEFT save_pretrained; the rule of ``train_estimate``)."""
    return adapter_counts_of(arch, setup.lora).total if setup.lora else arch.params().total


def checkpoint_bytes(params: int, goodput: GoodputAssumptions) -> float:
    """Bytes of one training-state checkpoint of ``params`` saved parameters."""
    return params * goodput.checkpoint_bytes_per_param


def part_needs(*, estimate: TrainingEstimate, gpu: GpuSpec, nodes: int, gpus_per_node: int,
               saved: int, dataset_bytes: float, checkpoints_retained: int,
               defaults: PerfDefaults, assumptions: HostPartAssumptions) -> PartNeeds:
    """What one node needs of its CPU, RAM and NVMe for the run ``estimate`` describes
    (``saved``: the parameters its checkpoints hold, :func:`saved_params`)."""
    setup = estimate.step.setup
    on_node = min(estimate.gpus, gpus_per_node)
    state = checkpoint_bytes(saved, defaults.goodput)
    ram = host_ram(weights_storage_bytes=estimate.params_total * setup.precision.bytes_per_element,
                   gpus=estimate.gpus, capacity_bytes=gpu.capacity_bytes,
                   tokens_per_micro_batch=setup.micro_batch * setup.seq_len,
                   gpus_per_node=gpus_per_node)
    return PartNeeds(
        cpu_cores=on_node * assumptions.cpu_cores_per_gpu,
        host_ram=ram,
        staging_bytes=round(assumptions.staging_copies * state / nodes),
        offload_bytes=offload_optimizer_host_bytes(saved, nodes),
        nvme_dataset_bytes=round(dataset_bytes / nodes),
        nvme_checkpoint_bytes=round(checkpoints_retained * state / nodes),
        vram_bytes=gpu.capacity_bytes * on_node,
    )


def shortfalls(parts: NodeParts, needs: PartNeeds) -> tuple[str, ...]:
    """Why a node with ``parts`` cannot run the job (RAM or NVMe capacity short)."""
    found = []
    have_ram = parts.ram_gib * BYTES_PER_GIB
    if have_ram < needs.ram_bytes:
        found.append(f"system RAM {parts.ram_gib} GiB < the {needs.ram_bytes / BYTES_PER_GIB:.0f}"
                     f" GiB a node needs (host processes, checkpoint staging)")
    if parts.nvme_tb * BYTES_PER_TB < needs.nvme_bytes:
        found.append(f"NVMe {parts.nvme_tb:g} TB < the {needs.nvme_bytes / BYTES_PER_TB:.2f} TB "
                     f"a node needs (its dataset share and retained checkpoints)")
    return tuple(found)


def nvme_goodput(steady_s: float, gpus: int, saved: int, *, gpus_per_node: int,
                 nvme_tb: float, defaults: PerfDefaults,
                 assumptions: HostPartAssumptions) -> Goodput:
    """The goodput model with checkpoints written to the node's local NVMe drives."""
    local = replace(defaults.goodput,
                    checkpoint_write_gb_per_s_per_node=nvme_write_gb_per_s(nvme_tb, assumptions))
    return estimate_goodput(steady_s, gpus, saved, gpus_per_node=gpus_per_node,
                            assumptions=local)


def steady_on_nic(arch: Architecture, gpu: GpuSpec, gpus: int, tokens: float,
                  base: TrainingSetup, fixed: LayoutConstraints, *, nic_gbps: float,
                  gpus_per_node: int, defaults: PerfDefaults) -> TrainingEstimate:
    """The GPU step model on ``gpus`` GPUs joined by nodes of ``nic_gbps`` (layout searched).

    Raises:
        InfeasibleError: no layout fits the GPUs' memory. InputError: bad input.
    """
    efficiency = defaults.network_for(gpu.name).efficiency
    return estimate_training_run(arch, gpu, gpus, tokens, base, fixed, defaults=defaults,
                                 price_usd_per_gpu_hour=0.0,
                                 network=node_network(nic_gbps, gpus_per_node, efficiency))


def dataset_bytes_of(tokens: float, assumptions: HostPartAssumptions) -> float:
    """Bytes of a pre-tokenized dataset of ``tokens`` tokens (when the scenario gives none)."""
    return tokens * assumptions.dataset_bytes_per_token


def delivered_on_parts(estimate: TrainingEstimate, gpu: GpuSpec, parts: NodeParts, *,
                       gpus_per_node: int, saved: int, checkpoints_retained: int,
                       defaults: PerfDefaults, assumptions: HostPartAssumptions,
                       dataset_bytes: float | None = None) -> PartsThroughput:
    """Delivered throughput of the run ``estimate`` (made on ``parts.nic_gbps``) on nodes with
    ``parts``: the CPU and read factors, the NVMe goodput and the RAM/NVMe thresholds.
    ``dataset_bytes`` None: the run's tokens, pre-tokenized."""
    nodes = max(1, math.ceil(estimate.gpus / gpus_per_node))
    data = dataset_bytes_of(estimate.tokens, assumptions) if dataset_bytes is None else (
        dataset_bytes)
    needs = part_needs(estimate=estimate, gpu=gpu, nodes=nodes, gpus_per_node=gpus_per_node,
                       saved=saved, dataset_bytes=data,
                       checkpoints_retained=checkpoints_retained, defaults=defaults,
                       assumptions=assumptions)
    steady = estimate.step.tokens_per_s
    f_cpu = cpu_factor(parts.cpu_cores, min(estimate.gpus, gpus_per_node),
                       assumptions.cpu_cores_per_gpu)
    f_read = read_factor(parts.nvme_tb, steady / nodes, assumptions)
    goodput = nvme_goodput(estimate.tokens / (steady * f_cpu * f_read), estimate.gpus,
                           saved, gpus_per_node=gpus_per_node, nvme_tb=parts.nvme_tb,
                           defaults=defaults, assumptions=assumptions)
    return PartsThroughput(parts=parts, nodes=nodes, gpus_per_node=gpus_per_node,
                           estimate=estimate, needs=needs, cpu_factor=f_cpu,
                           read_factor=f_read, goodput=goodput,
                           shortfalls=shortfalls(parts, needs))


def training_on_parts(arch: Architecture, gpu: GpuSpec, gpus: int, tokens: float,
                      base: TrainingSetup, fixed: LayoutConstraints, parts: NodeParts, *,
                      gpus_per_node: int, checkpoints_retained: int, defaults: PerfDefaults,
                      assumptions: HostPartAssumptions,
                      dataset_bytes: float | None = None) -> PartsThroughput:
    """Delivered training throughput of ``gpus`` GPUs on owned nodes with ``parts``.

    Raises:
        InfeasibleError: no layout fits the GPUs' memory. InputError: bad input.
    """
    estimate = steady_on_nic(arch, gpu, gpus, tokens, base, fixed, nic_gbps=parts.nic_gbps,
                             gpus_per_node=gpus_per_node, defaults=defaults)
    return delivered_on_parts(estimate, gpu, parts, gpus_per_node=gpus_per_node,
                              saved=saved_params(arch, base),
                              checkpoints_retained=checkpoints_retained, defaults=defaults,
                              assumptions=assumptions, dataset_bytes=dataset_bytes)
