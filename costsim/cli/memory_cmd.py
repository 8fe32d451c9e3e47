"""``costsim memory``: per-GPU memory of one configuration, or of a CSV grid of them."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costsim.cli.common import (
    EXIT_INTERNAL_ERROR,
    EXIT_OK,
    add_json_flag,
    examples,
    format_table,
    print_json,
)
from costsim.cli.flags import add_all_memory_args

if TYPE_CHECKING:
    from costsim.memory.estimate import MemoryEstimate


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``costsim memory``."""
    parser = commands.add_parser(
        "memory", help="per-GPU memory of training, fine-tuning or inference, with a fit verdict",
        description="Per-GPU memory (the most-loaded GPU) of one configuration: weights, "
                    "master weights, gradients, optimizer, activations, KV cache and runtime "
                    "overhead, against the GPU's usable capacity. Or evaluate a CSV grid.",
        epilog=examples(
            "costsim memory --model llama-2-7b --gpu A100 --micro-batch 4",
            "costsim memory --model llama-3-70b --task finetune --lora-rank 16 --quant nf4",
            "costsim memory --model llama-3-8b --task infer --batch 32 --context 8192 --json",
            "costsim memory --grid runs.csv --out results.csv"),
    )
    add_all_memory_args(parser)
    parser.add_argument("--grid", type=Path, metavar="IN.csv",
                        help="evaluate every row of a CSV whose columns are flag names; "
                             "needs --out (default: one configuration from the flags)")
    parser.add_argument("--out", type=Path, metavar="OUT.csv",
                        help="output CSV of --grid (required with --grid)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite an existing --out file (default: refuse)")
    add_json_flag(parser)
    parser.set_defaults(handler=_memory)


# ----------------------------------------------------------------------------- one config


def _memory(args: argparse.Namespace) -> int:
    from costsim.errors import InputError

    if args.grid is not None:
        return _grid(args)
    if args.out is not None:
        raise InputError("", "--out", "only goes with --grid IN.csv")
    payload, estimate = _evaluate(args)
    if args.json:
        print_json(payload)
    else:
        print(_table(payload, estimate))
    return EXIT_OK


def _evaluate(args: argparse.Namespace) -> tuple[dict[str, Any], MemoryEstimate]:
    from costsim.cli.layout_args import (
        build_inference_setup,
        build_training_setup,
        resolve_model_gpu_task,
    )
    from costsim.domain.workload import Task
    from costsim.memory.estimate import estimate_inference, estimate_training, max_kv_tokens
    from costsim.memory.host import checkpoint_weights_bytes, host_ram
    from costsim.memory.search import max_batch, max_micro_batch

    name, arch, gpu, task = resolve_model_gpu_task(args)
    layout: dict[str, Any]
    if task is Task.INFER:
        inf = build_inference_setup(args, arch, gpu)
        estimate = estimate_inference(arch, gpu, inf)
        best = max_batch(arch, gpu, inf)
        lay = inf.layout
        # The training keys are kept (the documented JSON has them): a sequence in flight is a
        # micro-batch row, the context its length.
        layout = {"tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "zero": lay.zero, "sp": lay.sp,
                  "micro_batch": inf.batch, "seq_len": inf.context_tokens, "grad_accum": 1,
                  "recompute": "none", "batch": inf.batch, "context": inf.context_tokens}
        extra: dict[str, Any] = {
            "precision": inf.precision.value, "quant": inf.quant.value,
            "kv_dtype": inf.kv_cache_dtype.value, "flash_attention": inf.flash_attention,
            "max_batch": best, "max_kv_tokens": max_kv_tokens(arch, gpu, inf),
        }
        gpus, tokens = lay.gpus, inf.batch * inf.context_tokens
    else:
        train = build_training_setup(args, arch, gpu, task)
        estimate = estimate_training(arch, gpu, train)
        best = max_micro_batch(arch, gpu, train)
        lay = train.layout
        layout = {"tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "zero": lay.zero, "sp": lay.sp,
                  "micro_batch": train.micro_batch, "seq_len": train.seq_len,
                  "grad_accum": train.grad_accum, "recompute": train.recompute.value}
        extra = {
            "precision": train.precision.value, "bytes_preset": train.bytes_preset.value,
            "optimizer": train.optimizer.value, "quant": train.quant.value,
            "flash_attention": train.flash_attention,
            "lora": None if train.lora is None else {"rank": train.lora.rank,
                                                     "targets": list(train.lora.targets)},
        }
        gpus, tokens = lay.gpus, train.micro_batch * train.seq_len
    host = host_ram(weights_storage_bytes=checkpoint_weights_bytes(estimate.weights_bytes, lay,
                                                                   task), gpus=gpus,
                    capacity_bytes=gpu.capacity_bytes, tokens_per_micro_batch=tokens)
    payload: dict[str, Any] = {
        "model": name, "task": task.value,
        "params_total": estimate.params_total, "params_active": estimate.params_active,
        "params_trainable": estimate.params_trainable, "params_adapter": estimate.params_adapter,
        "layout": layout,
        "per_gpu_bytes": estimate.components(),
        "gpu": {"name": gpu.name, "capacity_bytes": gpu.capacity_bytes,
                "usable_bytes": estimate.usable_bytes},
        "verdict": estimate.verdict.value, "headroom_bytes": estimate.headroom_bytes,
        "max_micro_batch": best,
        "host_ram_bytes": host.total_bytes,
        "host_ram_rule_of_thumb_bytes": list(host.rule_of_thumb_bytes),
        **extra,
        "kv_cache_bytes_per_token": estimate.kv_cache_bytes_per_token,
        "runtime_overhead_bytes": {
            "cuda_context": estimate.cuda_context_bytes,
            "communication": estimate.communication_bytes,
            "zero3_gathered": estimate.zero3_gathered_bytes,
            "fragmentation": estimate.fragmentation_bytes,
        },
        "most_loaded_stage": estimate.most_loaded_stage,
        "gpus_total": gpus,
    }
    return payload, estimate


def _table(payload: Mapping[str, Any], estimate: MemoryEstimate) -> str:
    from costsim.cli.numbers import gb, gib

    def row(label: str, n_bytes: int) -> tuple[str, str, str, str]:
        return (label, f"{n_bytes:,}", gib(n_bytes), gb(n_bytes))

    labels = {"weights": "weights", "master_weights": "master weights (fp32)",
              "gradients": "gradients", "optimizer": "optimizer states",
              "activations": "activations", "kv_cache": "KV cache",
              "runtime_overhead": "runtime overhead", "total": "TOTAL per GPU"}
    rows = [row(labels[key], value) for key, value in estimate.components().items()]
    rows.append(row("usable (capacity × cap)", estimate.usable_bytes))
    rows.append(row("capacity", estimate.capacity_bytes))
    rows.append(row("headroom (usable − total)", estimate.headroom_bytes))
    lay = payload["layout"]
    head = (f"{payload['model']} · {payload['task']} · {payload['gpu']['name']} · "
            f"{payload['precision']} · tp {lay['tp']} pp {lay['pp']} dp {lay['dp']} "
            f"zero {lay['zero']}{' sp' if lay['sp'] else ''}")
    if "batch" not in lay:
        head += (f" · micro-batch {lay['micro_batch']} seq {lay['seq_len']} "
                 f"recompute {lay['recompute']}")
    else:
        head += f" · batch {lay['batch']} context {lay['context']}"
    params = (f"params: total {payload['params_total']:,} · trainable "
              f"{payload['params_trainable']:,} · adapter {payload['params_adapter']:,}")
    table = format_table(rows, ("component (per GPU)", "bytes", "GiB", "GB"),
                         right_align=(1, 2, 3))
    host = payload["host_ram_bytes"]
    low, high = payload["host_ram_rule_of_thumb_bytes"]
    best_key = "max_batch" if "max_batch" in payload else "max_micro_batch"
    lines = [head, params, "", table, "",
             f"verdict: {payload['verdict'].upper()}  (headroom "
             f"{gib(estimate.headroom_bytes)} GiB; tight = within 5 % of usable)",
             f"largest {best_key.replace('max_', '').replace('_', '-')} that fits: "
             f"{payload[best_key]}",
             f"host RAM per node: {gib(host)} GiB (rule of thumb 1.5–2× VRAM: "
             f"{gib(low)}–{gib(high)} GiB)",
             "GiB = 2^30 bytes, GB = 10^9 bytes."]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- grid


def _grid(args: argparse.Namespace) -> int:
    from costsim.cli.memory_grid import run_grid
    from costsim.cli.memory_grid_rows import flag_defaults
    from costsim.errors import InputError

    if args.out is None:
        raise InputError("", "--out", "--grid needs --out OUT.csv")
    if args.json:
        raise InputError("", "--json", "does not go with --grid: the grid's results go to "
                                       f"--out {args.out} (CSV)")
    for dest, default in flag_defaults().items():
        value = getattr(args, dest, default)
        if value != default:
            # Each row carries its own configuration; a flag beside --grid would be ignored.
            flag = "--" + dest.replace("_", "-")
            raise InputError("", flag, f"does not go with --grid: give it as a column of "
                                       f"{args.grid} (got {flag} {value})")
    if _same_file(args.grid, args.out):
        # Never overwrite the user's input, not even with --force.
        raise InputError("", "--out", f"{args.out} is the input grid {args.grid}: choose "
                                      "another output file (--force does not overwrite the "
                                      "input)")
    if args.out.exists() and not args.force:
        raise InputError("", "--out", f"{args.out} exists; add --force to overwrite it")
    counts = run_grid(args.grid, args.out)
    if counts.errors:
        sys.stderr.write(f"costsim memory: {counts.errors} of {counts.rows} grid rows have "
                         f"errors (see the 'error' column of {args.out})\n")
    if counts.internal_errors:
        sys.stderr.write(f"costsim memory: {counts.internal_errors} of those rows hit a costsim "
                         "bug (their error starts with 'internal error'); the other rows are "
                         "complete. Please report it with those rows.\n")
        return EXIT_INTERNAL_ERROR
    return EXIT_OK


def _same_file(grid: Path, out: Path) -> bool:
    """``out`` names the file ``grid`` names (the same path, ./X, a symlink or a hard link)."""
    try:
        return out.exists() and grid.exists() and os.path.samefile(grid, out)
    except OSError:  # pragma: no cover - a path that vanished between the calls
        return out.resolve() == grid.resolve()
