"""Placing experiment jobs on a fixed set of nodes: the N+1 rule and host RAM.

A GPU holds N jobs of ``job_bytes`` when (N + 1) · job ≤ usable memory (the seed articles' rule, the
memory engine's :func:`costsim.memory.search.jobs_sharing_node`): room for N jobs plus one job's
worth of headroom; a job alone needs only to fit. A node takes a job when enough of its GPUs
have a free slot and its host RAM still holds the job's share. Jobs sharing a GPU are assumed
not to slow each other (the seed article's premise for small prototype jobs; documented in
docs/simulator.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.memory.search import jobs_sharing_node


@dataclass(frozen=True, slots=True, kw_only=True)
class JobNeed:
    """What one job asks of a node."""

    gpus: int
    gpu_bytes: int  # per GPU
    host_ram_bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeShape:
    """One node of the pool."""

    gpus: int
    gpu_usable_bytes: int
    host_ram_bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Where a job runs: a node and the GPUs it holds a slot on."""

    node: int
    gpus: tuple[int, ...]


def slots_per_gpu(job: JobNeed, node: NodeShape) -> int:
    """Jobs of this size one GPU holds: N under the N+1 rule when they share it, and one job
    alone whenever it fits (the headroom rule is about sharing, not about a lone job)."""
    alone = 1 if job.gpu_bytes <= node.gpu_usable_bytes else 0
    return max(alone, jobs_sharing_node(job.gpu_bytes, node.gpu_usable_bytes))


def fits_anywhere(job: JobNeed, node: NodeShape) -> bool:
    """True when an empty node could run the job (else it would wait forever)."""
    return (job.gpus <= node.gpus and slots_per_gpu(job, node) >= 1
            and job.host_ram_bytes <= node.host_ram_bytes)


class Cluster:
    """The mutable occupancy of ``nodes`` identical nodes (inside one simulation only)."""

    def __init__(self, shape: NodeShape, nodes: int) -> None:
        self.shape = shape
        self._jobs_on_gpu = [[0] * shape.gpus for _ in range(nodes)]
        self._ram_used = [0] * nodes

    def place(self, job: JobNeed) -> Placement | None:
        """First fit: the first node with ``job.gpus`` GPUs that have a free slot and the host
        RAM for the job; None when no node has room now."""
        slots = slots_per_gpu(job, self.shape)
        if slots < 1:
            return None
        for index, gpus in enumerate(self._jobs_on_gpu):
            if self._ram_used[index] + job.host_ram_bytes > self.shape.host_ram_bytes:
                continue
            free = [g for g, jobs in enumerate(gpus) if jobs < slots]
            if len(free) >= job.gpus:
                chosen = tuple(sorted(free, key=lambda g: gpus[g])[:job.gpus])
                for g in chosen:
                    gpus[g] += 1
                self._ram_used[index] += job.host_ram_bytes
                return Placement(node=index, gpus=chosen)
        return None

    def release(self, job: JobNeed, placement: Placement) -> None:
        """Free what :meth:`place` took."""
        for g in placement.gpus:
            self._jobs_on_gpu[placement.node][g] -= 1
        self._ram_used[placement.node] -= job.host_ram_bytes

    @property
    def running_jobs(self) -> int:
        """Job-slots in use (a multi-GPU job counts once per GPU)."""
        return sum(sum(gpus) for gpus in self._jobs_on_gpu)
