"""Parsed shared flags (:mod:`costsim.cli.flags`) turned into domain objects: the architecture,
GPU, precision and task, the parallel layout, and the training or inference setup.

Use::

    name, arch, gpu, task = resolve_model_gpu_task(args)
    setup = build_training_setup(args, arch, gpu)     # or build_inference_setup(...)

:func:`read_layout_flags` returns the layout flags as given (:class:`LayoutFlags`, None = not
given) and :func:`resolve_layout` fills the ``memory`` defaults. Every error is an
:class:`InputError` or :class:`CatalogError` naming the flag, the rule and the value.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from costsim.cli.flags import (
    DEFAULT_GPU,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_PROMPT_TOKENS,
)
from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.precision import Dtype
from costsim.domain.workload import (
    ALL_LINEAR,
    BytesPreset,
    InferenceSetup,
    LoraConfig,
    OptimizerKind,
    ParallelLayout,
    Quant,
    Recompute,
    Task,
    TrainingSetup,
)
from costsim.errors import InputError
from costsim.perf.setups import default_flash_attention, default_seq_len


def resolve_architecture(args: argparse.Namespace) -> tuple[str, Architecture]:
    """The (display name, architecture) that ``--model`` or ``--arch`` names."""
    from costsim.catalog.models import load_architecture_file, load_preset

    if getattr(args, "model", None):
        preset = load_preset(args.model, source="--model")
        return preset.name, preset.architecture
    if getattr(args, "arch", None):
        arch = load_architecture_file(Path(args.arch))
        return arch.name, arch
    raise InputError("", "--model", "one of --model PRESET or --arch CONFIG.json is required")


def resolve_model_gpu_task(args: argparse.Namespace) -> tuple[str, Architecture, GpuSpec, Task]:
    """(display name, architecture, GPU, task) of a single-configuration command."""
    name, arch = resolve_architecture(args)
    return name, arch, resolve_gpu(args), resolve_task(args)


def resolve_gpu(args: argparse.Namespace) -> GpuSpec:
    """The GPU ``--gpu`` names (CatalogError with "did you mean" when unknown)."""
    from costsim.catalog.gpus import get_gpu

    name = getattr(args, "gpu", None)
    if name is not None and not str(name).strip():
        raise InputError("", "--gpu", f"must name a GPU (got {name!r}; see costsim gpus)")
    return get_gpu(name or DEFAULT_GPU)


def resolve_precision(args: argparse.Namespace, gpu: GpuSpec) -> Dtype:
    """``--precision``, defaulting to bf16 (fp16 where the GPU lacks bf16); a dtype the GPU
    cannot compute in is an error."""
    from costsim.memory.estimate import check_precision

    if getattr(args, "precision", None) is None:
        return gpu.default_precision
    precision = Dtype(args.precision)
    check_precision(gpu, precision)
    return precision


def resolve_task(args: argparse.Namespace, default: Task = Task.TRAIN) -> Task:
    """``--task``; ``--lora-rank`` without a task means ``finetune``."""
    task = getattr(args, "task", None)
    if task is None:
        return Task.FINETUNE if getattr(args, "lora_rank", None) else default
    return Task(task)


@dataclass(frozen=True, slots=True, kw_only=True)
class LayoutFlags:
    """The layout flags as given (None = not given; ``estimate train`` searches those)."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    zero: int | None = None
    sp: bool | None = None
    gpus: int | None = None
    micro_batch: int | None = None
    seq_len: int | None = None
    grad_accum: int | None = None
    recompute: Recompute | None = None
    flash_attention: bool | None = None


def read_layout_flags(args: argparse.Namespace) -> LayoutFlags:
    """Collect the layout flags from parsed arguments (each already checked against its range
    when parsed, :mod:`costsim.cli.ranges`)."""
    zero = getattr(args, "zero", None)
    recompute = getattr(args, "recompute", None)
    return LayoutFlags(
        tp=getattr(args, "tp", None), pp=getattr(args, "pp", None), dp=getattr(args, "dp", None),
        zero=zero, sp=getattr(args, "sp", None),
        gpus=getattr(args, "gpus", None), micro_batch=getattr(args, "micro_batch", None),
        seq_len=getattr(args, "seq_len", None), grad_accum=getattr(args, "grad_accum", None),
        recompute=Recompute(recompute) if recompute else None,
        flash_attention=getattr(args, "flash_attention", None),
    )


def resolve_layout(flags: LayoutFlags, arch: Architecture) -> ParallelLayout:
    """The ``memory`` layout: tp, pp default 1; dp = gpus/(tp·pp) when ``--gpus`` is given,
    else 1; zero 0. Checks ``--gpus`` = dp·tp·pp and that tp divides the heads.
    """
    from costsim.memory.estimate import check_layout

    tp = flags.tp or 1
    pp = flags.pp or 1
    zero = 0 if flags.zero is None else flags.zero
    if flags.gpus is not None:
        if flags.dp is None:
            if flags.gpus % (tp * pp):
                raise InputError("", "--gpus", f"must be a multiple of tp·pp = {tp * pp} "
                                               f"(got {flags.gpus})")
            dp = flags.gpus // (tp * pp)
        else:
            dp = flags.dp
            if dp * tp * pp != flags.gpus:
                raise InputError("", "--gpus", f"must equal dp·tp·pp = {dp}·{tp}·{pp} = "
                                               f"{dp * tp * pp} (got {flags.gpus})")
    else:
        dp = flags.dp or 1
    layout = ParallelLayout(tp=tp, pp=pp, dp=dp, zero=zero, sp=bool(flags.sp))
    check_layout(arch, layout)
    return layout


def resolve_lora(args: argparse.Namespace, arch: Architecture, task: Task) -> LoraConfig | None:
    """``--lora-rank`` / ``--lora-targets`` → LoraConfig (None without a rank)."""
    from costsim.memory.lora import default_targets

    rank = getattr(args, "lora_rank", None)
    targets_text = getattr(args, "lora_targets", None)
    if rank is None:
        if targets_text is not None:
            raise InputError("", "--lora-targets", "needs --lora-rank R")
        return None
    if task is not Task.FINETUNE:
        raise InputError("", "--lora-rank", f"LoRA needs --task finetune (got --task {task.value})")
    if targets_text is not None:  # given, even empty: "" names no module, it is no default
        targets = tuple(t.strip() for t in str(targets_text).split(",") if t.strip())
        if not targets:
            raise InputError("", "--lora-targets", f"no module names in {targets_text!r}")
    else:
        targets = default_targets(arch)
    if ALL_LINEAR in targets and len(targets) > 1:
        raise InputError("", "--lora-targets", f"'{ALL_LINEAR}' cannot be combined with names "
                                               f"(got {targets_text})")
    return LoraConfig(rank=rank, targets=targets)


# Flags that only one kind of task reads; given to the other kind they are contradictory.
INFERENCE_ONLY_DESTS = ("batch", "context", "prompt_tokens", "output_tokens", "kv_dtype")
TRAINING_ONLY_DESTS = ("micro_batch", "seq_len", "grad_accum", "recompute")


def _reject_flags(args: argparse.Namespace, dests: tuple[str, ...], task: Task,
                  hint: str) -> None:
    for dest in dests:
        value = getattr(args, dest, None)
        if value is not None:
            flag = "--" + dest.replace("_", "-")
            raise InputError("", flag, f"does not apply to --task {task.value} ({hint}; "
                                       f"got {flag} {value})")


def build_training_setup(args: argparse.Namespace, arch: Architecture, gpu: GpuSpec,
                         task: Task | None = None) -> TrainingSetup:
    """A :class:`TrainingSetup` from the flags, with the ``memory`` defaults."""
    task = task or resolve_task(args)
    if task is Task.INFER:
        raise InputError("", "--task", "an inference task has no training setup")
    _reject_flags(args, INFERENCE_ONLY_DESTS, task, "an inference flag; training sizes "
                                                    "sequences with --micro-batch and --seq-len")
    precision = resolve_precision(args, gpu)
    flags = read_layout_flags(args)
    layout = resolve_layout(flags, arch)
    quant = Quant(getattr(args, "quant", None) or "none")
    lora = resolve_lora(args, arch, task)
    if quant is not Quant.NONE and lora is None:
        raise InputError("", "--quant", "quantized base weights are frozen: train them with "
                                        "--task finetune --lora-rank R "
                                        f"(got --quant {quant.value})")
    seq_len = flags.seq_len or default_seq_len(arch)
    flash = (default_flash_attention(precision) if flags.flash_attention is None
             else flags.flash_attention)
    return TrainingSetup(
        task=task, precision=precision, layout=layout, micro_batch=flags.micro_batch or 1,
        seq_len=seq_len, grad_accum=flags.grad_accum or 1,
        recompute=flags.recompute or Recompute.NONE, flash_attention=flash,
        optimizer=OptimizerKind(getattr(args, "optimizer", None) or "adamw"),
        bytes_preset=BytesPreset(getattr(args, "bytes_preset", None) or "framework"),
        quant=quant, lora=lora,
    )


def resolve_request_tokens(args: argparse.Namespace, arch: Architecture) -> tuple[int, int]:
    """(prompt, output) tokens of one request: the flags, else 512 and 256 (docs/performance.md).

    Raises:
        InputError: prompt + output exceed the model's maximum positions (a request the model
            cannot hold; the message says which numbers were defaults).
    """
    prompt_flag = getattr(args, "prompt_tokens", None)
    output_flag = getattr(args, "output_tokens", None)
    prompt = DEFAULT_PROMPT_TOKENS if prompt_flag is None else int(prompt_flag)
    output = DEFAULT_OUTPUT_TOKENS if output_flag is None else int(output_flag)
    total = prompt + output
    if total > arch.max_position_embeddings:
        defaults = [f"--{name} defaults to {value}" for name, value, given in (
            ("prompt-tokens", prompt, prompt_flag), ("output-tokens", output, output_flag))
            if given is None]
        note = f"; {', '.join(defaults)}" if defaults else ""
        raise InputError("", "--prompt-tokens + --output-tokens",
                         f"must be at most the {arch.max_position_embeddings} positions of "
                         f"{arch.name} (got {prompt} + {output} = {total}{note})")
    return prompt, output


def resolve_context(args: argparse.Namespace, arch: Architecture) -> int:
    """``--context``, else prompt + output tokens capped at the model's maximum positions.

    The cap is the memory view (a sequence never caches more tokens than the model has
    positions; tests pin it); ``estimate serve`` instead rejects a request that long, since
    its prefill and decode times would be meaningless (:func:`resolve_request_tokens`).
    """
    context = getattr(args, "context", None)
    prompt = getattr(args, "prompt_tokens", None)
    output = getattr(args, "output_tokens", None)
    total = (DEFAULT_PROMPT_TOKENS if prompt is None else prompt) + (
        DEFAULT_OUTPUT_TOKENS if output is None else output)
    if context is not None:
        if (prompt is not None or output is not None) and total > context:
            raise InputError("", "--context", f"must hold prompt + output = {total} tokens "
                                              f"(got {context})")
        return int(context)
    return max(1, min(total, arch.max_position_embeddings))


def build_inference_setup(args: argparse.Namespace, arch: Architecture, gpu: GpuSpec
                          ) -> InferenceSetup:
    """An :class:`InferenceSetup` from the flags, with the ``memory`` defaults."""
    _reject_flags(args, TRAINING_ONLY_DESTS, Task.INFER, "a training flag; inference sizes "
                                                         "sequences with --batch and --context")
    precision = resolve_precision(args, gpu)
    flags = read_layout_flags(args)
    layout = resolve_layout(flags, arch)
    kv = getattr(args, "kv_dtype", None)
    flash = (default_flash_attention(precision) if flags.flash_attention is None
             else flags.flash_attention)
    if getattr(args, "lora_rank", None) is not None:
        raise InputError("", "--lora-rank", "LoRA adapters need --task finetune (got infer)")
    return InferenceSetup(
        precision=precision, layout=layout, batch=getattr(args, "batch", None) or 1,
        context_tokens=resolve_context(args, arch), kv_dtype=Dtype(kv) if kv else None,
        quant=Quant(getattr(args, "quant", None) or "none"), flash_attention=flash,
    )
