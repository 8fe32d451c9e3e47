"""A whole training run: the fastest layout that fits, steady time, goodput, all-in time, cost.

The layout search enumerates the layouts of :mod:`costsim.perf.layouts` (TP within a node, PP up
to one layer per stage, DP = the rest, virtual pipeline stages, ZeRO stage, micro-batch and
recomputation; only those that keep the global batch); the memory engine rates every candidate
in one vectorized call, the step-time model scores the ones that fit in another, and the
fastest wins. Degrees given by the caller are kept fixed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.measurements import Basis
from costsim.domain.performance import GlobalBatchDefaults, Interconnect, PerfDefaults
from costsim.domain.workload import ParallelLayout, Recompute, TrainingSetup
from costsim.errors import InfeasibleError, InputError
from costsim.memory.estimate import (
    adapter_counts_of,
    check_layout,
    estimate_training,
    shape_of,
    training_components_of_layouts,
)
from costsim.memory.runtime import DEFAULT_POLICY, LOW_MEMORY_USE, HeadroomPolicy
from costsim.perf.batch import default_global_batch
from costsim.perf.goodput import Goodput, estimate_goodput
from costsim.perf.layouts import (
    BATCH_TOLERANCE,
    CandidateTable,
    LayoutConstraints,
    candidate_table,
    unusable_gpus_message,
)
from costsim.perf.starved_batch import starved_batch_warning
from costsim.perf.training import (
    StepArrays,
    TrainingStep,
    hardware_terms,
    layout_arrays,
    stack_hardware,
    step_from_arrays,
    training_step_arrays,
)
from costsim.units import BYTES_PER_GIB, SECONDS_PER_HOUR

# Imbalance warning thresholds (docs/performance.md §1, beside LOW_MEMORY_USE): they decide
# only when a warning is shown, never an estimate.
LOW_MFU = 0.20
HIGH_OVERHEAD_SHARE = 0.40
LOW_GOODPUT = 0.80


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutChoice:
    """The chosen layout, its step time and memory, and how many candidates were rated."""

    step: TrainingStep
    memory_total_bytes: int
    memory_usable_bytes: int
    candidates: int
    fitting: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingEstimate:
    """Everything ``costsim estimate train`` reports (docs/performance.md), in base units."""

    model: str
    params_total: int
    tokens: float
    gpu: str
    gpus: int
    network: str
    step: TrainingStep
    flops_total: float
    goodput: Goodput
    gpu_hours: float
    price_usd_per_gpu_hour: float
    cost_usd: float
    memory_total_bytes: int
    memory_usable_bytes: int
    candidates: int
    fitting: int
    warnings: tuple[str, ...]
    global_batch_basis: str = "given"  # "given", or which default was used and why
    framework_efficiency: float = 1.0  # the framework's factor on η∞ (1 = Megatron-class)
    stack_era: str = "current"  # the training stack's era ("legacy": 2022 or before)
    stack_efficiency: float = 1.0  # era × precision × GPU-memory factor on η∞ (StackFactors)
    # Where the steady rate comes from (DESIGN §12; perf/measured_training.py): the model, a
    # measured run of this case, or the model scaled by a measured run nearby
    basis: Basis = Basis.PREDICTED
    profile_source: str = ""  # the measured run's file and row ("" when predicted)
    predicted_tokens_per_s: float | None = None  # the model's own rate, when a measured one won

    @property
    def setup(self) -> TrainingSetup:
        """The training setup of the chosen layout."""
        return self.step.setup


def target_batch_seqs(base: TrainingSetup, fixed: LayoutConstraints,
                      batches: GlobalBatchDefaults, *, gpus: int) -> int | None:
    """The global batch the search must keep, in sequences: the one asked for, else the
    task's default for ``gpus`` GPUs (:func:`costsim.perf.batch.default_global_batch`, the
    same for every layout); None when a fixed grad_accum decides the batch instead."""
    if fixed.global_batch_seqs:
        return fixed.global_batch_seqs
    if fixed.grad_accum:
        return None
    return default_global_batch(base, batches, gpus=gpus).seqs


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / BYTES_PER_GIB:.1f} GiB"


def overflow_message(arch: Architecture, gpu: GpuSpec, setup: TrainingSetup,
                     policy: HeadroomPolicy = DEFAULT_POLICY) -> str:
    """Say which memory component overflows ``gpu`` under ``setup``."""
    est = estimate_training(arch, gpu, setup, policy)
    parts = sorted(((v, k) for k, v in est.components().items() if k != "total"), reverse=True)
    top = ", ".join(f"{name} {_gib(value)}" for value, name in parts[:3] if value > 0)
    lay = setup.layout
    return (f"tp={lay.tp} pp={lay.pp} dp={lay.dp} zero={lay.zero} micro_batch="
            f"{setup.micro_batch} recompute={setup.recompute.value} does not fit {gpu.name}: "
            f"{_gib(est.total_bytes)} per GPU > {_gib(est.usable_bytes)} usable; largest "
            f"component {parts[0][1]} ({top})")


def choose_layout(arch: Architecture, gpu: GpuSpec, gpus: int, base: TrainingSetup,
                  fixed: LayoutConstraints, *, network: Interconnect, defaults: PerfDefaults,
                  policy: HeadroomPolicy = DEFAULT_POLICY) -> LayoutChoice:
    """The fastest layout of ``gpus`` GPUs that the memory engine says fits.

    Raises:
        InputError: an invalid fixed degree (tp not dividing the heads, dp·tp·pp ≠ gpus, ...).
        InfeasibleError: no layout fits; the message names the overflowing component.
    """
    if gpus < 1:
        raise InputError("", "--gpus", f"must be >= 1 (got {gpus})")
    if fixed.tp and fixed.pp and fixed.dp and fixed.tp * fixed.pp * fixed.dp != gpus:
        raise InputError("", "--gpus", f"must equal dp·tp·pp = {fixed.dp}·{fixed.tp}·"
                                       f"{fixed.pp} = {fixed.dp * fixed.tp * fixed.pp} "
                                       f"(got {gpus})")
    if fixed.tp or fixed.pp or fixed.virtual_stages:
        tp, pp = fixed.tp or 1, fixed.pp or 1
        if fixed.virtual_stages and fixed.virtual_stages > 1 and pp == 1:
            raise InputError("", "--virtual-stages", f"needs --pp > 1: the virtual stages split "
                                                     f"each pipeline stage (got --pp {pp})")
        check_layout(arch, ParallelLayout(tp=tp, pp=pp,
                                          virtual_stages=fixed.virtual_stages or 1))
        if gpus % (tp * pp):
            raise InputError("", "--gpus", f"must be a multiple of tp·pp = {tp * pp} "
                                           f"(got {gpus})")
        if (fixed.virtual_stages or 1) > 1 and fixed.grad_accum and fixed.grad_accum < pp:
            raise InputError("", "--grad-accum", f"the interleaved schedule (--virtual-stages "
                                                 f"{fixed.virtual_stages}) needs at least pp = "
                                                 f"{pp} micro-batches per step (got "
                                                 f"{fixed.grad_accum})")
    target = target_batch_seqs(base, fixed, defaults.batch, gpus=gpus)
    table = _shared_candidate_table(arch, gpus, fixed, target, network.gpus_per_node)
    if not len(table):
        if target is not None and len(candidate_table(arch, gpus, fixed, None,
                                                      network.gpus_per_node)):
            raise InfeasibleError(unusable_gpus_message(arch, gpus, fixed, target,
                                                        base.seq_len, network.gpus_per_node))
        raise InfeasibleError(f"no parallel layout of {gpus} GPUs runs {arch.name} with the "
                              "given degrees")
    memory = training_components_of_layouts(arch, gpu, base, table.columns, policy)
    fit_index = np.nonzero(memory.verdict_code == 0)[0]
    if fit_index.size == 0:
        best = int(np.argmin(memory.total - memory.usable))
        closest = overflow_message(arch, gpu, table.setup(base, best), policy)
        if len(table) == 1:
            raise InfeasibleError(closest)
        raise InfeasibleError(f"no layout of {gpus} x {gpu.name} fits {arch.name}; the "
                              f"closest: {closest}")
    fitting = table.take(fit_index)
    shape = shape_of(arch)
    hw = hardware_terms(gpu, base.precision, network, defaults.training,
                        base.framework, base.framework_year)
    arrays = training_step_arrays(shape, hw, fitting.step_layouts(base, arch), defaults.training)
    pick = _simplest_of_the_fastest(fitting, np.asarray(arrays.tokens_per_s),
                                    memory.total[fit_index], target)
    step = step_from_arrays(arrays, pick, fitting.setup(base, pick), float(hw.peak_flops))
    i = int(fit_index[pick])
    return LayoutChoice(step=step, memory_total_bytes=int(memory.total[i]),
                        memory_usable_bytes=int(memory.usable[i]), candidates=len(table),
                        fitting=len(fitting))


# Distinct candidate tables kept: a training front asks for one per (GPU count, node size,
# batch), the same for every GPU type and framework at that count; the largest (16,384 GPUs of
# a 126-layer model) is a few MB.
_TABLES_KEPT = 256


@functools.lru_cache(maxsize=_TABLES_KEPT)
def _shared_candidate_table(arch: Architecture, gpus: int, fixed: LayoutConstraints,
                            target: int | None, gpus_per_node: int) -> CandidateTable:
    """:func:`candidate_table`, memoized by value (a pure function of frozen arguments): the
    layout search of every GPU type and framework at one count enumerates the same layouts.
    The shared columns are read-only, so no caller can change what a later one gets."""
    table = candidate_table(arch, gpus, fixed, target, gpus_per_node)
    for values in table.columns.values():
        values.setflags(write=False)
    return table


# Layouts within this share of the fastest count as equally fast: the model's own error is far
# larger (±20 % on the validation runs), so a 1 % edge must not buy extra sharding.
SPEED_TIE_SHARE = 0.01


def _simplest_of_the_fastest(table: CandidateTable, tokens_per_s: np.ndarray,
                             memory_bytes: np.ndarray, target: int | None) -> int:
    """Index of the layout to run: among those within SPEED_TIE_SHARE of the fastest, the one
    closest to the batch asked for, then with the least sharding (ZeRO stage, then TP·PP), the
    least recomputation, the fewest virtual stages and the largest micro-batch (fewer
    accumulation steps; bigger GEMMs run closer to peak, which the efficiency term g(M) credits
    only in part); then the fastest, then the lowest memory."""
    c = table.columns
    tied = np.nonzero(tokens_per_s >= float(np.max(tokens_per_s)) * (1 - SPEED_TIE_SHARE))[0]
    batch = c["micro_batch"] * c["dp"] * c["grad_accum"]
    off = np.abs(batch - target) if target is not None else np.zeros_like(batch)
    # Recompute codes rank none < selective < full; np.lexsort sorts by its last key first.
    keys = (memory_bytes, -tokens_per_s, -c["micro_batch"], c["vpp"], c["recompute"],
            c["tp"] * c["pp"], c["zero"], off)
    order = np.lexsort(tuple(np.asarray(k)[tied] for k in keys))
    return int(tied[order[0]])


def replica_memory_use(arch: Architecture, gpu: GpuSpec, base: TrainingSetup,
                       policy: HeadroomPolicy = DEFAULT_POLICY) -> float:
    """Share of ``gpu``'s usable memory that one whole, unsharded replica needs (ZeRO 0, no
    TP/PP, micro-batch 1, no recomputation): the yardstick for "a GPU far larger than the
    job" (docs/performance.md, imbalance warnings: < 30 % of an 80 GB card on a small model).

    Memoized by value (a pure function of frozen arguments): it does not depend on the GPU
    count, so a training front asks it once per GPU type and framework, not once per count."""
    replica = replace(base, layout=ParallelLayout(), micro_batch=1, grad_accum=1,
                      recompute=Recompute.NONE)
    return _replica_memory_use(arch, gpu, replica, policy)


# Distinct replicas kept: (model, GPU type, setup) of a training front or a sweep's variants
_REPLICAS_KEPT = 1024


@functools.lru_cache(maxsize=_REPLICAS_KEPT)
def _replica_memory_use(arch: Architecture, gpu: GpuSpec, replica: TrainingSetup,
                        policy: HeadroomPolicy) -> float:
    est = estimate_training(arch, gpu, replica, policy)
    return est.total_bytes / est.usable_bytes if est.usable_bytes else 0.0


def imbalance_warnings(step: TrainingStep, replica_use: float, goodput: Goodput,
                       gpu: GpuSpec) -> list[str]:
    """Flags for a GPU far too big (idle cores, wasted memory) or too small (collapse).

    ``replica_use`` is :func:`replica_memory_use`: how full one unsharded replica fills the GPU.
    """
    warnings: list[str] = []
    if replica_use < LOW_MEMORY_USE:
        warnings.append(f"GPU larger than the job needs: a whole unsharded replica uses "
                        f"{replica_use:.0%} of {gpu.name}'s usable memory; a smaller card may "
                        "cost less")
    if step.mfu < LOW_MFU:
        warnings.append(f"cores mostly idle: MFU {step.mfu:.0%} (layers too narrow or "
                        "communication-bound for this GPU)")
    overhead = (step.communication_exposed_s + step.pipeline_bubble_s) / step.step_time_s
    if overhead > HIGH_OVERHEAD_SHARE:
        warnings.append(f"throughput collapses: exposed communication and pipeline bubble take "
                        f"{overhead:.0%} of each step (GPU memory too small for a compact "
                        "layout, or the network too slow)")
    if goodput.would_not_finish:
        warnings.append("failures outpace progress: the run would not finish (goodput floor)")
    elif goodput.goodput < LOW_GOODPUT:
        warnings.append(f"goodput only {goodput.goodput:.0%}: interruptions every "
                        f"{goodput.mtbf_s / SECONDS_PER_HOUR:.1f} h on this fleet")
    return warnings


def _fastest_with_batch(arch: Architecture, gpu: GpuSpec, gpus: int, base: TrainingSetup,
                        fixed: LayoutConstraints, seqs: int, network: Interconnect,
                        defaults: PerfDefaults, policy: HeadroomPolicy) -> TrainingStep | None:
    """The fastest fitting step with a global batch of ``seqs`` (the other fixed degrees
    kept), or None when no layout of it fits."""
    trial = replace(fixed, global_batch_seqs=seqs, grad_accum=None)
    try:
        return choose_layout(arch, gpu, gpus, base, trial, network=network, defaults=defaults,
                             policy=policy).step
    except InfeasibleError:
        return None


def estimate_training_run(arch: Architecture, gpu: GpuSpec, gpus: int, tokens: float,
                          base: TrainingSetup, fixed: LayoutConstraints, *,
                          defaults: PerfDefaults, price_usd_per_gpu_hour: float,
                          network: Interconnect | None = None,
                          policy: HeadroomPolicy = DEFAULT_POLICY) -> TrainingEstimate:
    """Time, GPU-hours and cost of training ``arch`` on ``tokens`` tokens.

    ``base`` carries task, precision, sequence length and optimizer settings; its layout and
    batch fields are replaced by the search (or by ``fixed``).

    Raises:
        InputError: invalid input (non-positive tokens or price, a bad fixed degree).
        InfeasibleError: no layout fits.
    """
    if tokens <= 0:
        raise InputError("", "--tokens", f"must be > 0 (got {tokens:g})")
    if price_usd_per_gpu_hour < 0:
        raise InputError("", "--price-usd-per-gpu-hour",
                         f"must be >= 0 (got {price_usd_per_gpu_hour:g})")
    net = network or defaults.network_for(gpu.name)
    choice = choose_layout(arch, gpu, gpus, base, fixed, network=net, defaults=defaults,
                           policy=policy)
    step = choice.step
    steady_s = tokens / step.tokens_per_s
    counts = arch.params()
    # A LoRA checkpoint saves the adapters and their optimizer states: the frozen base is not
    # re-saved (PEFT save_pretrained, torchtune save_adapter_weights_only).
    saved = adapter_counts_of(arch, base.lora).total if base.lora else counts.total
    goodput = estimate_goodput(steady_s, gpus, saved, gpus_per_node=net.gpus_per_node,
                               assumptions=defaults.goodput)
    gpu_hours = goodput.wall_time_s * gpus / SECONDS_PER_HOUR
    warnings = imbalance_warnings(step, replica_memory_use(arch, gpu, base, policy), goodput,
                                  gpu)
    starved = starved_batch_warning(
        step, max_seqs=max(1, round(defaults.batch.pretrain_max_tokens / base.seq_len)),
        rate=lambda seqs: _fastest_with_batch(arch, gpu, gpus, base, fixed, seqs, net,
                                              defaults, policy))
    if starved:
        warnings.append(starved)
    target = target_batch_seqs(base, fixed, defaults.batch, gpus=gpus)
    if target is not None and step.setup.global_batch != target:
        setup = step.setup
        which = "asked" if fixed.global_batch_seqs else "default"
        warnings.append(f"global batch is {setup.global_batch} sequences "
                        f"({setup.global_batch * setup.seq_len:,} tokens), not the {target} "
                        f"{which} ({target * setup.seq_len:,} tokens): micro_batch "
                        f"{setup.micro_batch} x dp {setup.layout.dp} x grad_accum "
                        f"{setup.grad_accum} cannot make {target} on {gpus} GPUs; the nearest "
                        f"within ±{BATCH_TOLERANCE:.0%} is used")
    return TrainingEstimate(
        model=arch.name,
        params_total=counts.total,
        tokens=tokens,
        gpu=gpu.name,
        gpus=gpus,
        network=net.name,
        step=step,
        flops_total=step.model_flops_per_token * tokens,
        goodput=goodput,
        gpu_hours=gpu_hours,
        price_usd_per_gpu_hour=price_usd_per_gpu_hour,
        cost_usd=gpu_hours * price_usd_per_gpu_hour,
        memory_total_bytes=choice.memory_total_bytes,
        memory_usable_bytes=choice.memory_usable_bytes,
        candidates=choice.candidates,
        fitting=choice.fitting,
        warnings=tuple(warnings),
        global_batch_basis=("given" if fixed.global_batch_seqs is not None
                            else f"grad-accum {fixed.grad_accum} given" if fixed.grad_accum
                            else default_global_batch(base, defaults.batch, gpus=gpus).basis),
        framework_efficiency=defaults.training.framework_factor(base.framework),
        stack_era=defaults.training.stack.era(gpu.generation, base.precision,
                                              base.framework_year),
        stack_efficiency=defaults.training.stack.factor(
            generation=gpu.generation, precision=base.precision,
            memory_gib=gpu.memory_label_gb, framework_year=base.framework_year),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetOption:
    """One (GPU model, network, layout) option for the optimizer."""

    gpu: GpuSpec
    network: Interconnect
    setup: TrainingSetup


def score_fleet_options(arch: Architecture, options: Sequence[FleetOption], *,
                        defaults: PerfDefaults) -> StepArrays:
    """Step time, tokens/s, MFU, ... of many (GPU, count, layout) options of one model in one
    vectorized call (no memory check: pair it with the memory engine's verdict arrays)."""
    if not options:
        raise InputError("", "options", "need at least one option to score")
    hw = stack_hardware([hardware_terms(o.gpu, o.setup.precision, o.network, defaults.training,
                                        o.setup.framework, o.setup.framework_year)
                         for o in options])
    return training_step_arrays(shape_of(arch), hw,
                                layout_arrays([o.setup for o in options], arch),
                                defaults.training)


def score_options(arch: Architecture, gpu: GpuSpec, setups: Sequence[TrainingSetup], *,
                  network: Interconnect, defaults: PerfDefaults) -> np.ndarray:
    """Tokens per second of many setups of one model on one GPU type, run by one framework
    (the first setup's), in one vectorized call (no memory check): the optimizer's fast path."""
    if not setups:
        raise InputError("", "setups", "need at least one setup to score")
    hw = hardware_terms(gpu, setups[0].precision, network, defaults.training,
                        setups[0].framework, setups[0].framework_year)
    arrays = training_step_arrays(shape_of(arch), hw, layout_arrays(list(setups), arch),
                                  defaults.training)
    return np.asarray(arrays.tokens_per_s)


__all__ = [
    "SPEED_TIE_SHARE", "FleetOption", "LayoutChoice",
    "LayoutConstraints", "TrainingEstimate", "choose_layout", "estimate_training_run",
    "imbalance_warnings", "overflow_message", "replica_memory_use", "score_fleet_options",
    "score_options", "target_batch_seqs",
]
