"""``costsim calibrate serve FILE...``: each measured serving point beside costsim's prediction
for the same case (ratio = measured / predicted) and a one-line verdict (DESIGN §12;
docs/performance.md "Measured serving profiles")."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from costsim.cli.common import EXIT_OK, OneLineParser, add_json_flag, examples, print_json
from costsim.cli.estimate_cmd import ENGINES, _engine
from costsim.cli.flags import add_compute_args, gpu_argtype, range_argtype
from costsim.cli.ranges import describe


def register(subs: argparse._SubParsersAction[OneLineParser]) -> None:
    """Add ``calibrate serve``."""
    parser = subs.add_parser(
        "serve", help="measured serving throughput and latency beside the model's prediction",
        description="Read serving benchmark results (the serving profile CSV, `vllm bench "
                    "serve --save-result` JSON, SGLang `bench_serving` JSON lines) and show "
                    "each measured point beside costsim's prediction for the same model, GPU, "
                    "engine, TP and request size: measured, predicted, ratio = measured / "
                    "predicted (throughput where the point measured the maximum; p50/p95 "
                    "TTFT and TPOT at the offered rate), then a verdict: the median ratio and "
                    "its spread.",
        epilog=examples("costsim calibrate serve docs/examples/serving_profile.csv",
                        "costsim calibrate serve bench-h100.json --gpu H100 --tp 1",
                        "costsim calibrate serve sglang.jsonl --gpu A100-80GB --model llama-3-8b "
                        "--engine sglang --json"))
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE",
                        help="serving profile CSV, vLLM benchmark JSON or SGLang JSON lines")
    parser.add_argument("--model", default=None, metavar="PRESET",
                        help="model of points that do not name one, a preset or a config.json "
                             "(default: the file's model column / model_id)")
    parser.add_argument("--gpu", type=gpu_argtype(), default=None, metavar="NAME",
                        help="GPU of points that do not name one (a benchmark JSON never "
                             "does), any name incl. nvidia-smi's (default: none)")
    parser.add_argument("--tp", type=range_argtype("--tp"), default=None, metavar="N",
                        help=f"tensor-parallel degree of points that do not name one, "
                             f"{describe('--tp')} (default: SGLang's server_info, else the "
                             "model's smallest that fits)")
    parser.add_argument("--engine", type=_engine, default=None, metavar="ENGINE",
                        help=f"engine of points that do not name one: {' | '.join(ENGINES)} "
                             "(default: the file's backend, else vllm)")
    add_compute_args(parser)  # --precision, --quant: of points that do not name them
    add_json_flag(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from costsim.catalog.serving_profiles import read_serving_profile
    from costsim.domain.measurements import ServingFileContext
    from costsim.perf.serving_calibration import summarize, verdict

    context = ServingFileContext(
        model=args.model, gpu=args.gpu, tp=None if args.tp is None else int(args.tp),
        engine=args.engine, precision=args.precision,
        quant=None if args.quant == "none" else args.quant)
    points = [p for file in args.files for p in read_serving_profile(file, context)]
    rows = [_compare(p) for p in points]
    comparisons = [c for _, found, _ in rows for c in found]
    summaries = summarize(comparisons)
    payload = {
        "points": [_point_json(p, found, error) for p, found, error in rows],
        "summary": [{"figure": s.figure, "points": s.points, "median_ratio": s.median,
                     "low": s.low, "high": s.high, "spread": s.spread} for s in summaries],
        "verdict": verdict(summaries),
    }
    if args.json:
        print_json(payload)
    else:
        _print(payload)
    return EXIT_OK


def _compare(point: Any) -> tuple[Any, tuple[Any, ...], str | None]:
    """The point, its comparisons, and why the model could not predict it (or None)."""
    from costsim.catalog.gpus import get_gpu
    from costsim.catalog.perf_defaults import perf_defaults
    from costsim.domain.workload import Quant, ServingEngine
    from costsim.errors import CostsimError
    from costsim.perf.serving import estimate_serving, latency_at_rate
    from costsim.perf.serving_calibration import compare_point

    gpu = get_gpu(point.gpu)
    defaults = perf_defaults()
    try:
        est = estimate_serving(
            point.architecture, gpu, engine=point.engine or ServingEngine.VLLM,
            precision=point.precision or gpu.default_precision,
            quant=point.quant or Quant.NONE, kv_dtype=None,
            prompt_tokens=max(1, round(point.prompt_tokens)),
            output_tokens=max(1, round(point.output_tokens)), batch=1, tp=point.tp,
            rate_requests_per_s=None, slo_ttft_s=None, slo_tpot_s=None,
            price_usd_per_gpu_hour=0.0, assumptions=defaults.serving)
        latency = (None if point.request_rate_per_s is None else latency_at_rate(
            point.architecture, gpu, est, defaults.serving, point.request_rate_per_s))
    except CostsimError as exc:
        return point, (), str(exc)
    return point, compare_point(point, est, latency), None


def _point_json(p: Any, found: tuple[Any, ...], error: str | None) -> dict[str, Any]:
    return {"source": p.source, "model": p.model, "gpu": p.gpu, "tp": p.tp,
            "engine": p.engine.value if p.engine else "vllm",
            "prompt_tokens": p.prompt_tokens, "output_tokens": p.output_tokens,
            "request_rate": p.request_rate_per_s, "concurrency": p.concurrency,
            "figures": [{"figure": c.figure, "measured": c.measured, "predicted": c.predicted,
                         "ratio": c.ratio} for c in found],
            "error": error}


def _print(payload: dict[str, Any]) -> None:
    from costsim.cli.common import format_table

    rows = []
    for p in payload["points"]:
        rate = "offline" if p["request_rate"] is None else f"{p['request_rate']:g} req/s"
        case = (f"{p['model']} {p['tp'] or ''}{'x' if p['tp'] else ''}{p['gpu']} {p['engine']} "
                f"{p['prompt_tokens']:.0f}+{p['output_tokens']:.0f} tok, {rate}")
        if p["error"]:
            rows.append((p["source"], case, "-", "-", "-", f"not predicted: {p['error']}"))
        for f in p["figures"]:
            ratio = "-" if f["ratio"] is None else f"{f['ratio']:.2f}"
            rows.append((p["source"], case, f["figure"], f"{f['measured']:.4g}",
                         f"{f['predicted']:.4g}", ratio))
    print(format_table(rows, ("source", "case", "figure", "measured", "predicted", "ratio")))
    for s in payload["summary"]:
        print(f"{s['figure']}: median ratio {s['median_ratio']:.2f} ({s['spread']} "
              f"{s['low']:.2f}-{s['high']:.2f}, {s['points']} points)")
    print(f"verdict: {payload['verdict']}")
