"""Searches over the memory equations: the largest micro-batch that fits, the parallel layouts
that fit a model on a GPU type (ranked), and the N+1 rule for jobs sharing a node.

Memory never falls when the micro-batch grows (a property test checks it), so the largest batch
is found by doubling and bisection. Layouts are enumerated and evaluated in one vectorized call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.workload import InferenceSetup, ParallelLayout, TrainingSetup
from costsim.errors import InputError
from costsim.memory.core import TRAIN_COLUMNS, training_components
from costsim.memory.estimate import (
    encode_training,
    estimate_inference,
    estimate_training,
    stack_rows,
)
from costsim.memory.runtime import DEFAULT_POLICY, HeadroomPolicy, Verdict

MAX_SEARCH_BATCH = 1 << 20


def _largest(check: Callable[[int], bool], limit: int) -> int:
    """Largest n in 1..limit with check(n) true (monotone: true then false); 0 if none."""
    if not check(1):
        return 0
    lo, hi = 1, 2
    while hi <= limit and check(hi):
        lo, hi = hi, hi * 2
    hi = min(hi, limit + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if check(mid):
            lo = mid
        else:
            hi = mid
    return lo


def max_micro_batch(arch: Architecture, gpu: GpuSpec, setup: TrainingSetup,
                    policy: HeadroomPolicy = DEFAULT_POLICY, limit: int = MAX_SEARCH_BATCH
                    ) -> int:
    """The largest micro-batch with verdict ``fits`` (0 when even 1 does not fit)."""
    def fits(b: int) -> bool:
        trial = replace(setup, micro_batch=b)
        return estimate_training(arch, gpu, trial, policy).verdict is Verdict.FITS
    return _largest(fits, limit)


def max_batch(arch: Architecture, gpu: GpuSpec, setup: InferenceSetup,
              policy: HeadroomPolicy = DEFAULT_POLICY, limit: int = MAX_SEARCH_BATCH) -> int:
    """The largest number of concurrent sequences with verdict ``fits`` (0 if none)."""
    def fits(b: int) -> bool:
        trial = replace(setup, batch=b)
        return estimate_inference(arch, gpu, trial, policy).verdict is Verdict.FITS
    return _largest(fits, limit)


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutFit:
    """One parallel layout and its per-GPU memory."""

    layout: ParallelLayout
    total_bytes: int
    usable_bytes: int
    verdict: Verdict

    @property
    def gpus(self) -> int:
        """dp · tp · pp."""
        return self.layout.gpus


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` >= 1, ascending."""
    # Pairs up to √n: a fleet of 10^11 GPUs must not mean 10^11 trial divisions.
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def fitting_layouts(arch: Architecture, gpu: GpuSpec, setup: TrainingSetup, *, max_gpus: int,
                    max_tp: int = 8, policy: HeadroomPolicy = DEFAULT_POLICY,
                    include_tight: bool = False) -> list[LayoutFit]:
    """Every TP × PP × DP × ZeRO layout of at most ``max_gpus`` GPUs whose verdict is ``fits``
    (or ``tight`` too), ranked by GPU count, then per-GPU total (less first).

    TP stays within one node (``max_tp``) and divides the attention heads; PP divides the layers;
    SP follows ``setup.layout.sp``. Micro-batch, sequence and the rest come from ``setup``.
    """
    if max_gpus < 1:
        raise InputError("", "--gpus", f"must be >= 1 (got {max_gpus})")
    kv = arch.num_kv_heads
    tps = [t for t in divisors(arch.num_heads) if t <= max_tp and (kv % t == 0 or t % kv == 0)]
    pps = [p for p in divisors(arch.num_layers) if p <= max_gpus]
    layouts: list[ParallelLayout] = []
    for tp in tps:
        for pp in pps:
            for dp in range(1, max_gpus // (tp * pp) + 1):
                for zero in (0, 1, 2, 3):
                    if dp == 1 and zero > 0:
                        continue  # nothing to shard over
                    layouts.append(ParallelLayout(tp=tp, pp=pp, dp=dp, zero=zero,
                                                  sp=setup.layout.sp and tp > 1))
    if not layouts:
        return []
    rows = [encode_training(arch, gpu, replace(setup, layout=lay)) for lay in layouts]
    arrays = training_components(stack_rows(rows, TRAIN_COLUMNS), policy)
    limit = 1 if include_tight else 0
    keep = np.nonzero(arrays.verdict_code <= limit)[0]
    fits = [LayoutFit(layout=layouts[i], total_bytes=int(arrays.total[i]),
                      usable_bytes=int(arrays.usable[i]),
                      verdict=Verdict.FITS if arrays.verdict_code[i] == 0 else Verdict.TIGHT)
            for i in keep]
    fits.sort(key=lambda f: (f.gpus, f.total_bytes, f.layout.tp, f.layout.pp, f.layout.zero))
    return fits


def smallest_gpu_count(arch: Architecture, gpu: GpuSpec, setup: TrainingSetup, *,
                       max_gpus: int = 1024, policy: HeadroomPolicy = DEFAULT_POLICY
                       ) -> LayoutFit | None:
    """The fitting layout with the fewest GPUs (ties: least memory per GPU), or None."""
    count = 1
    while count <= max_gpus:
        found = fitting_layouts(arch, gpu, setup, max_gpus=count, policy=policy)
        if found:
            return found[0]
        count *= 2
    return None


def jobs_sharing_node(job_bytes: int, node_usable_bytes: int) -> int:
    """Jobs of ``job_bytes`` each that may share ``node_usable_bytes`` under the N+1 rule
    (room for N jobs plus one job's worth of headroom, docs/memory.md): floor(usable/job)−1,
    never below 0."""
    if job_bytes <= 0:
        raise InputError("", "job_bytes", f"must be > 0 (got {job_bytes})")
    return max(0, node_usable_bytes // job_bytes - 1)


def n_plus_one_fits(job_bytes: int, jobs: int, node_usable_bytes: int) -> bool:
    """True when ``jobs`` jobs plus one job's headroom fit: (N + 1) · job ≤ usable."""
    return (jobs + 1) * job_bytes <= node_usable_bytes
