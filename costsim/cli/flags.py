"""Flags shared by ``costsim memory``, ``estimate train`` and ``estimate serve`` (docs/memory.md):
their definitions, defaults and text converters.

Use::

    add_model_args(parser); add_gpu_arg(parser); add_compute_args(parser)
    add_training_args(parser); add_layout_args(parser, searched=...); add_inference_args(parser)

Each command adds only the flags it reads (docs/inputs.md): ``estimate serve`` has no training
flags, ``estimate train`` no inference ones; ``memory`` has them all.

Layout flags are parsed with default ``None`` so that ``estimate train`` can tell "not given"
(searched) from "given". :data:`CONVERTERS` turns the text of a flag (or of a ``memory --grid``
column) into its value, numbers checked against their ranges (:mod:`costsim.cli.ranges`);
:func:`range_argtype` makes an argparse type of the same rules. Turning parsed flags into
domain objects is :mod:`costsim.cli.layout_args`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import Any

from costsim.cli.ranges import FLAG_RANGES
from costsim.errors import CatalogError, InputError

DEFAULT_GPU = "H100"
DEFAULT_PROMPT_TOKENS = 512
DEFAULT_OUTPUT_TOKENS = 256
COMPUTE_PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")
KV_DTYPE_CHOICES = ("fp32", "fp16", "bf16", "fp8", "int8")


def _choice(enum_values: tuple[str, ...], flag: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in enum_values:
            raise CatalogError(flag.lstrip("-"), text, enum_values, source=flag)
        return value
    return parse


def _workload() -> ModuleType:
    from costsim.domain import workload

    return workload


def _enum_choice(enum: Callable[[], Iterable[StrEnum]], flag: str) -> Callable[[str], str]:
    # The domain enum is imported when a flag is parsed, not when the commands are registered:
    # it pulls in dataclasses and would slow every `costsim --help`.
    def parse(text: str) -> str:
        return _choice(tuple(member.value for member in enum()), flag)(text)
    return parse


# Upper bound of every whole-number flag (each has its own, smaller range in
# :data:`costsim.cli.ranges.FLAG_RANGES`): products of several flags stay exact in the int64 /
# float64 arrays of ``memory --grid``.
MAX_WHOLE_NUMBER = 1_000_000_000


def _int(flag: str) -> Callable[[str], int]:
    bounds = FLAG_RANGES[flag]

    def parse(text: str) -> int:
        return int(bounds.check(flag, text))
    return parse


def _bool(flag: str) -> Callable[[str], bool]:
    def parse(text: str) -> bool:
        value = str(text).strip().lower()
        if value in ("1", "true", "yes", "on"):
            return True
        if value in ("0", "false", "no", "off", ""):
            return False
        raise InputError("", flag, f"must be true or false (got {text!r})")
    return parse


# Flag name (without dashes) → converter from text; used by the CLI and by ``memory --grid``.
CONVERTERS: dict[str, Callable[[str], Any]] = {
    "model": str,
    "arch": Path,
    "task": _enum_choice(lambda: _workload().Task, "--task"),
    "precision": _choice(COMPUTE_PRECISIONS, "--precision"),
    "bytes-preset": _enum_choice(lambda: _workload().BytesPreset, "--bytes-preset"),
    "optimizer": _enum_choice(lambda: _workload().OptimizerKind, "--optimizer"),
    "quant": _enum_choice(lambda: _workload().Quant, "--quant"),
    "kv-dtype": _choice(KV_DTYPE_CHOICES, "--kv-dtype"),
    "lora-rank": _int("--lora-rank"),
    "lora-targets": str,
    "zero": _int("--zero"),
    "tp": _int("--tp"),
    "pp": _int("--pp"),
    "dp": _int("--dp"),
    "sp": _bool("--sp"),
    "gpus": _int("--gpus"),
    "micro-batch": _int("--micro-batch"),
    "seq-len": _int("--seq-len"),
    "grad-accum": _int("--grad-accum"),
    "recompute": _enum_choice(lambda: _workload().Recompute, "--recompute"),
    "flash-attention": _bool("--flash-attention"),
    "batch": _int("--batch"),
    "context": _int("--context"),
    "prompt-tokens": _int("--prompt-tokens"),
    "output-tokens": _int("--output-tokens"),
    "gpu": str,
}


def _argparse_type(convert: Callable[[str], Any], flag: str) -> Callable[[str], Any]:
    flag_prefix = f"{flag}: "

    def parse(text: str) -> Any:
        try:
            return convert(text)
        except (InputError, CatalogError) as exc:
            # argparse already starts the line with "argument --flag: "; the converters name
            # the flag too because ``memory --grid`` calls them without argparse.
            message = str(exc).removeprefix(flag_prefix)
            raise argparse.ArgumentTypeError(message) from None
    parse.__name__ = flag.lstrip("-")
    return parse


def _argtype(name: str) -> Callable[[str], Any]:
    return _argparse_type(CONVERTERS[name], f"--{name}")


def value_argtype(name: str) -> Callable[[str], Any]:
    """An argparse ``type`` for the flag ``--name`` with :data:`CONVERTERS`' rule (a choice
    such as ``precision``), with a one-line error naming the flag and the value."""
    return _argtype(name)


def _canonical_gpu(text: str) -> str:
    from costsim.catalog.gpus import canonical_gpu_name

    return canonical_gpu_name(text, source="--gpu")


def gpu_argtype() -> Callable[[str], str]:
    """An argparse ``type`` for ``--gpu`` that refuses an unknown name when it is parsed (for
    commands where the flag only fills what a file leaves out, so a bad name would otherwise
    go unnoticed); the canonical name."""
    return _argparse_type(_canonical_gpu, "--gpu")


def range_argtype(flag: str) -> Callable[[str], float]:
    """An argparse ``type`` for a number in ``flag``'s range (:data:`FLAG_RANGES`), with a
    one-line error naming the flag, the range and the value."""
    bounds = FLAG_RANGES[flag]

    def parse(text: str) -> float:
        value = bounds.check(flag, text)
        return int(value) if bounds.integer else value
    parsed: Callable[[str], float] = _argparse_type(parse, flag)
    return parsed


def _values(enum_values: tuple[str, ...]) -> str:
    return " | ".join(enum_values)


def _range(flag: str) -> str:
    return FLAG_RANGES[flag].describe()


def add_model_args(parser: argparse.ArgumentParser, *, optional_for: str = "") -> None:
    """``--model PRESET`` / ``--arch CONFIG.json`` (one required, checked at resolve time).

    ``optional_for``: for a command where the model is optional, what giving it adds
    (``costsim telemetry``: "the memory engine's prediction beside the measured peak").
    """
    need = (f"without --model or --arch, no {optional_for}" if optional_for
            else "--model or --arch is required")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--model", metavar="PRESET",
                       help="a shipped model preset, see `costsim models` (default: none; "
                            f"{need})")
    group.add_argument("--arch", type=Path, metavar="CONFIG.json",
                       help="a Hugging Face config.json (llama, mistral, mixtral, qwen2, qwen3, "
                            "gpt2, bert, gpt_neox, bloom, falcon; sizes checked against the "
                            "ranges of docs/inputs.md) (default: none)")


def add_gpu_arg(parser: argparse.ArgumentParser) -> None:
    """``--gpu NAME`` (canonical name or alias; default H100)."""
    parser.add_argument("--gpu", metavar="NAME", default=DEFAULT_GPU,
                        help="GPU name, alias or nvidia-smi name, see `costsim gpus` "
                             f"(default {DEFAULT_GPU})")


def add_task_arg(parser: argparse.ArgumentParser, values: tuple[str, ...], default: str) -> None:
    """``--task`` with the tasks a command runs (``estimate train``: train | finetune)."""
    parser.add_argument("--task", type=_argtype("task"), default=None, metavar="TASK",
                        help=f"{_values(values)} (default {default}; finetune when "
                             "--lora-rank is given)")


def add_compute_args(parser: argparse.ArgumentParser) -> None:
    """``--precision`` and ``--quant`` (every command that sizes a model)."""
    parser.add_argument("--precision", type=_argtype("precision"), default=None,
                        help=f"compute dtype: {_values(COMPUTE_PRECISIONS)} "
                             "(default bf16, fp16 on GPUs without bf16)")
    parser.add_argument("--quant", type=_argtype("quant"), default="none",
                        help="weight storage: none | int8 | int4 | nf4 | fp8 (default none)")


def add_kv_dtype_arg(parser: argparse.ArgumentParser) -> None:
    """``--kv-dtype`` (inference)."""
    parser.add_argument("--kv-dtype", type=_argtype("kv-dtype"), default=None,
                        help=f"KV-cache dtype: {_values(KV_DTYPE_CHOICES)} "
                             "(default: the precision)")


def add_training_args(parser: argparse.ArgumentParser) -> None:
    """``--bytes-preset``, ``--optimizer``, ``--lora-rank``, ``--lora-targets`` (training)."""
    parser.add_argument("--bytes-preset", type=_argtype("bytes-preset"), default="framework",
                        help="mixed-precision Adam bytes/param: paper 16 | framework 18 | "
                             "deepspeed 20 | pure 12 (default framework)")
    parser.add_argument("--optimizer", type=_argtype("optimizer"), default="adamw",
                        help="adamw | adamw-8bit | sgd-momentum | sgd | adafactor "
                             "(default adamw)")
    parser.add_argument("--lora-rank", type=_argtype("lora-rank"), default=None, metavar="R",
                        help=f"LoRA adapter rank, {_range('--lora-rank')} and at most the "
                             "smaller side of each adapted layer (default: no LoRA)")
    parser.add_argument("--lora-targets", default=None, metavar="NAMES",
                        help="comma-separated HF module names (q_proj,v_proj) or all-linear; "
                             "needs --lora-rank (default: the family's query and value "
                             "projections)")


def add_precision_args(parser: argparse.ArgumentParser) -> None:
    """Every dtype, task and adapter flag of ``memory``: ``--task``, the compute, training and
    KV-cache flags."""
    add_task_arg(parser, ("train", "finetune", "infer"), "train")
    add_compute_args(parser)
    add_training_args(parser)
    add_kv_dtype_arg(parser)


def add_layout_args(parser: argparse.ArgumentParser, *, searched: bool) -> None:
    """Parallel layout, batch and recomputation flags; all default to None (= not given).

    ``searched``: ``estimate train`` searches the flags left out; ``memory`` takes defaults.
    """
    positions = "the model's positions, capped at 4096"
    for name, help_text, memory_default, search_default in (
            ("zero", "ZeRO stage (3 = FSDP full shard)", "0", "searched"),
            ("tp", "tensor-parallel degree; divides the attention heads", "1", "searched"),
            ("pp", "pipeline-parallel degree; at most the layers", "1", "searched"),
            ("dp", "data-parallel degree", "gpus/(tp·pp) with --gpus, else 1", "searched"),
            ("gpus", "total GPUs = dp·tp·pp", "dp·tp·pp", "dp·tp·pp"),
            ("micro-batch", "sequences per GPU per step", "1", "searched"),
            ("seq-len", "tokens per sequence; at most the model's positions", positions,
             positions),
            ("grad-accum", "gradient-accumulation steps", "1", "from the global batch")):
        value = search_default if searched else memory_default
        parser.add_argument(f"--{name}", type=_argtype(name), default=None, metavar="N",
                            help=f"{help_text}, {_range('--' + name)} (default {value})")
    sp_default, recompute_default = ("searched", "searched") if searched else ("off", "none")
    parser.add_argument("--sp", action="store_true", default=None,
                        help=f"sequence parallelism over the TP group (default {sp_default})")
    parser.add_argument("--recompute", type=_argtype("recompute"), default=None,
                        help=f"activation recomputation: none | selective | full "
                             f"(default {recompute_default})")
    flash = parser.add_mutually_exclusive_group()
    flash.add_argument("--flash-attention", dest="flash_attention", action="store_true",
                       default=None, help="use flash attention (default on for 16- and 8-bit "
                                          "compute, off for fp32/tf32)")
    flash.add_argument("--no-flash-attention", dest="flash_attention", action="store_false",
                       help="eager s×s attention instead (default: see --flash-attention)")


def add_replica_args(parser: argparse.ArgumentParser) -> None:
    """``--tp`` and ``--gpus`` of one serving replica (its GPUs are its TP degree)."""
    for name, what in (("tp", "tensor-parallel degree of a replica"),
                       ("gpus", "GPUs per replica, the same as --tp")):
        parser.add_argument(f"--{name}", type=_argtype(name), default=None, metavar="N",
                            help=f"{what}, {_range('--' + name)} (default: the fewest GPUs "
                                 "that hold the model)")


def add_inference_args(parser: argparse.ArgumentParser, *, serving: bool = False) -> None:
    """``--batch``, ``--context``, ``--prompt-tokens``, ``--output-tokens``."""
    what = ("concurrent sequences at which latency is computed without --rate" if serving
            else "concurrent sequences")
    parser.add_argument("--batch", type=_argtype("batch"), default=None, metavar="N",
                        help=f"{what}, {_range('--batch')} (default 1)")
    parser.add_argument("--context", type=_argtype("context"), default=None, metavar="N",
                        help=f"tokens per sequence in the KV cache, {_range('--context')} "
                             "(default prompt + output, capped at the model's positions)")
    parser.add_argument("--prompt-tokens", type=_argtype("prompt-tokens"), default=None,
                        metavar="N", help=f"prompt tokens per request, "
                                          f"{_range('--prompt-tokens')} "
                                          f"(default {DEFAULT_PROMPT_TOKENS})")
    parser.add_argument("--output-tokens", type=_argtype("output-tokens"), default=None,
                        metavar="N", help=f"generated tokens per request, "
                                          f"{_range('--output-tokens')} "
                                          f"(default {DEFAULT_OUTPUT_TOKENS})")


def add_all_memory_args(parser: argparse.ArgumentParser) -> None:
    """Every shared flag that ``memory`` takes (docs/memory.md)."""
    add_model_args(parser)
    add_precision_args(parser)
    add_layout_args(parser, searched=False)
    add_inference_args(parser)
    add_gpu_arg(parser)


def add_profile_arg(parser: argparse.ArgumentParser, what: str) -> None:
    """``--profile FILE`` (repeatable): measured figures that win over the model (DESIGN §12);
    ``what`` names the files the command reads."""
    parser.add_argument("--profile", action="append", type=Path, default=None, metavar="FILE",
                        help=f"{what}; repeatable; a measured figure wins over the model for "
                             "the case it covers (default: none, the model alone; "
                             "docs/performance.md)")
