"""The seed article's server: three 12 GB jobs on 2×A100-40GB with 128 GB of RAM."""

from __future__ import annotations

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.sim.packing import Cluster, JobNeed, NodeShape, fits_anywhere, slots_per_gpu
from costsim.units import BYTES_PER_GIB


@pytest.fixture
def seed_server() -> NodeShape:
    a100 = get_gpu("A100")
    return NodeShape(gpus=2, gpu_usable_bytes=int(a100.capacity_bytes
                                                  * DEFAULT_POLICY.train_utilization),
                     host_ram_bytes=128 * BYTES_PER_GIB)


JOB_12 = JobNeed(gpus=1, gpu_bytes=12 * BYTES_PER_GIB, host_ram_bytes=18 * BYTES_PER_GIB)


def test_three_12gb_jobs_run_together_and_the_first_beyond_the_rules_waits(
        seed_server: NodeShape) -> None:
    # 38 GiB usable per A100-40GB: (N + 1) x 12 <= 38 -> 2 jobs a GPU, 4 on the server
    assert slots_per_gpu(JOB_12, seed_server) == 2
    cluster = Cluster(seed_server, nodes=1)
    placed = [cluster.place(JOB_12) for _ in range(3)]
    assert all(p is not None for p in placed)
    assert cluster.place(JOB_12) is not None  # the fourth still fits the N+1 rule
    assert cluster.place(JOB_12) is None  # the fifth waits
    assert cluster.running_jobs == 4


def test_host_ram_limits_jobs_before_gpu_memory(seed_server: NodeShape) -> None:
    hungry = JobNeed(gpus=1, gpu_bytes=12 * BYTES_PER_GIB, host_ram_bytes=50 * BYTES_PER_GIB)
    cluster = Cluster(seed_server, nodes=1)
    assert cluster.place(hungry) is not None
    assert cluster.place(hungry) is not None
    assert cluster.place(hungry) is None  # 150 GiB > 128 GiB of host RAM


def test_released_slots_are_reused(seed_server: NodeShape) -> None:
    cluster = Cluster(seed_server, nodes=1)
    placements = [cluster.place(JOB_12) for _ in range(4)]
    assert cluster.place(JOB_12) is None
    first = placements[0]
    assert first is not None
    cluster.release(JOB_12, first)
    assert cluster.place(JOB_12) is not None


def test_a_job_too_big_for_any_node_is_reported(seed_server: NodeShape) -> None:
    alone = JobNeed(gpus=1, gpu_bytes=30 * BYTES_PER_GIB, host_ram_bytes=BYTES_PER_GIB)
    assert slots_per_gpu(alone, seed_server) == 1  # fits alone; (1 + 1) x 30 > 38 to share
    huge = JobNeed(gpus=1, gpu_bytes=39 * BYTES_PER_GIB, host_ram_bytes=BYTES_PER_GIB)
    assert not fits_anywhere(huge, seed_server)
    wide = JobNeed(gpus=4, gpu_bytes=BYTES_PER_GIB, host_ram_bytes=BYTES_PER_GIB)
    assert not fits_anywhere(wide, seed_server)
