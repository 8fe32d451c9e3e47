"""``costsim calibrate train FILE...``: each measured training run beside the model's prediction
for the same model, GPU, count, sequence length, batch, framework and precision, with
``ratio`` = measured / predicted and a one-line verdict (DESIGN §12, docs/performance.md)."""

from __future__ import annotations

import argparse
from typing import Any

from costsim.cli.common import EXIT_OK, OneLineParser, add_json_flag, examples, print_json
from costsim.cli.estimate_cmd import _framework
from costsim.cli.flags import gpu_argtype, range_argtype, value_argtype
from costsim.cli.ranges import describe


def register(subs: argparse._SubParsersAction[OneLineParser]) -> None:
    """Add ``calibrate train``."""
    parser = subs.add_parser(
        "train", help="measured training runs beside the model's prediction",
        description="Read training runs (the training run CSV, Megatron-LM/NeMo or torchtitan "
                    "logs, HF trainer_state.json) and show each steady rate beside the "
                    "performance model's for the same model, GPU count, sequence length, "
                    "batch, framework and precision: tokens/s and MFU, measured, predicted "
                    "and their ratio, then the median ratio and its range. A log's steady "
                    "state drops the first 10 %% of its steps (warm-up) and takes the median "
                    "of the rest (docs/performance.md, \"Measured training runs\").",
        epilog=examples(
            "costsim calibrate train docs/examples/training/runs.csv",
            "costsim calibrate train docs/examples/training/megatron-llama3-8b-64xh100.log "
            "--model llama-3-8b --gpu H100 --gpus 64 --seq-len 8192",
            "costsim calibrate train docs/examples/training/torchtitan-llama3-8b-8xh100.log "
            "--model llama-3-8b --gpu H100 --gpus 8 --seq-len 8192 --json"))
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="training run CSV, Megatron-LM/NeMo or torchtitan log, or "
                             "trainer_state.json (format told by the content)")
    parser.add_argument("--model", default=None, metavar="PRESET|CONFIG.json",
                        help="the model of the logs (default: none; a log needs it, a CSV "
                             "names its own)")
    parser.add_argument("--gpu", type=gpu_argtype(), default=None, metavar="NAME",
                        help="the GPU of the logs, any accepted name incl. nvidia-smi's "
                             "(default: none; a log needs it)")
    parser.add_argument("--gpus", type=range_argtype("--gpus"), default=None, metavar="N",
                        help=f"the logs' whole-run GPU count, {describe('--gpus')} (default: "
                             "none; a log needs it)")
    parser.add_argument("--seq-len", type=range_argtype("--seq-len"), default=None,
                        metavar="TOKENS",
                        help=f"tokens per sequence, {describe('--seq-len')} (default: none; a "
                             "Megatron/NeMo log needs "
                             "it to turn sequences per step into tokens; else the model's "
                             "maximum, capped at 4096, for the prediction)")
    parser.add_argument("--precision", type=value_argtype("precision"), default=None,
                        metavar="DTYPE",
                        help="compute precision: fp32 | tf32 | bf16 | fp16 | fp8 (default: "
                             "the GPU's, bf16 where it has it)")
    parser.add_argument("--framework", type=_framework, default=None, metavar="NAME",
                        help="megatron-lm | pytorch-fsdp | deepspeed | hf-trainer | torch-compile "
                             "(default: "
                             "the log format's: Megatron/NeMo megatron-lm, torchtitan "
                             "pytorch-fsdp, trainer_state.json hf-trainer; a CSV row's own, "
                             "else megatron-lm)")
    add_json_flag(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from costsim.catalog.gpus import get_gpu
    from costsim.catalog.perf_defaults import perf_defaults
    from costsim.catalog.training_profiles import read_training_profile
    from costsim.domain.measurements import RunDetails
    from costsim.perf.training_calibration import calibrate_point, summarize

    details = RunDetails(model=args.model, gpu=args.gpu, gpus=args.gpus, seq_len=args.seq_len,
                         precision=args.precision, framework=args.framework)
    points = [p for file in args.files for p in read_training_profile(Path(file), details)]
    defaults = perf_defaults()
    rows = [calibrate_point(p, get_gpu(p.gpu), defaults) for p in points]
    summary = summarize(rows)
    payload = {"points": [_row_json(r) for r in rows],
               "summary": {"points": summary.points, "compared": summary.compared,
                           "median_ratio": summary.median_ratio,
                           "min_ratio": summary.min_ratio, "max_ratio": summary.max_ratio,
                           "verdict": summary.verdict}}
    if args.json:
        print_json(payload)
    else:
        _print(payload)
    return EXIT_OK


def _row_json(row: Any) -> dict[str, Any]:
    p = row.point
    ratio = row.ratio
    mfu_ratio = (None if row.predicted_mfu is None or not row.predicted_mfu
                 else row.measured_mfu / row.predicted_mfu)
    return {
        "model": p.model, "gpu": p.gpu, "gpus": p.gpus,
        "framework": p.framework.value if p.framework else "megatron-lm",
        "precision": p.precision.value if p.precision else None,
        "seq_len": row.seq_len, "global_batch_tokens": p.global_batch_tokens,
        "source": p.source,
        "measured": {"tokens_per_s": row.measured_tokens_per_s, "mfu": row.measured_mfu},
        "predicted": {"tokens_per_s": row.predicted_tokens_per_s, "mfu": row.predicted_mfu,
                      "layout": row.layout or None},
        "ratio": {"tokens_per_s": ratio, "mfu": mfu_ratio},
        "note": row.note or None,
    }


def _print(payload: dict[str, Any]) -> None:
    from costsim.cli.common import format_table
    from costsim.cli.numbers import percent

    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    rows = []
    for r in payload["points"]:
        m, pr, ratio = r["measured"], r["predicted"], r["ratio"]
        rows.append((f"{r['model']}", f"{r['gpus']} x {r['gpu']}", r["framework"],
                     str(r["seq_len"]), num(m["tokens_per_s"], ",.0f"),
                     num(pr["tokens_per_s"], ",.0f"),
                     percent(m["mfu"]), "-" if pr["mfu"] is None else percent(pr["mfu"]),
                     num(ratio["tokens_per_s"], ".2f")))
    print(format_table(rows, ("model", "fleet", "framework", "seq", "measured tok/s",
                              "predicted tok/s", "MFU meas.", "MFU pred.", "ratio"),
                       right_align=(3, 4, 5, 6, 7, 8)))
    for i, r in enumerate(payload["points"], 1):
        print(f"[{i}] {r['source']}" + (f" -- no prediction: {r['note']}" if r["note"] else ""))
    print(f"Verdict: {payload['summary']['verdict']}")
