"""Host RAM per node beside the 1.5–2× VRAM rule of thumb."""

from __future__ import annotations

from costsim.memory.host import PROCESS_BYTES, host_ram

GIB = 2**30


def test_rule_of_thumb_range_is_per_node() -> None:
    # DESIGN.md §2: 4×A100-40GB → 240–320 GB of RAM (here in the catalog's bytes).
    ram = host_ram(weights_storage_bytes=14e9, gpus=4, capacity_bytes=40 * GIB,
                   tokens_per_micro_batch=4096)
    assert ram.rule_of_thumb_bytes == (240 * GIB, 320 * GIB)
    assert ram.gpus_on_node == 4
    assert ram.total_bytes == 14e9 + 4 * PROCESS_BYTES + ram.data_loading_bytes


def test_a_big_job_counts_one_node() -> None:
    ram = host_ram(weights_storage_bytes=1e9, gpus=512, capacity_bytes=80 * GIB,
                   tokens_per_micro_batch=1)
    assert ram.gpus_on_node == 8
    assert ram.processes_bytes == 8 * PROCESS_BYTES
