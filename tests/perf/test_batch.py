"""Default global batch: pre-training's 4M tokens, fine-tuning's published recipes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.catalog.perf_defaults import finetune_recipes
from costsim.domain.performance import FinetuneRecipe, GlobalBatchDefaults, PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import LoraConfig, ParallelLayout, Quant, Task, TrainingSetup
from costsim.perf.batch import default_global_batch
from costsim.perf.train_estimate import LayoutConstraints, estimate_training_run

PRETRAIN = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout(),
                         seq_len=4096)
FULL_FT = replace(PRETRAIN, task=Task.FINETUNE)
LORA = replace(FULL_FT, lora=LoraConfig(rank=16, targets=("q_proj", "v_proj")))
QLORA = replace(LORA, quant=Quant.NF4)


def test_pretraining_keeps_4m_tokens(defaults: PerfDefaults) -> None:
    batch = default_global_batch(PRETRAIN, defaults.batch, gpus=8)
    assert batch.seqs == 1024  # 4 x 2^20 / 4096
    assert "pre-training" in batch.basis


def test_fine_tuning_uses_the_median_of_published_recipes(defaults: PerfDefaults) -> None:
    recipes = finetune_recipes()
    for setup, kind in ((FULL_FT, "full"), (LORA, "lora"), (QLORA, "lora")):
        published = sorted(r.global_batch_seqs for r in recipes if r.kind == kind)
        batch = default_global_batch(setup, defaults.batch, gpus=8)
        assert batch.seqs in published
        assert published[0] <= batch.seqs <= published[-1]
        # In sequences, whatever their length: a recipe states sequences per step.
        assert default_global_batch(replace(setup, seq_len=512), defaults.batch, gpus=8) == batch
    assert default_global_batch(FULL_FT, defaults.batch, gpus=8).seqs == 128  # Alpaca, Vicuna, Tulu 2
    assert default_global_batch(LORA, defaults.batch, gpus=8).seqs == 32
    assert "QLoRA" in default_global_batch(QLORA, defaults.batch, gpus=8).basis


def test_recipes_name_their_sources_and_kinds() -> None:
    recipes = finetune_recipes()
    assert {r.kind for r in recipes} == {"full", "lora"}
    assert all(r.source.strip() and r.global_batch_seqs >= 1 for r in recipes)
    with pytest.raises(ValueError, match="kind"):
        GlobalBatchDefaults.from_recipes([FinetuneRecipe(kind="rlhf", recipe="x",
                                                         global_batch_seqs=8, seq_len=None,
                                                         source="s")])
    with pytest.raises(ValueError, match="no fine-tuning recipe"):
        GlobalBatchDefaults.from_recipes([r for r in recipes if r.kind == "full"])


def test_70b_qlora_on_one_h100_steps_in_minutes_not_an_hour(defaults: PerfDefaults) -> None:
    """Issue 8: 70B QLoRA got pre-training's 4M-token batch: grad-accum 256, 87-minute steps."""
    model = load_preset("llama-3-70b").architecture
    est = estimate_training_run(model, get_gpu("H100"), 1, 1e8, QLORA, LayoutConstraints(),
                                defaults=defaults, price_usd_per_gpu_hour=1.0)
    assert est.setup.global_batch == defaults.batch.finetune_seqs["lora"]
    assert est.setup.grad_accum <= 32
    assert est.step.step_time_s < 5 * 60
    assert est.global_batch_basis.startswith("default for QLoRA")


def test_a_given_batch_is_reported_as_given(defaults: PerfDefaults) -> None:
    model = load_preset("llama-3-8b").architecture
    est = estimate_training_run(model, get_gpu("H100"), 8, 1e8, LORA,
                                LayoutConstraints(global_batch_seqs=64), defaults=defaults,
                                price_usd_per_gpu_hour=1.0)
    assert est.setup.global_batch == 64
    assert est.global_batch_basis == "given"


def test_lora_checkpoints_save_only_the_adapters(defaults: PerfDefaults) -> None:
    model = load_preset("llama-3-8b").architecture
    runs = [estimate_training_run(model, get_gpu("H100"), 8, 1e9, setup,
                                  LayoutConstraints(global_batch_seqs=32), defaults=defaults,
                                  price_usd_per_gpu_hour=1.0) for setup in (FULL_FT, LORA)]
    full, lora = (run.goodput.checkpoint_s for run in runs)
    fixed = defaults.goodput.checkpoint_fixed_s
    assert lora - fixed < 0.01 * (full - fixed)
