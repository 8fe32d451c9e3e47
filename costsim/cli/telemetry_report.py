"""``costsim telemetry``'s figures, advice and output: per GPU type, the measured peak against the
card, the memory engine's prediction and the smallest catalog card that holds the peak
(docs/telemetry.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from costsim.catalog.gpus import gpu_catalog
from costsim.cli.common import format_table
from costsim.cli.layout_args import resolve_task
from costsim.cli.numbers import gib, percent
from costsim.domain.gpu import GpuSpec
from costsim.domain.telemetry import GpuSample, TelemetryLog
from costsim.domain.workload import Task
from costsim.memory.estimate import MemoryEstimate
from costsim.memory.measured import (
    LOW_UTILIZATION_PCT,
    UsageSummary,
    smallest_fitting,
    summarize_usage,
    usable_bytes,
    verdict_on,
)
from costsim.memory.runtime import DEFAULT_POLICY, LOW_MEMORY_USE, Verdict

# A prediction within this share of the measured peak "agrees": the engine's allocator
# fragmentation reserve is 10 % of the allocated bytes (costsim.memory.runtime), so a gap of that
# order is the cache the measurement holds and the engine only bounds.
AGREEMENT_SHARE = 0.10
# More than half the samples at 0 %: the log is mostly time without GPU work.
MOSTLY_IDLE_SHARE = 0.5
UPPER_BOUND_NOTE = ("memory used as nvidia-smi/DCGM report it includes the CUDA context and the "
                    "framework allocator's cache (PyTorch reserves more than it allocates), so "
                    "the measured peak is an upper bound of what the job needs")


@dataclass(frozen=True, slots=True, kw_only=True)
class Predictor:
    """The memory engine's per-GPU estimate of the job the flags describe, on a given GPU."""

    model: str
    task: str
    estimate: Callable[[GpuSpec], MemoryEstimate]


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuGroup:
    """The samples of one GPU type (``spec`` None: a card the catalog does not model), each
    with the file it came from, and the names the logs print for it."""

    key: str
    spec: GpuSpec | None
    samples: list[tuple[str, GpuSample]]
    names: list[str]


def build_payload(logs: Sequence[TelemetryLog], groups: Sequence[GpuGroup],
                  args: argparse.Namespace, predictor: Predictor | None) -> dict[str, Any]:
    """The ``--json`` document (the text output prints from it)."""
    inference = resolve_task(args) is Task.INFER
    cap = DEFAULT_POLICY.infer_utilization if inference else DEFAULT_POLICY.train_utilization
    payload: dict[str, Any] = {
        "gpus": [_gpu_entry(group, inference, predictor) for group in groups],
        "files": [{"path": log.source, "format": log.format.value, "samples": len(log.samples),
                   "missing_cells": log.missing_cells, "columns": list(log.columns),
                   "problems": [{"line": p.line, "message": p.message} for p in log.problems]}
                  for log in logs],
        "headroom_policy": {"task": "infer" if inference else "train",
                            "utilization_cap": cap,
                            "tight_margin": DEFAULT_POLICY.tight_margin},
        "notes": [UPPER_BOUND_NOTE],
    }
    if predictor is not None:
        payload["model"] = predictor.model
        payload["task"] = predictor.task
    return payload


def _device_entries(group: GpuGroup) -> list[dict[str, Any]]:
    by_device: dict[str, tuple[list[str], list[GpuSample]]] = {}
    for source, sample in group.samples:
        # A UUID names one GPU in every file; an index or bus id only within its file.
        key = sample.device if sample.device.startswith("GPU-") else f"{source}:{sample.device}"
        files, samples = by_device.setdefault(key, ([], []))
        if source not in files:
            files.append(source)
        samples.append(sample)
    entries = []
    for key, (files, samples) in by_device.items():
        summary = summarize_usage(samples)
        entries.append({"device": key if key.startswith("GPU-") else key.rsplit(":", 1)[1],
                        "files": files, **_figures(summary)})
    return entries


def _figures(summary: UsageSummary) -> dict[str, Any]:
    return {"samples": summary.samples, "memory_samples": summary.memory_samples,
            "utilization_samples": summary.utilization_samples,
            "peak_memory_used_bytes": summary.peak_memory_used_bytes,
            "p95_memory_used_bytes": summary.p95_memory_used_bytes,
            "memory_total_bytes": summary.memory_total_bytes,
            "mean_utilization_pct": summary.mean_utilization_pct,
            "idle_share": summary.idle_share}


def _gpu_entry(group: GpuGroup, inference: bool, predictor: Predictor | None
               ) -> dict[str, Any]:
    summary = summarize_usage([sample for _, sample in group.samples])
    spec = group.spec
    peak = summary.peak_memory_used_bytes
    entry: dict[str, Any] = {"gpu": group.key, "gpu_names": group.names,
                             "in_catalog": spec is not None, **_figures(summary)}
    if entry["memory_total_bytes"] is None and spec is not None:
        entry["memory_total_bytes"] = spec.capacity_bytes  # the log has no total: the catalog's
    entry["capacity_bytes"] = None if spec is None else spec.capacity_bytes
    entry["usable_bytes"] = None if spec is None else usable_bytes(spec, inference=inference)
    entry["verdict"] = (None if spec is None or peak is None
                        else verdict_on(spec, peak, inference=inference).value)
    fitting = () if peak is None else smallest_fitting(peak, gpu_catalog(), inference=inference)
    entry["smallest_fitting_gpus"] = [gpu.name for gpu in fitting]
    entry["per_gpu"] = _device_entries(group)
    estimate = None
    if predictor is not None and spec is not None:
        estimate = predictor.estimate(spec)
        entry["predicted_memory_bytes"] = estimate.total_bytes
        entry["prediction_verdict"] = estimate.verdict.value
        entry["predicted_per_gpu_bytes"] = estimate.components()
        gap = None if peak is None else peak - estimate.total_bytes
        entry["prediction_gap_bytes"] = gap
        entry["prediction_gap_pct"] = (None if gap is None or estimate.total_bytes == 0
                                       else 100.0 * gap / estimate.total_bytes)
    elif predictor is not None:
        entry["predicted_memory_bytes"] = None
    entry["advice"] = _advice(entry, spec, fitting, inference, predictor, estimate)
    return entry


# ----------------------------------------------------------------------------- advice


def _names(gpus: Sequence[GpuSpec]) -> str:
    return " or ".join(gpu.name for gpu in gpus)


def _memory_advice(entry: dict[str, Any], spec: GpuSpec | None, fitting: Sequence[GpuSpec],
                   inference: bool) -> list[str]:
    peak = entry["peak_memory_used_bytes"]
    if peak is None:
        return ["no memory samples: add memory.used to --query-gpu (dcgmi dmon: field 252, "
                "FBUSD) to size the card"]
    cap = DEFAULT_POLICY.infer_utilization if inference else DEFAULT_POLICY.train_utilization
    margin = DEFAULT_POLICY.tight_margin
    rule = f"capacity × {cap:.2f}, less the {margin:.0%} margin"
    if not fitting:
        return [f"the measured peak of {gib(peak)} GiB fits no catalog card ({rule}): shard the "
                "job over more GPUs (ZeRO-3/FSDP, tensor or pipeline parallelism)"]
    smallest = fitting[0]
    where = (f"{_names(fitting)} ({gib(smallest.capacity_bytes)} GiB, usable "
             f"{gib(usable_bytes(smallest, inference=inference))} GiB)")
    if spec is None:
        return [f"smallest catalog card that holds the measured peak of {gib(peak)} GiB ({rule}):"
                f" {where}; '{entry['gpu']}' is not in the catalog, so it is not compared"]
    verdict = Verdict(entry["verdict"])
    usable = gib(entry["usable_bytes"])
    share = peak / spec.capacity_bytes
    if verdict is not Verdict.FITS:
        return [f"the measured peak of {gib(peak)} GiB leaves less than the {margin:.0%} margin of"
                f" this card's usable {usable} GiB (capacity × {cap:.2f}): a slightly larger batch "
                f"or sequence runs out of memory; the smallest card with room is {where}"]
    if (smallest.capacity_bytes >= spec.capacity_bytes
            or smallest.memory_label_gb >= spec.memory_label_gb):
        # Same size class (an H100's 79.65 GiB against an A100's 80): no smaller card to buy.
        return [f"right-sized for memory: the measured peak of {gib(peak)} GiB fits this card's "
                f"usable {usable} GiB ({rule}) and no catalog card of a smaller memory class "
                f"holds it; smallest that does: {where}"]
    low = (f"; memory mostly unused: the peak is {percent(share)} of the card (under "
           f"{LOW_MEMORY_USE:.0%})" if share < LOW_MEMORY_USE else "")
    return [f"smallest catalog card that holds the measured peak of {gib(peak)} GiB ({rule}): "
            f"{where}, against this card's {gib(spec.capacity_bytes)} GiB{low}; the peak includes"
            " the CUDA context and the allocator's cache, so the job needs at most this"]


def _utilization_advice(entry: dict[str, Any]) -> list[str]:
    mean = entry["mean_utilization_pct"]
    if mean is None:
        return ["no utilization samples: add utilization.gpu to --query-gpu (dcgmi dmon: field "
                "203, GPUTL) to see whether the cores are busy"]
    advice = []
    if mean < LOW_UTILIZATION_PCT:
        advice.append(f"cores mostly idle: mean utilization {percent(mean / 100)} is under "
                      f"{LOW_UTILIZATION_PCT / 100:.0%} — the sign of a card too big for the job: "
                      "a smaller or cheaper card, fewer GPUs, a larger batch or faster data "
                      "loading would use it better")
    idle = entry["idle_share"]
    if idle is not None and idle > MOSTLY_IDLE_SHARE:
        advice.append(f"idle (0%) in {percent(idle)} of the samples: the log is mostly time "
                      "without GPU work (start-up, data loading, evaluation, waiting); cut it to "
                      "the job's busy window for steady-state figures")
    return advice


def _prediction_advice(entry: dict[str, Any], predictor: Predictor,
                       estimate: MemoryEstimate | None) -> list[str]:
    if estimate is None:
        return [f"no prediction: '{entry['gpu']}' is not in the catalog"]
    head = (f"memory engine: {predictor.model} {predictor.task} needs "
            f"{gib(estimate.total_bytes)} GiB per GPU ({estimate.verdict.value} on this card)")
    gap = entry.get("prediction_gap_bytes")
    if gap is None:
        return [head]
    sign = "+" if gap >= 0 else "−"
    head += (f"; measured peak {gib(entry['peak_memory_used_bytes'])} GiB, "
             f"{sign}{gib(abs(gap))} GiB ({sign}{percent(abs(entry['prediction_gap_pct']) / 100)})")
    share = gap / estimate.total_bytes if estimate.total_bytes else 0.0
    if share > AGREEMENT_SHARE:
        return [head + ": above the prediction — the allocator's cache beyond the modelled 10 %, "
                       "or a run larger than the flags say (batch, sequence length, no "
                       "recomputation); check the flags match the run"]
    if share < -AGREEMENT_SHARE:
        return [head + ": below the prediction — the run holds less than the flags say (smaller "
                       "batch or sequence, recomputation, sharding), or the polls missed the "
                       "peak (poll more often)"]
    return [head + f": they agree within {AGREEMENT_SHARE:.0%}"]


def _advice(entry: dict[str, Any], spec: GpuSpec | None, fitting: Sequence[GpuSpec],
            inference: bool, predictor: Predictor | None,
            estimate: MemoryEstimate | None) -> list[str]:
    advice = [*_memory_advice(entry, spec, fitting, inference), *_utilization_advice(entry)]
    if predictor is not None:
        advice += _prediction_advice(entry, predictor, estimate)
    return advice


# ----------------------------------------------------------------------------- text


def _opt(value: float | None, fmt: Callable[[float], str]) -> str:
    return "—" if value is None else fmt(value)


def print_text(payload: dict[str, Any]) -> None:
    """The table, the advice per GPU type, and the files' notes."""
    predicted = "model" in payload
    header = ["GPU", "GPUs", "samples", "peak GiB", "P95 GiB", "total GiB", "mean util", "idle"]
    if predicted:
        header += ["predicted GiB", "gap"]
    rows = []
    for entry in payload["gpus"]:
        row = [entry["gpu"], str(len(entry["per_gpu"])), f"{entry['samples']:,}",
               _opt(entry["peak_memory_used_bytes"], gib),
               _opt(entry["p95_memory_used_bytes"], gib),
               _opt(entry["memory_total_bytes"], gib),
               _opt(entry["mean_utilization_pct"], lambda v: percent(v / 100)),
               _opt(entry["idle_share"], percent)]
        if predicted:
            gap = entry.get("prediction_gap_pct")
            row += [_opt(entry.get("predicted_memory_bytes"), gib),
                    "—" if gap is None else f"{gap / 100:+.1%}"]
        rows.append(row)
    lines = []
    if predicted:
        lines.append(f"prediction: {payload['model']} · {payload['task']}")
    lines.append(format_table(rows, header, right_align=range(1, len(header))))
    for entry in payload["gpus"]:
        lines.append("")
        lines.append(f"{entry['gpu']}:")
        lines += [f"  - {line}" for line in entry["advice"]]
    lines.append("")
    for log in payload["files"]:
        skipped = len(log["problems"])
        note = f"; {skipped} problem line(s) on stderr" if skipped else ""
        lines.append(f"{log['path']}: {log['format']}, {log['samples']:,} samples, "
                     f"{log['missing_cells']:,} missing cells{note}")
    lines.append(f"Note: {UPPER_BOUND_NOTE}. GiB = 2^30 bytes.")
    print("\n".join(lines))
