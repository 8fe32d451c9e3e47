"""``costsim telemetry``: measured GPU memory and utilization from nvidia-smi / dcgmi logs, per
GPU type, against capacity, the memory engine's prediction and the smallest card that holds it
(docs/telemetry.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from costsim.cli.common import EXIT_OK, add_json_flag, examples, print_json
from costsim.cli.flags import (
    add_inference_args,
    add_layout_args,
    add_model_args,
    add_precision_args,
)

if TYPE_CHECKING:
    from costsim.cli.telemetry_report import Predictor
    from costsim.domain.gpu import GpuSpec
    from costsim.domain.telemetry import GpuSample, TelemetryLog
    from costsim.memory.estimate import MemoryEstimate

# Flags that describe the job for the memory engine's prediction: they mean nothing without
# --model/--arch (--task alone chooses the headroom cap: 0.95 training, 0.90 inference).
_CONFIG_DESTS = ("precision", "quant", "bytes_preset", "optimizer", "lora_rank", "lora_targets",
                 "kv_dtype", "zero", "tp", "pp", "dp", "gpus", "micro_batch", "seq_len",
                 "grad_accum", "sp", "recompute", "flash_attention", "batch", "context",
                 "prompt_tokens", "output_tokens")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``costsim telemetry``."""
    parser = commands.add_parser(
        "telemetry", help="measured GPU memory and utilization from nvidia-smi or dcgmi logs, "
                          "with right-sizing advice",
        description="Read GPU monitoring logs — the CSV of nvidia-smi --query-gpu=... "
                    "--format=csv[,noheader][,nounits] -l N (any column order; names as "
                    "nvidia-smi prints them; [N/A] cells are missing values) or the table of "
                    "dcgmi dmon -e 203,252,250 — and report per GPU type: samples, peak and "
                    "P95 memory used against the card's memory, mean utilization, idle share "
                    "(samples at 0 %). Advice: the smallest catalog card whose usable memory "
                    "(capacity × 0.95 for training, 0.90 for inference, less a 5 % margin) "
                    "holds the measured peak, and 'cores mostly idle' under 30 % mean "
                    "utilization. memory.used includes the CUDA context and the allocator's "
                    "cache, so the peak is an upper bound of what the job needs. With --model "
                    "(and the memory command's flags) the memory engine's per-GPU prediction "
                    "stands beside the measured peak, with the gap. Unreadable rows are "
                    "skipped and listed on stderr with their line numbers.",
        epilog=examples(
            "costsim telemetry docs/examples/telemetry/nvidia-smi-a100.csv",
            "costsim telemetry docs/examples/telemetry/nvidia-smi-a100.csv --model llama-2-7b "
            "--task finetune --lora-rank 16 --micro-batch 4 --seq-len 2048",
            "costsim telemetry docs/examples/telemetry/dcgmi-dmon-h100.txt --gpu H100 --json"),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE",
                        help="nvidia-smi CSV or dcgmi dmon logs, told apart by their content "
                             "(required)")
    parser.add_argument("--columns", metavar="FIELDS",
                        help="the --query-gpu list of CSVs written with --format=csv,noheader, "
                             "e.g. index,name,memory.used,memory.total,utilization.gpu "
                             "(default: the file's header; a header-less CSV needs it)")
    parser.add_argument("--gpu", metavar="NAME",
                        help="the GPU of logs without a name column (dcgmi dmon without field "
                             "50, a CSV without name): canonical name, alias or nvidia-smi name "
                             "(default: the log's name column; without one, required)")
    add_model_args(parser, optional_for="prediction beside the measured peak")
    add_precision_args(parser)
    add_layout_args(parser, searched=False)
    add_inference_args(parser)
    add_json_flag(parser)
    parser.set_defaults(handler=_telemetry, telemetry_defaults={
        action.dest: action.default for action in parser._actions
        if action.dest in _CONFIG_DESTS})


def _telemetry(args: argparse.Namespace) -> int:
    from costsim.catalog.telemetry_logs import read_telemetry_log
    from costsim.cli.telemetry_report import GpuGroup, build_payload, print_text
    from costsim.errors import InputError, printable

    _check_model_flags(args)
    columns = None
    if args.columns is not None:
        columns = [name.strip() for name in str(args.columns).split(",") if name.strip()]
        if not columns:
            raise InputError("", "--columns", f"no field names in {args.columns!r}")
    seen: dict[Path, Path] = {}
    for path in args.files:
        key = path.resolve()
        if key in seen:
            # The same samples twice would count twice in every mean and share.
            raise InputError(str(path), "", f"given twice (also as {seen[key]})")
        seen[key] = path
    logs = [read_telemetry_log(path, columns=columns) for path in args.files]
    groups = _group_by_gpu(logs, _flag_gpu(args))
    prediction = _predictor(args)
    payload = build_payload(logs, [GpuGroup(key=key, spec=spec, samples=samples, names=names)
                                   for key, (spec, samples, names) in groups.items()],
                            args, prediction)
    for log in logs:
        for problem in log.problems:
            where = f" line {problem.line}" if problem.line else ""
            sys.stderr.write(printable(f"costsim telemetry: {log.source}{where}: "
                                       f"{problem.message}") + "\n")
    if args.json:
        print_json(payload)
    else:
        print_text(payload)
    return EXIT_OK


def _check_model_flags(args: argparse.Namespace) -> None:
    from costsim.errors import InputError

    if args.model or args.arch:
        return
    for dest, default in args.telemetry_defaults.items():
        value = getattr(args, dest, None)
        if value is not None and value != default:
            flag = "--" + dest.replace("_", "-")
            raise InputError("", flag, "describes the job for the memory engine's prediction: "
                                       f"it needs --model or --arch (got {flag} {value})")


def _flag_gpu(args: argparse.Namespace) -> GpuSpec | None:
    from costsim.catalog.gpus import get_gpu
    from costsim.errors import InputError

    if args.gpu is None:
        return None
    if not str(args.gpu).strip():
        raise InputError("", "--gpu", f"must name a GPU (got {args.gpu!r}; see costsim gpus)")
    return get_gpu(args.gpu)


def _group_by_gpu(logs: list[TelemetryLog], flag_gpu: GpuSpec | None
                  ) -> dict[str, tuple[GpuSpec | None, list[tuple[str, GpuSample]], list[str]]]:
    """Samples by GPU type: the catalog's canonical name, or the name as printed for a card
    the catalog does not model (its figures are still reported, without catalog advice)."""
    from costsim.catalog.gpus import find_gpu
    from costsim.errors import InputError

    groups: dict[str, tuple[GpuSpec | None, list[tuple[str, GpuSample]], list[str]]] = {}
    resolved: dict[str, GpuSpec | None] = {}
    for log in logs:
        for sample in log.samples:
            name = sample.gpu_name
            if name is None:
                if flag_gpu is None:
                    hint = ("add field 50 (DVNAM) to dcgmi dmon -e"
                            if log.format.value == "dcgmi-dmon"
                            else "add name to --query-gpu")
                    raise InputError(log.source, "", f"line {sample.line}: the log names no "
                                                     "GPU; give --gpu NAME (e.g. --gpu H100) "
                                                     f"or {hint}")
                spec: GpuSpec | None = flag_gpu
                label = flag_gpu.name
            else:
                if name not in resolved:
                    resolved[name] = find_gpu(name)
                spec = resolved[name]
                if flag_gpu is not None and spec is not None and spec is not flag_gpu:
                    raise InputError(log.source, "", f"line {sample.line}: the log names "
                                                     f"'{name}' ({spec.name}) but --gpu says "
                                                     f"{flag_gpu.name}")
                label = name
            key = spec.name if spec is not None else label
            entry = groups.setdefault(key, (spec, [], []))
            entry[1].append((log.source, sample))
            if label not in entry[2]:
                entry[2].append(label)
    return groups


def _predictor(args: argparse.Namespace) -> Predictor | None:
    """The memory engine's estimate for the flags, per GPU; None without --model/--arch."""
    if not (args.model or args.arch):
        return None
    from costsim.cli.layout_args import (
        build_inference_setup,
        build_training_setup,
        resolve_architecture,
        resolve_task,
    )
    from costsim.cli.telemetry_report import Predictor
    from costsim.domain.workload import Task
    from costsim.memory.estimate import estimate_inference, estimate_training

    name, arch = resolve_architecture(args)
    task = resolve_task(args)

    def predict(gpu: GpuSpec) -> MemoryEstimate:
        if task is Task.INFER:
            return estimate_inference(arch, gpu, build_inference_setup(args, arch, gpu))
        return estimate_training(arch, gpu, build_training_setup(args, arch, gpu, task))

    return Predictor(model=name, task=task.value, estimate=predict)
