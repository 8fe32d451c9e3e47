"""``costsim models`` and ``costsim gpus``: the shipped catalogs with their sources."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from costsim.cli.common import EXIT_OK, add_json_flag, examples, format_table, print_json


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the catalog commands."""
    models = commands.add_parser(
        "models",
        help="model presets with exact parameter counts and sources",
        description="List the shipped model presets, or count the parameters of one config.json.",
        epilog=examples("costsim models", "costsim models --arch path/to/config.json --json"),
    )
    models.add_argument(
        "--arch",
        type=Path,
        metavar="CONFIG.json",
        help="count the parameters of this Hugging Face config instead (default: list the "
        "presets)",
    )
    add_json_flag(models)
    models.set_defaults(handler=_models)

    gpus = commands.add_parser(
        "gpus",
        help="the GPU catalog with specs and sources",
        description="List the GPU catalog: memory, bandwidth, dense TFLOPS, power, interconnect.",
        epilog=examples("costsim gpus", "costsim gpus --gpu H100 --json"),
    )
    gpus.add_argument("--gpu", metavar="NAME",
                      help="show one GPU: canonical name, alias, or the name nvidia-smi prints "
                           "(default: all)")
    add_json_flag(gpus)
    gpus.set_defaults(handler=_gpus)


def _architecture_row(arch: Any) -> dict[str, Any]:
    counts = arch.params()
    return {
        "name": arch.name,
        "family": arch.family.value,
        "params_total": counts.total,
        "params_active": counts.active,
        "num_layers": arch.num_layers,
        "hidden_size": arch.hidden_size,
        "num_heads": arch.num_heads,
        "num_kv_heads": arch.num_kv_heads,
        "head_dim": arch.head_dim,
        "intermediate_size": arch.intermediate_size,
        "vocab_size": arch.vocab_size,
        "max_position_embeddings": arch.max_position_embeddings,
        "tie_word_embeddings": arch.tie_word_embeddings,
        "num_experts": arch.num_experts,
        "experts_per_token": arch.experts_per_token,
        "sliding_window": arch.sliding_window,
    }


def _billions(n: int) -> str:
    return f"{n / 1e9:.3f}B" if n >= 1e9 else f"{n / 1e6:.1f}M"


def _models(args: argparse.Namespace) -> int:
    from costsim.catalog.models import load_architecture_file, load_preset, preset_names

    if args.arch is not None:
        rows = [
            {
                **_architecture_row(load_architecture_file(args.arch)),
                "description": "",
                "source": str(args.arch),
                "source_date": "",
            }
        ]
    else:
        rows = []
        for name in preset_names():
            preset = load_preset(name)
            rows.append(
                {
                    **_architecture_row(preset.architecture),
                    "description": preset.description,
                    "source": preset.source,
                    "source_date": preset.source_date,
                }
            )
    if args.json:
        print_json({"models": rows})
        return EXIT_OK
    table = [
        (
            r["name"],
            r["family"],
            f"{r['params_total']:,}",
            _billions(r["params_total"]),
            f"{r['params_active']:,}",
            r["num_layers"],
            r["hidden_size"],
            f"{r['num_heads']}/{r['num_kv_heads']}",
            r["max_position_embeddings"],
            r["source"],
        )
        for r in rows
    ]
    header = (
        "model",
        "family",
        "params_total",
        "≈",
        "params_active",
        "layers",
        "hidden",
        "heads/kv",
        "max_pos",
        "source",
    )
    print(format_table(table, header, right_align=(2, 3, 4, 5, 6, 8)))
    return EXIT_OK


def _gpu_row(spec: Any) -> dict[str, Any]:
    from dataclasses import asdict

    from costsim.units import bytes_to_gib

    row = asdict(spec)
    row["aliases"] = list(spec.aliases)
    row["capacity_gib"] = bytes_to_gib(spec.capacity_bytes)
    return row


def _gpus(args: argparse.Namespace) -> int:
    from costsim.catalog.gpus import get_gpu, gpu_catalog

    specs = [get_gpu(args.gpu)] if args.gpu else list(gpu_catalog())
    rows = [_gpu_row(spec) for spec in specs]
    if args.json:
        print_json({"gpus": rows})
        return EXIT_OK

    from costsim.cli.numbers import gib

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:g}"

    table = [
        (
            r["name"],
            gib(r["capacity_bytes"]),
            r["capacity_basis"],
            r["memory_type"],
            fmt(r["memory_bandwidth_gb_per_s"]),
            fmt(r["bf16_tflops"]),
            fmt(r["fp16_tflops"]),
            fmt(r["fp8_tflops"]),
            fmt(r["fp32_tflops"]),
            fmt(r["tdp_w"]),
            fmt(r["nvlink_gb_per_s_per_direction"]),
            r["pcie_generation"],
            r["form_factor"],
            r["launch_year"],
        )
        for r in rows
    ]
    header = (
        "gpu",
        "mem_GiB",
        "basis",
        "type",
        "bw_GB/s",
        "bf16_TF",
        "fp16_TF",
        "fp8_TF",
        "fp32_TF",
        "tdp_W",
        "nvlink_GB/s/dir",
        "pcie",
        "form",
        "year",
    )
    print(format_table(table, header, right_align=(1, 4, 5, 6, 7, 8, 9, 10, 11, 13)))
    print(
        "\nTFLOPS are dense (not the 2:4-sparse headline); NVLink per direction. "
        "Sources: costsim gpus --json."
    )
    return EXIT_OK
