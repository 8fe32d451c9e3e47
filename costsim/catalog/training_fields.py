"""The fields of a measured training run, read from a file cell or from what was given beside a
log (:class:`costsim.domain.measurements.RunDetails`): model, GPU, framework, precision, and
the checks every reader of :mod:`costsim.catalog.training_profiles` applies to a point."""

from __future__ import annotations

import math
import re
from pathlib import Path

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_architecture_file, load_preset
from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.measurements import RunDetails, TrainingPoint
from costsim.domain.precision import Dtype
from costsim.domain.workload import TrainingFramework
from costsim.errors import CostsimError, InputError, suggest

# The names users call the training frameworks by (the same table as ``estimate train
# --framework``, costsim/cli/estimate_cmd.py; a test keeps the two equal): NeMo runs
# Megatron-Core, torchtitan and fms-fsdp are PyTorch FSDP loops, accelerate is the Trainer's.
FRAMEWORK_ALIASES = {"nemo": "megatron-lm", "megatron": "megatron-lm",
                     "megatron-core": "megatron-lm", "torchtitan": "pytorch-fsdp",
                     "fsdp": "pytorch-fsdp", "accelerate": "hf-trainer",
                     "transformers": "hf-trainer", "nanogpt": "torch-compile",
                     "modded-nanogpt": "torch-compile", "nanochat": "torch-compile"}
# Dtypes a training step computes in (the rest are storage formats).
COMPUTE_DTYPES = (Dtype.FP32, Dtype.TF32, Dtype.BF16, Dtype.FP16, Dtype.FP8)
# Bounds of a run's numbers: more GPUs than the largest published run by ~60x, or a sequence
# longer than any model's context (10M tokens), is a unit slip, not a run.
MAX_GPUS = 1_000_000
MAX_SEQ_LEN = 10_000_000
# Plain decimal numbers only: float() would also take "1_000", "nan" and "infinity".
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def parse_number(text: str) -> float | None:
    """``text`` as a finite number, or None when it is not one."""
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def framework_of(text: str, where: str, key: str = "framework") -> TrainingFramework:
    """The framework ``text`` names (aliases such as ``nemo`` or ``torchtitan`` accepted)."""
    value = text.strip().lower().replace("_", "-")
    value = FRAMEWORK_ALIASES.get(value, value)
    try:
        return TrainingFramework(value)
    except ValueError:
        names = [f.value for f in TrainingFramework] + list(FRAMEWORK_ALIASES)
        hint = suggest(value, names)
        extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
        raise InputError(where, key, f"unknown framework {text!r}{extra} (valid: "
                         f"{', '.join(f.value for f in TrainingFramework)})") from None


def gpu_of(text: str, where: str, key: str = "gpu") -> GpuSpec:
    """The catalog GPU ``text`` names (canonical name, alias or nvidia-smi's name)."""
    try:
        return get_gpu(text.strip(), source=where)
    except CostsimError as exc:
        problem = _without(str(exc), where)
        raise InputError(where, key, problem) from None


def precision_of(text: str, gpu: GpuSpec, where: str, key: str = "precision") -> Dtype:
    """The compute dtype ``text`` names, which ``gpu`` must have tensor math for."""
    value = text.strip().lower()
    try:
        dtype = Dtype(value)
    except ValueError:
        dtype = None
    if dtype not in COMPUTE_DTYPES:
        raise InputError(where, key, f"unknown compute precision {text!r} (valid: "
                         f"{', '.join(d.value for d in COMPUTE_DTYPES)})")
    assert dtype is not None
    if gpu.dense_tflops(dtype) is None:
        raise InputError(where, key, f"{gpu.name} has no {dtype.value} compute")
    return dtype


def model_of(text: str, base_dir: Path, where: str, key: str = "model",
             cache: dict[str, tuple[str, Architecture]] | None = None
             ) -> tuple[str, Architecture]:
    """(name, architecture) of a preset, or of a config.json path relative to ``base_dir``."""
    text = text.strip()
    if cache is not None and text in cache:
        return cache[text]
    path = base_dir / text
    try:
        if text.lower().endswith(".json") or ("/" in text and path.is_file()):
            found = (text, load_architecture_file(path))
        else:
            preset = load_preset(text, source=where)
            found = (preset.name, preset.architecture)
    except CostsimError as exc:
        problem = _without(str(exc), where)
        raise InputError(where, key, problem) from None
    if cache is not None:
        cache[text] = found
    return found


def _without(message: str, where: str) -> str:
    """``message`` without its leading ``where: `` (the caller names the place itself)."""
    prefix = f"{where}: "
    return message[len(prefix):] if where and message.startswith(prefix) else message


def whole(value: float, where: str, key: str, most: float) -> int:
    """``value`` as a whole number from 1 to ``most``."""
    if value != int(value) or not 1 <= value <= most:
        raise InputError(where, key, f"must be a whole number from 1 to {most:,.0f}, "
                                     f"got {value:g}")
    return int(value)


def check_point(point: TrainingPoint, where: str) -> TrainingPoint:
    """``point`` when it gives a rate costsim can use: ``tokens_per_s``, or ``step_time_s``
    with ``global_batch_tokens``, or ``mfu`` with ``seq_len`` (docs/performance.md)."""
    if point.tokens_per_s is not None:
        return point
    if point.step_time_s is not None:
        if point.global_batch_tokens is None:
            raise InputError(where, "step_time_s", "a step time needs global_batch_tokens "
                                                   "(tokens per step) to give tokens/s")
        return point
    if point.mfu is not None:
        if point.seq_len is None:
            raise InputError(where, "mfu", "an MFU needs seq_len (its FLOPs per token "
                                           "depend on it) to give tokens/s")
        return point
    raise InputError(where, "tokens_per_s", "a run needs tokens_per_s (whole fleet), "
                                            "step_time_s or mfu")


def details_or_none(details: RunDetails | None) -> RunDetails:
    """``details``, or none given."""
    return details if details is not None else RunDetails()
