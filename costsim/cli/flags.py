"""Flags shared by ``costsim memory``, ``estimate train`` and ``estimate serve`` (docs/memory.md):
their definitions, defaults and text converters.

Use::

    add_model_args(parser); add_gpu_arg(parser); add_precision_args(parser)
    add_layout_args(parser); add_inference_args(parser)

Layout flags are parsed with default ``None`` so that ``estimate train`` can tell "not given"
(searched) from "given". :data:`CONVERTERS` turns the text of a flag (or of a ``memory --grid``
column) into its value; :func:`int_argtype` / :func:`float_argtype` make argparse types of the
same rules. Turning parsed flags into domain objects is :mod:`costsim.cli.layout_args`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import Any

from costsim.errors import CatalogError, InputError

DEFAULT_GPU = "H100"
DEFAULT_SEQ_LEN_CAP = 4096
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


# Upper bound of every whole-number flag: far beyond any real GPU count, batch or length, and
# small enough that products of several flags stay exact in the int64 / float64 arrays.
MAX_WHOLE_NUMBER = 1_000_000_000


def _int(flag: str, minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(str(text).strip())
        except ValueError:
            raise InputError("", flag, f"must be a whole number (got {text!r})") from None
        if value < minimum:
            raise InputError("", flag, f"must be >= {minimum} (got {value})")
        if value > MAX_WHOLE_NUMBER:
            raise InputError("", flag, f"must be <= {MAX_WHOLE_NUMBER:,} (got {value})")
        return value
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
    "lora-rank": _int("--lora-rank", 1),
    "lora-targets": str,
    "zero": _int("--zero", 0),
    "tp": _int("--tp", 1),
    "pp": _int("--pp", 1),
    "dp": _int("--dp", 1),
    "sp": _bool("--sp"),
    "gpus": _int("--gpus", 1),
    "micro-batch": _int("--micro-batch", 1),
    "seq-len": _int("--seq-len", 1),
    "grad-accum": _int("--grad-accum", 1),
    "recompute": _enum_choice(lambda: _workload().Recompute, "--recompute"),
    "flash-attention": _bool("--flash-attention"),
    "batch": _int("--batch", 1),
    "context": _int("--context", 1),
    "prompt-tokens": _int("--prompt-tokens", 0),
    "output-tokens": _int("--output-tokens", 0),
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


def int_argtype(flag: str, minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number >= ``minimum`` (one-line error naming ``flag``)."""
    parse: Callable[[str], int] = _argparse_type(_int(flag, minimum), flag)
    return parse


def float_argtype(flag: str, minimum: float, *, inclusive: bool) -> Callable[[str], float]:
    """An argparse ``type`` for a finite number > ``minimum`` (>= when ``inclusive``)."""
    rule = f">= {minimum:g}" if inclusive else f"> {minimum:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise InputError("", flag, f"must be a number (got {text!r})") from None
        if not math.isfinite(value) or value < minimum or (value == minimum and not inclusive):
            raise InputError("", flag, f"must be {rule} (got {text})")
        return value
    parsed: Callable[[str], float] = _argparse_type(parse, flag)
    return parsed


def add_model_args(parser: argparse.ArgumentParser) -> None:
    """``--model PRESET`` / ``--arch CONFIG.json`` (one required, checked at resolve time)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--model", metavar="PRESET", help="a shipped model preset (costsim models)")
    group.add_argument("--arch", type=Path, metavar="CONFIG.json",
                       help="a Hugging Face config.json")


def add_gpu_arg(parser: argparse.ArgumentParser) -> None:
    """``--gpu NAME`` (canonical name or alias; default H100)."""
    parser.add_argument("--gpu", metavar="NAME", default=DEFAULT_GPU,
                        help=f"GPU name, alias or nvidia-smi name (default {DEFAULT_GPU})")


def add_precision_args(parser: argparse.ArgumentParser, *, task_default: str | None = None
                       ) -> None:
    """``--task``, ``--precision``, ``--bytes-preset``, ``--optimizer``, ``--quant``,
    ``--kv-dtype``, ``--lora-rank``, ``--lora-targets``."""
    parser.add_argument("--task", type=_argtype("task"), default=task_default,
                        help="train | finetune | infer")
    parser.add_argument("--precision", type=_argtype("precision"), default=None,
                        help="compute dtype: fp32, tf32, bf16, fp16, fp8 "
                             "(default bf16, fp16 on GPUs without bf16)")
    parser.add_argument("--bytes-preset", type=_argtype("bytes-preset"), default="framework",
                        help="mixed-precision Adam bytes/param: paper 16, framework 18, "
                             "deepspeed 20, pure 12 (default framework)")
    parser.add_argument("--optimizer", type=_argtype("optimizer"), default="adamw",
                        help="adamw | adamw-8bit | sgd-momentum | sgd | adafactor")
    parser.add_argument("--quant", type=_argtype("quant"), default="none",
                        help="weight storage: none | int8 | int4 | nf4 | fp8")
    parser.add_argument("--kv-dtype", type=_argtype("kv-dtype"), default=None,
                        help="KV-cache dtype (default: the precision)")
    parser.add_argument("--lora-rank", type=_argtype("lora-rank"), default=None, metavar="R")
    parser.add_argument("--lora-targets", default=None, metavar="NAMES",
                        help="comma-separated HF module names or all-linear "
                             "(default: the family's query and value projections)")


def add_layout_args(parser: argparse.ArgumentParser) -> None:
    """Parallel layout, batch and recomputation flags; all default to None (= not given)."""
    for name, help_text in (("zero", "ZeRO stage 0..3 (3 = FSDP full shard)"),
                            ("tp", "tensor-parallel degree"), ("pp", "pipeline-parallel degree"),
                            ("dp", "data-parallel degree"), ("gpus", "total GPUs = dp·tp·pp"),
                            ("micro-batch", "sequences per GPU per step"),
                            ("seq-len", "tokens per sequence (training)"),
                            ("grad-accum", "gradient-accumulation steps")):
        parser.add_argument(f"--{name}", type=_argtype(name), default=None, help=help_text)
    parser.add_argument("--sp", action="store_true", default=None,
                        help="sequence parallelism over the TP group")
    parser.add_argument("--recompute", type=_argtype("recompute"), default=None,
                        help="none | selective | full")
    parser.add_argument("--flash-attention", dest="flash_attention", action="store_true",
                        default=None, help="flash attention (default on for 16-bit compute)")
    parser.add_argument("--no-flash-attention", dest="flash_attention", action="store_false")


def add_inference_args(parser: argparse.ArgumentParser) -> None:
    """``--batch``, ``--context``, ``--prompt-tokens``, ``--output-tokens``."""
    parser.add_argument("--batch", type=_argtype("batch"), default=None,
                        help="concurrent sequences (default 1)")
    parser.add_argument("--context", type=_argtype("context"), default=None,
                        help="tokens per sequence in the KV cache (default prompt + output)")
    parser.add_argument("--prompt-tokens", type=_argtype("prompt-tokens"), default=None)
    parser.add_argument("--output-tokens", type=_argtype("output-tokens"), default=None)


def add_all_memory_args(parser: argparse.ArgumentParser, *, task_default: str | None = None
                        ) -> None:
    """Every shared flag that ``memory`` takes (docs/memory.md)."""
    add_model_args(parser)
    add_precision_args(parser, task_default=task_default)
    add_layout_args(parser)
    add_inference_args(parser)
    add_gpu_arg(parser)
