"""Measured GPU use (telemetry samples) summarised, and the smallest card that holds it
(docs/telemetry.md).

The memory a monitoring tool reports (nvidia-smi ``memory.used``, DCGM ``FBUSD``) is everything
resident on the GPU: the CUDA context, NCCL buffers and the framework allocator's cache
(PyTorch's caching allocator keeps freed blocks reserved). That is what
:class:`~costsim.memory.runtime.HeadroomPolicy` models as runtime overhead on top of the
model's tensors, so a measured peak is compared with a card's usable memory as it stands —
nothing is added to it — and it is an upper bound of what the job needs: the allocator may
hold cache it could release on a smaller card.

A card holds a measured peak when the memory engine's verdict for it is ``fits``:
peak ≤ usable × (1 − tight margin), usable = ⌊capacity × utilization cap⌋ (0.95 training,
0.90 inference; :mod:`costsim.memory.runtime`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costsim.domain.gpu import GpuSpec
from costsim.domain.telemetry import GpuSample
from costsim.memory.runtime import DEFAULT_POLICY, HeadroomPolicy, Verdict, verdict_for

# Seed rule of thumb: an 80 GB card whose cores stay under 30 % utilization on a small model is
# far too big for it ("cores idle"); the same 30 % as LOW_MEMORY_USE for memory.
LOW_UTILIZATION_PCT = 30.0
# The percentile reported beside the peak: a one-off spike (a checkpoint save, an evaluation
# pass) shows in the peak, the steady working set in the P95.
MEMORY_PERCENTILE = 95.0


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageSummary:
    """Peaks and means over a set of samples; None where no sample had the value.

    ``idle_share`` = share of the samples with a utilization value that read 0 %.
    ``p95_memory_used_bytes`` = the nearest-rank 95th percentile (the smallest sample value
    that at least 95 % of the samples do not exceed).
    """

    samples: int
    memory_samples: int
    utilization_samples: int
    peak_memory_used_bytes: int | None
    p95_memory_used_bytes: int | None
    memory_total_bytes: int | None
    mean_utilization_pct: float | None
    idle_share: float | None


def nearest_rank(sorted_values: Sequence[int], percent: float) -> int:
    """The nearest-rank percentile of ascending ``sorted_values`` (non-empty)."""
    if not sorted_values:
        raise ValueError("nearest_rank needs at least one value")
    rank = max(1, math.ceil(percent / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize_usage(samples: Sequence[GpuSample]) -> UsageSummary:
    """Peak, P95 and reported total of the memory used; mean utilization and idle share."""
    used = sorted(s.memory_used_bytes for s in samples if s.memory_used_bytes is not None)
    totals = [s.memory_total_bytes for s in samples if s.memory_total_bytes is not None]
    utilization = [s.utilization_pct for s in samples if s.utilization_pct is not None]
    return UsageSummary(
        samples=len(samples), memory_samples=len(used), utilization_samples=len(utilization),
        peak_memory_used_bytes=used[-1] if used else None,
        p95_memory_used_bytes=nearest_rank(used, MEMORY_PERCENTILE) if used else None,
        memory_total_bytes=max(totals) if totals else None,
        mean_utilization_pct=sum(utilization) / len(utilization) if utilization else None,
        idle_share=(sum(1 for u in utilization if u == 0.0) / len(utilization)
                    if utilization else None),
    )


def usable_bytes(gpu: GpuSpec, *, inference: bool,
                 policy: HeadroomPolicy = DEFAULT_POLICY) -> int:
    """The memory a plan may use on ``gpu``: ⌊capacity × the policy's cap⌋ (as the engine)."""
    cap = policy.infer_utilization if inference else policy.train_utilization
    return math.floor(gpu.capacity_bytes * cap)


def verdict_on(gpu: GpuSpec, peak_bytes: int, *, inference: bool,
               policy: HeadroomPolicy = DEFAULT_POLICY) -> Verdict:
    """``fits`` / ``tight`` / ``oom`` of a measured peak on ``gpu`` (nothing added to it)."""
    return verdict_for(peak_bytes, usable_bytes(gpu, inference=inference, policy=policy),
                       policy.tight_margin)


def smallest_fitting(peak_bytes: int, gpus: Sequence[GpuSpec], *, inference: bool,
                     policy: HeadroomPolicy = DEFAULT_POLICY) -> tuple[GpuSpec, ...]:
    """The cards of the smallest capacity among ``gpus`` on which ``peak_bytes`` fits, in the
    order given (several cards share a size: L4 and A10G, L40S and L40); empty when none does.
    """
    fitting = [gpu for gpu in gpus
               if verdict_on(gpu, peak_bytes, inference=inference, policy=policy)
               is Verdict.FITS]
    if not fitting:
        return ()
    smallest = min(gpu.capacity_bytes for gpu in fitting)
    return tuple(gpu for gpu in fitting if gpu.capacity_bytes == smallest)
