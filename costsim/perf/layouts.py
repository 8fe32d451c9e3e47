"""The layouts the training search may try: every (TP, PP, DP, virtual stages, ZeRO, micro-batch,
recomputation) that runs the model on exactly the GPUs given and keeps the global batch.

The global batch is a training hyper-parameter, not a free variable: dp · micro_batch ·
grad_accum must equal the batch asked for (or the default), or come within ±10 % of it where
no layout makes it exactly (the estimate then warns, naming both). Data parallelism alone cannot
use more GPUs than the batch has sequences, so at scale the batch caps dp and TP (within a
node) and PP (up to one layer per stage) must take the rest, as the published runs at that
scale do (Llama 3 405B: TP 8 × PP 16 × DP 128 on 16,384 GPUs for a 2,048-sequence batch,
Dubey et al. 2024, Table 4). Where no layout can, :func:`unusable_gpus_message` says so and
names the largest GPU count that this batch can use.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from costsim.domain.architecture import Architecture
from costsim.domain.workload import ParallelLayout, Recompute, TrainingSetup
from costsim.memory.search import divisors
from costsim.perf.training import LayoutArrays, layout_arrays

IntArray = NDArray[np.int64]

MICRO_BATCHES = (1, 2, 4, 8, 16, 32)
# How far the achieved global batch may sit from the one asked: the nearest achievable batch
# within ±10 % is used (with a warning) where dp · micro_batch · grad_accum cannot make it
# exactly. Batch sizes of published runs are round numbers, and near the critical batch B_c a
# 10 % larger batch needs about 5 % more tokens for the same loss and 5 % fewer steps
# (McCandlish et al. 2018: E/E_min = 1 + B/B_c, S/S_min = 1 + B_c/B): a rounding, not a
# different run. It is always reported.
BATCH_TOLERANCE = 0.10


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutConstraints:
    """Layout settings fixed by the caller; None means "search it"."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    zero: int | None = None
    sp: bool | None = None
    virtual_stages: int | None = None
    micro_batch: int | None = None
    grad_accum: int | None = None
    recompute: Recompute | None = None
    global_batch_seqs: int | None = None


def keeps_batch(achieved: int, target: int) -> bool:
    """True when ``achieved`` sequences are within BATCH_TOLERANCE of ``target``."""
    return abs(achieved - target) <= BATCH_TOLERANCE * target


def tensor_degrees(arch: Architecture, gpus_per_node: int, fixed: int | None) -> list[int]:
    """TP degrees: within one node, dividing the heads, and dividing or multiplying the KV
    heads (each rank holds whole KV heads or a share of one)."""
    if fixed:
        return [fixed]
    kv = arch.num_kv_heads
    return [t for t in divisors(arch.num_heads) if t <= gpus_per_node
            and (kv % t == 0 or t % kv == 0)]


def pipeline_degrees(arch: Architecture, fixed: int | None) -> list[int]:
    """PP degrees: at most one stage per layer. A degree that does not divide the layers runs
    ⌈L/pp⌉ on the busiest stage (the step model charges the imbalance), as Llama 3's 126
    layers on 16 stages do."""
    return [fixed] if fixed else list(range(1, arch.num_layers + 1))


def virtual_stage_options(arch: Architecture, pp: int, fixed: int | None) -> list[int]:
    """Virtual stages per GPU: each must hold whole layers, so v divides the ⌈L/pp⌉ layers of
    the busiest stage; none without pipeline parallelism."""
    if fixed:
        return [fixed]
    if pp == 1:
        return [1]
    return divisors(-(-arch.num_layers // pp))


def _grad_accum(fixed: LayoutConstraints, target: int | None, mb: int, dp: int) -> int:
    if fixed.grad_accum:
        return fixed.grad_accum
    return max(1, round((target or 1) / (mb * dp)))


def _batch_shapes(dp: int, fixed: LayoutConstraints,
                  target: int | None) -> Iterator[tuple[int, int]]:
    """(micro_batch, grad_accum) pairs of ``dp`` replicas that keep the batch."""
    mbs = [fixed.micro_batch] if fixed.micro_batch else list(MICRO_BATCHES)
    for mb in mbs:
        ga = _grad_accum(fixed, target, mb, dp)
        if target is None or keeps_batch(mb * dp * ga, target):
            yield mb, ga


# The search's variables, one column each (names as in the memory engine's TRAIN_COLUMNS).
LAYOUT_COLUMNS = ("tp", "pp", "dp", "zero", "sp", "vpp", "micro_batch", "grad_accum",
                  "recompute")
_RECOMPUTES = tuple(Recompute)  # code i = RECOMPUTE_CODES (none 0, selective 1, full 2)


@dataclass(frozen=True, slots=True)
class CandidateTable:
    """Candidate layouts as integer columns (:data:`LAYOUT_COLUMNS`), one row per layout: the
    search rates thousands at once without building a TrainingSetup for each."""

    columns: dict[str, IntArray]

    def __len__(self) -> int:
        return len(self.columns["tp"])

    def take(self, index: IntArray) -> CandidateTable:
        """The rows at ``index``."""
        return CandidateTable({name: values[index] for name, values in self.columns.items()})

    def setup(self, base: TrainingSetup, i: int) -> TrainingSetup:
        """Row ``i`` as ``base`` with its layout, batch shape and recomputation."""
        col = {name: int(values[i]) for name, values in self.columns.items()}
        layout = ParallelLayout(tp=col["tp"], pp=col["pp"], dp=col["dp"], zero=col["zero"],
                                sp=bool(col["sp"]), virtual_stages=col["vpp"])
        return replace(base, layout=layout, micro_batch=col["micro_batch"],
                       grad_accum=col["grad_accum"], recompute=_RECOMPUTES[col["recompute"]])

    def step_layouts(self, base: TrainingSetup, arch: Architecture) -> LayoutArrays:
        """The step model's :class:`LayoutArrays` of every row (``base`` gives the sequence
        length and, for LoRA, the trainable parameters)."""
        one = layout_arrays([base], arch)
        n = len(self)
        c = self.columns
        return LayoutArrays(
            tp=c["tp"], pp=c["pp"], dp=c["dp"], zero=c["zero"], micro_batch=c["micro_batch"],
            grad_accum=c["grad_accum"], seq_len=np.full(n, base.seq_len, dtype=np.int64),
            recompute=c["recompute"], virtual_stages=c["vpp"],
            trainable_params=(None if one.trainable_params is None
                              else np.full(n, float(one.trainable_params[0]))),
            frozen_base=None if one.frozen_base is None else np.full(n, bool(one.frozen_base[0])),
            quantized_params=(None if one.quantized_params is None
                              else np.full(n, float(one.quantized_params[0]))))


def candidate_table(arch: Architecture, gpus: int, fixed: LayoutConstraints, target: int | None,
                    gpus_per_node: int) -> CandidateTable:
    """Every layout of exactly ``gpus`` GPUs that honours ``fixed`` and keeps the global batch
    of ``target`` sequences (None: the batch follows from a fixed grad_accum)."""
    rows: list[tuple[int, ...]] = []
    codes = [_RECOMPUTES.index(fixed.recompute)] if fixed.recompute else [0, 1, 2]
    for tp in tensor_degrees(arch, gpus_per_node, fixed.tp):
        if gpus % tp:
            continue
        for pp in pipeline_degrees(arch, fixed.pp):
            if pp > gpus // tp or (gpus // tp) % pp:
                continue
            dp = gpus // (tp * pp)
            if fixed.dp is not None and fixed.dp != dp:
                continue
            zeros = [fixed.zero] if fixed.zero is not None else ([0, 1, 2, 3] if dp > 1 else [0])
            sp = int((fixed.sp if fixed.sp is not None else True) and tp > 1)
            for mb, ga in _batch_shapes(dp, fixed, target):
                # The interleaved schedule needs at least pp micro-batches per step.
                for v in virtual_stage_options(arch, pp, fixed.virtual_stages):
                    if v > 1 and ga < pp:
                        continue
                    rows.extend((tp, pp, dp, zero, sp, v, mb, ga, rc)
                                for zero in zeros for rc in codes)
    matrix = np.array(rows, dtype=np.int64).reshape(len(rows), len(LAYOUT_COLUMNS))
    return CandidateTable({name: np.ascontiguousarray(matrix[:, i])
                           for i, name in enumerate(LAYOUT_COLUMNS)})


def candidate_setups(arch: Architecture, gpus: int, base: TrainingSetup,
                     fixed: LayoutConstraints, target: int | None,
                     gpus_per_node: int) -> list[TrainingSetup]:
    """:func:`candidate_table` as training setups built on ``base``."""
    table = candidate_table(arch, gpus, fixed, target, gpus_per_node)
    return [table.setup(base, i) for i in range(len(table))]


def _largest_batch_keeping_dp(limit: int, fixed: LayoutConstraints, target: int) -> int:
    """The largest dp ≤ ``limit`` whose replicas can keep the batch (0 if none).

    With micro-batch b, dp works when some grad_accum g puts b·dp·g within the tolerance of the
    target (the search's g = round(target/(b·dp)) is then the nearest such g): dp lies in
    [0.9·T/(b·g), 1.1·T/(b·g)] for some g ≥ 1. The g that reaches down to ``limit`` and its
    neighbours hold the largest such dp, so no scan over dp is needed (a 10^9-GPU fleet)."""
    if fixed.dp is not None:
        keeps = fixed.dp <= limit and any(_batch_shapes(fixed.dp, fixed, target))
        return fixed.dp if keeps else 0
    best = 0
    for mb in [fixed.micro_batch] if fixed.micro_batch else MICRO_BATCHES:
        if fixed.grad_accum:
            accums: list[int] = [fixed.grad_accum]
        else:
            reach = max(1, math.ceil(target * (1 - BATCH_TOLERANCE) / (mb * limit)))
            accums = list(range(max(1, reach - 1), reach + 2))
        for ga in accums:
            dp = min(limit, math.floor(target * (1 + BATCH_TOLERANCE) / (mb * ga)))
            # Step down past rounding at the interval's edge; checked by the search's own rule.
            for trial in range(dp, max(0, dp - 3), -1):
                if trial > best and any(_batch_shapes(trial, fixed, target)):
                    best = trial
                    break
    return best


def max_batch_keeping_gpus(arch: Architecture, gpus: int, fixed: LayoutConstraints,
                           target: int, gpus_per_node: int) -> tuple[int, ParallelLayout | None]:
    """The largest GPU count ≤ ``gpus`` that some layout can use while keeping the batch of
    ``target`` sequences (memory aside), with that layout; (0, None) when none can."""
    best, best_layout = 0, None
    for tp in tensor_degrees(arch, gpus_per_node, fixed.tp):
        for pp in pipeline_degrees(arch, fixed.pp):
            if tp * pp > gpus:
                break
            dp = _largest_batch_keeping_dp(gpus // (tp * pp), fixed, target)
            if dp and tp * pp * dp > best:
                best, best_layout = tp * pp * dp, ParallelLayout(tp=tp, pp=pp, dp=dp)
    return best, best_layout


def unusable_gpus_message(arch: Architecture, gpus: int, fixed: LayoutConstraints, target: int,
                          seq_len: int, gpus_per_node: int) -> str:
    """Why no layout of ``gpus`` GPUs keeps the batch, and the largest count that can."""
    best, layout = max_batch_keeping_gpus(arch, gpus, fixed, target, gpus_per_node)
    low = int(target * (1 - BATCH_TOLERANCE) + 0.999999)
    high = int(target * (1 + BATCH_TOLERANCE))
    head = (f"{gpus} GPUs cannot be used with a global batch of {target} sequences "
            f"({target * seq_len:,} tokens): no layout makes dp x micro_batch x grad_accum "
            f"fall in {low}..{high} (±{BATCH_TOLERANCE:.0%}) with dp = GPUs/(tp x pp), tp "
            f"dividing the heads within one node of {gpus_per_node} GPUs and pp at most the "
            f"{arch.num_layers} layers, under the degrees given")
    if layout is None:
        return f"{head}; no GPU count can, with the degrees given"
    return (f"{head}; at most {best} GPUs can (tp {layout.tp} x pp {layout.pp} x dp "
            f"{layout.dp}); use that many or a larger batch (--global-batch-tokens)")
