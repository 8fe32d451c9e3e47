"""Shared flags (costsim/cli/flags.py, layout_args.py): defaults and validation messages."""

from __future__ import annotations

import argparse

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.cli.flags import CONVERTERS, add_all_memory_args
from costsim.cli.layout_args import (
    build_inference_setup,
    build_training_setup,
    resolve_task,
)
from costsim.domain.precision import Dtype
from costsim.domain.workload import Task
from costsim.errors import InputError

LLAMA = load_preset("llama-2-7b").architecture


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_all_memory_args(parser)
    return parser.parse_args(list(argv))


def test_memory_defaults() -> None:
    args = parse("--model", "llama-2-7b", "--gpus", "8", "--tp", "2")
    setup = build_training_setup(args, LLAMA, get_gpu("H100"))
    assert setup.layout.dp == 4
    assert setup.layout.zero == 0
    assert setup.precision is Dtype.BF16
    assert setup.seq_len == 4096
    assert setup.flash_attention
    assert setup.micro_batch == 1
    assert setup.grad_accum == 1
    v100 = build_training_setup(parse("--model", "x"), LLAMA, get_gpu("V100"))
    assert v100.precision is Dtype.FP16
    fp32 = build_training_setup(parse("--precision", "fp32"), LLAMA, get_gpu("V100"))
    assert not fp32.flash_attention


def test_lora_rank_implies_finetune_with_default_targets() -> None:
    args = parse("--lora-rank", "8")
    assert resolve_task(args) is Task.FINETUNE
    setup = build_training_setup(args, LLAMA, get_gpu("H100"))
    assert setup.lora is not None
    assert setup.lora.targets == ("q_proj", "v_proj")


def test_inference_context_default() -> None:
    setup = build_inference_setup(parse("--prompt-tokens", "1000"), LLAMA, get_gpu("H100"))
    assert setup.context_tokens == 1256
    capped = build_inference_setup(parse("--prompt-tokens", "9000"), LLAMA, get_gpu("H100"))
    assert capped.context_tokens == LLAMA.max_position_embeddings


@pytest.mark.parametrize(("argv", "flag"), [
    (["--gpus", "6", "--tp", "4"], "--gpus"),
    (["--gpus", "8", "--dp", "3"], "--gpus"),
    (["--tp", "5"], "--tp"),
    (["--task", "train", "--lora-rank", "4"], "--lora-rank"),
    (["--lora-targets", "q_proj"], "--lora-targets"),
])
def test_errors_name_the_flag(argv: list[str], flag: str) -> None:
    with pytest.raises(InputError) as info:
        build_training_setup(parse(*argv), LLAMA, get_gpu("H100"))
    assert str(info.value).startswith(flag)


def test_zero_stage_is_checked_when_parsed() -> None:
    with pytest.raises(InputError, match=r"--zero: must be a whole number in 0\.\.3 \(got 4\)"):
        CONVERTERS["zero"]("4")
