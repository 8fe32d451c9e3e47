"""A measured training rate in place of the model's steady state (DESIGN §12, docs/performance.md
"Measured training runs").

A measured point applies to a run of the same model (architecture), canonical GPU, framework
(empty: Megatron-LM, the default) and precision (empty: the GPU's default), in full training
(a LoRA run computes other FLOPs). Of those:

* a point of the same GPU count, sequence length (or none given) and global batch (within
  5 %, or none given) *is* the run: its rate replaces the model's (``basis: measured``; several
  such points: their median);
* else the nearest point (GPU count first, then sequence length, then batch, on a log scale)
  scales by the model's own ratio: rate = measured × predicted(run) / predicted(point), the
  prediction at the point being the model's fastest fitting layout for that count, sequence
  length and batch (``basis: predicted-adjusted``). A point where no layout fits is passed over.

A point's rate is its ``tokens_per_s`` (whole fleet), else ``global_batch_tokens`` ÷
``step_time_s``, else ``mfu`` × GPUs × dense peak ÷ model FLOPs per token, with the FLOPs of
:mod:`costsim.perf.flops` (6·N + 12·L·h·s). The step's breakdown is the model's, scaled to the
measured step time; goodput (failures, checkpoints) applies on top as for a predicted rate.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import replace

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.measurements import Basis, TrainingPoint
from costsim.domain.performance import Interconnect, PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import TrainingFramework, TrainingSetup
from costsim.errors import CostsimError, InputError
from costsim.memory.estimate import shape_of
from costsim.memory.runtime import DEFAULT_POLICY, HeadroomPolicy
from costsim.perf.flops import model_flops_per_token
from costsim.perf.goodput import estimate_goodput
from costsim.perf.layouts import LayoutConstraints
from costsim.perf.train_estimate import (
    TrainingEstimate,
    choose_layout,
    estimate_training_run,
    imbalance_warnings,
    replica_memory_use,
)
from costsim.perf.training import TrainingStep
from costsim.units import FLOPS_PER_TFLOPS, SECONDS_PER_HOUR

# A measured global batch within this share of the run's is the same batch (the run's batch is
# rounded to whole sequences and to what the layout can make).
BATCH_MATCH_SHARE = 0.05


def point_precision(point: TrainingPoint, gpu: GpuSpec) -> Dtype:
    """The precision a point ran in (empty: the GPU's default, as for ``estimate train``)."""
    return point.precision if point.precision is not None else gpu.default_precision


def point_framework(point: TrainingPoint) -> TrainingFramework:
    """The framework a point ran (empty: Megatron-LM, ``estimate train``'s default)."""
    return point.framework if point.framework is not None else TrainingFramework.MEGATRON_LM


def point_tokens_per_s(point: TrainingPoint, gpu: GpuSpec) -> float:
    """The point's whole-fleet steady rate (module docstring)."""
    if point.tokens_per_s is not None:
        return point.tokens_per_s
    if point.step_time_s is not None and point.global_batch_tokens is not None:
        return point.global_batch_tokens / point.step_time_s
    if point.mfu is not None and point.seq_len is not None:
        peak = (gpu.dense_tflops(point_precision(point, gpu)) or 0.0) * FLOPS_PER_TFLOPS
        flops = float(model_flops_per_token(shape_of(point.architecture), point.seq_len))
        return point.mfu * point.gpus * peak / flops
    raise InputError(point.source, "", "needs tokens_per_s, step_time_s with "
                                       "global_batch_tokens, or mfu with seq_len")


def point_mfu(point: TrainingPoint, gpu: GpuSpec, seq_len: int) -> float:
    """The point's MFU by costsim's FLOP definition (PaLM's: 6·N + 12·L·h·s per token)."""
    if point.mfu is not None and point.tokens_per_s is None and point.step_time_s is None:
        return point.mfu
    peak = (gpu.dense_tflops(point_precision(point, gpu)) or 0.0) * FLOPS_PER_TFLOPS
    flops = float(model_flops_per_token(shape_of(point.architecture), seq_len))
    return point_tokens_per_s(point, gpu) * flops / (point.gpus * peak) if peak else math.nan


def same_case(point: TrainingPoint, arch: Architecture, gpu: GpuSpec,
              base: TrainingSetup) -> bool:
    """True when ``point`` measured this model, GPU, framework and precision."""
    return (point.architecture == arch and point.gpu == gpu.name
            and point_framework(point) is base.framework
            and point_precision(point, gpu) is base.precision)


def _log_gap(a: float, b: float) -> float:
    return abs(math.log(a / b))


def predicted_at_point(point: TrainingPoint, arch: Architecture, gpu: GpuSpec,
                       base: TrainingSetup, batch_tokens: float, *, network: Interconnect,
                       defaults: PerfDefaults,
                       policy: HeadroomPolicy = DEFAULT_POLICY) -> float | None:
    """The model's tokens/s for the point's count, sequence length and batch (``batch_tokens``
    when the point gives none): its fastest fitting layout; None when none fits."""
    seq_len = point.seq_len or base.seq_len
    batch = point.global_batch_tokens or batch_tokens
    fixed = LayoutConstraints(global_batch_seqs=max(1, round(batch / seq_len)))
    try:
        choice = choose_layout(arch, gpu, point.gpus, replace(base, seq_len=seq_len), fixed,
                               network=network, defaults=defaults, policy=policy)
    except CostsimError:
        return None
    return choice.step.tokens_per_s


def apply_measurements(est: TrainingEstimate, points: Sequence[TrainingPoint], *,
                       arch: Architecture, gpu: GpuSpec, base: TrainingSetup,
                       defaults: PerfDefaults, network: Interconnect | None = None,
                       policy: HeadroomPolicy = DEFAULT_POLICY) -> TrainingEstimate:
    """``est`` with the measured rate that covers it (module docstring), or ``est`` itself
    when no point does.

    Raises:
        InputError: the measured rate implies an MFU above 100 % (a slip in the file).
    """
    if base.lora is not None:
        return est
    cases = [p for p in points if same_case(p, arch, gpu, base)]
    if not cases:
        return est
    net = network or defaults.network_for(gpu.name)
    setup = est.step.setup
    batch_tokens = float(setup.global_batch * setup.seq_len)
    exact = [p for p in cases if p.gpus == est.gpus
             and (p.seq_len is None or p.seq_len == setup.seq_len)
             and (p.global_batch_tokens is None
                  or abs(p.global_batch_tokens / batch_tokens - 1) <= BATCH_MATCH_SHARE)]
    if exact:
        for p in exact:
            _check_mfu(p, gpu, p.seq_len or setup.seq_len)
        rate = statistics.median(point_tokens_per_s(p, gpu) for p in exact)
        return with_measured_rate(est, rate, Basis.MEASURED, "; ".join(p.source for p in exact),
                                  arch=arch, gpu=gpu, base=base, defaults=defaults, network=net,
                                  policy=policy)

    def distance(p: TrainingPoint) -> tuple[float, float, float]:
        return (_log_gap(p.gpus, est.gpus), _log_gap(p.seq_len or setup.seq_len, setup.seq_len),
                _log_gap(p.global_batch_tokens or batch_tokens, batch_tokens))

    for p in sorted(cases, key=distance):
        predicted = predicted_at_point(p, arch, gpu, base, batch_tokens, network=net,
                                       defaults=defaults, policy=policy)
        if predicted is None:
            continue
        _check_mfu(p, gpu, p.seq_len or setup.seq_len)
        rate = point_tokens_per_s(p, gpu) * est.step.tokens_per_s / predicted
        return with_measured_rate(est, rate, Basis.PREDICTED_ADJUSTED, p.source, arch=arch,
                                  gpu=gpu, base=base, defaults=defaults, network=net,
                                  policy=policy)
    return est


def _check_mfu(point: TrainingPoint, gpu: GpuSpec, seq_len: int) -> None:
    mfu = point_mfu(point, gpu, seq_len)
    if mfu > 1:
        raise InputError(point.source, "", f"{point_tokens_per_s(point, gpu):,.0f} tokens/s on "
                         f"{point.gpus} x {gpu.name} is an MFU of {mfu:.0%}, above the GPU's "
                         "peak: check gpus (the whole run's), seq_len and the rate (whole "
                         "fleet, not per GPU)")


def _scaled_step(step: TrainingStep, factor: float) -> TrainingStep:
    """``step`` running ``factor`` times as fast: the model's breakdown, scaled."""
    return replace(
        step, step_time_s=step.step_time_s / factor, tokens_per_s=step.tokens_per_s * factor,
        model_tflops_per_gpu=step.model_tflops_per_gpu * factor,
        hardware_tflops_per_gpu=step.hardware_tflops_per_gpu * factor,
        mfu=step.mfu * factor, hfu=step.hfu * factor, compute_s=step.compute_s / factor,
        communication_exposed_s=step.communication_exposed_s / factor,
        tensor_parallel_s=step.tensor_parallel_s / factor,
        data_parallel_exposed_s=step.data_parallel_exposed_s / factor,
        pipeline_p2p_s=step.pipeline_p2p_s / factor,
        pipeline_bubble_s=step.pipeline_bubble_s / factor, sync_s=step.sync_s / factor)


def with_measured_rate(est: TrainingEstimate, tokens_per_s: float, basis: Basis, source: str,
                       *, arch: Architecture, gpu: GpuSpec, base: TrainingSetup,
                       defaults: PerfDefaults, network: Interconnect,
                       policy: HeadroomPolicy = DEFAULT_POLICY) -> TrainingEstimate:
    """``est`` at a steady rate of ``tokens_per_s``: steady time, goodput, GPU-hours, cost and
    the imbalance warnings follow from it."""
    step = _scaled_step(est.step, tokens_per_s / est.step.tokens_per_s)
    goodput = estimate_goodput(est.tokens / tokens_per_s, est.gpus, est.params_total,
                               gpus_per_node=network.gpus_per_node,
                               assumptions=defaults.goodput)
    replica = replica_memory_use(arch, gpu, base, policy)
    old = set(imbalance_warnings(est.step, replica, est.goodput, gpu))
    warnings = [w for w in est.warnings if w not in old]
    warnings[:0] = imbalance_warnings(step, replica, goodput, gpu)
    gpu_hours = goodput.wall_time_s * est.gpus / SECONDS_PER_HOUR
    return replace(est, step=step, goodput=goodput, gpu_hours=gpu_hours,
                   cost_usd=gpu_hours * est.price_usd_per_gpu_hour, warnings=tuple(warnings),
                   basis=basis, profile_source=source,
                   predicted_tokens_per_s=est.step.tokens_per_s)


def estimate_measured_training_run(arch: Architecture, gpu: GpuSpec, gpus: int, tokens: float,
                                   base: TrainingSetup, fixed: LayoutConstraints, *,
                                   measured: Sequence[TrainingPoint], defaults: PerfDefaults,
                                   price_usd_per_gpu_hour: float,
                                   network: Interconnect | None = None,
                                   policy: HeadroomPolicy = DEFAULT_POLICY) -> TrainingEstimate:
    """:func:`costsim.perf.train_estimate.estimate_training_run`, then the measured rate that
    covers the run, if any (:func:`apply_measurements`)."""
    est = estimate_training_run(arch, gpu, gpus, tokens, base, fixed, defaults=defaults,
                                price_usd_per_gpu_hour=price_usd_per_gpu_hour, network=network,
                                policy=policy)
    if not measured:
        return est
    return apply_measurements(est, measured, arch=arch, gpu=gpu, base=base, defaults=defaults,
                              network=network, policy=policy)


__all__ = ["BATCH_MATCH_SHARE", "apply_measurements", "estimate_measured_training_run",
           "point_mfu", "point_tokens_per_s", "predicted_at_point", "same_case",
           "with_measured_rate"]
