"""Default global batch: pre-training's grows with the fleet from Llama 2's 4M tokens
(perf_batch_scaling.csv); fine-tuning's is the median of published recipes."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.catalog.perf_defaults import finetune_recipes, perf_defaults, published_batches
from costsim.domain.performance import FinetuneRecipe, GlobalBatchDefaults, PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import LoraConfig, ParallelLayout, Quant, Task, TrainingSetup
from costsim.perf.batch import default_global_batch, pretrain_batch_tokens
from costsim.perf.train_estimate import LayoutConstraints, estimate_training_run

PRETRAIN = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, layout=ParallelLayout(),
                         seq_len=4096)
FULL_FT = replace(PRETRAIN, task=Task.FINETUNE)
LORA = replace(FULL_FT, lora=LoraConfig(rank=16, targets=("q_proj", "v_proj")))
QLORA = replace(LORA, quant=Quant.NF4)


def test_pretraining_keeps_4m_tokens_on_a_small_fleet(defaults: PerfDefaults) -> None:
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
    # Alpaca, Vicuna, Tulu 2
    assert default_global_batch(FULL_FT, defaults.batch, gpus=8).seqs == 128
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


# --- Pre-training: a batch that grows with the fleet (issue 17 item 3) ---------------------

def _pretrain_seqs(gpus: int, seq_len: int, defaults: PerfDefaults) -> int:
    return default_global_batch(replace(PRETRAIN, seq_len=seq_len), defaults.batch,
                                gpus=gpus).seqs


def test_pretraining_batch_grows_with_the_fleet_as_published_runs_do(
        defaults: PerfDefaults) -> None:
    """Llama 2's 4M tokens up to 4,096 GPUs; Llama 3 405B's 16M (2,048 x 8,192) on 16,384;
    DeepSeek-V3's 15,360 x 4,096 at most."""
    assert _pretrain_seqs(64, 4096, defaults) == 1024
    assert _pretrain_seqs(4096, 4096, defaults) == 1024
    assert _pretrain_seqs(8192, 4096, defaults) == 2048  # 8M tokens
    assert _pretrain_seqs(16384, 8192, defaults) == 2048
    assert _pretrain_seqs(10**6, 4096, defaults) == 15360
    basis = default_global_batch(replace(PRETRAIN, seq_len=8192), defaults.batch,
                                 gpus=16384).basis
    assert "16M tokens = 2048 sequences of 8192" in basis
    assert "perf_batch_scaling.csv" in basis


@settings(max_examples=200, deadline=None)
@given(gpus=st.lists(st.integers(1, 10**7), min_size=2, max_size=2),
       seq_len=st.sampled_from([512, 2048, 4096, 8192, 131072]))
def test_the_default_pretraining_batch_never_shrinks_as_the_fleet_grows(
        gpus: list[int], seq_len: int) -> None:
    batches = perf_defaults().batch
    small, large = sorted(gpus)
    assert pretrain_batch_tokens(small, batches) <= pretrain_batch_tokens(large, batches)
    setup = replace(PRETRAIN, seq_len=seq_len)
    assert (default_global_batch(setup, batches, gpus=small).seqs
            <= default_global_batch(setup, batches, gpus=large).seqs)
    tokens = pretrain_batch_tokens(large, batches)
    assert batches.pretrain_tokens <= tokens <= batches.pretrain_max_tokens


@settings(max_examples=50, deadline=None)
@given(gpus=st.integers(1, 10**7))
def test_fine_tuning_defaults_do_not_depend_on_the_fleet(gpus: int) -> None:
    batches = perf_defaults().batch
    assert default_global_batch(FULL_FT, batches, gpus=gpus).seqs == 128
    assert default_global_batch(LORA, batches, gpus=gpus).seqs == 32
    assert default_global_batch(QLORA, batches, gpus=gpus).seqs == 32


def test_the_rule_is_derived_from_the_published_runs() -> None:
    """Floor, growth and cap come from perf_batch_scaling.csv's rows, not from constants: the
    growth is the lower median of the growth rows' tokens per accelerator."""
    runs = published_batches()
    batches = GlobalBatchDefaults.from_recipes(finetune_recipes(), published=runs)
    growth = sorted(r.global_batch_tokens / r.accelerators for r in runs
                    if r.role == "growth" and r.accelerators)
    assert len(growth) >= 4  # several runs, never one case
    assert batches.pretrain_tokens_per_gpu == growth[(len(growth) - 1) // 2]
    assert batches.pretrain_tokens == next(r.global_batch_tokens for r in runs
                                           if r.role == "floor")
    assert batches.pretrain_max_tokens == max(r.global_batch_tokens for r in runs
                                              if r.role == "cap")
    assert perf_defaults().batch == batches
    # The dataclass's own defaults are the file's figures (PerfDefaults built without it).
    plain = GlobalBatchDefaults()
    assert (plain.pretrain_tokens, plain.pretrain_tokens_per_gpu, plain.pretrain_max_tokens) \
        == (batches.pretrain_tokens, batches.pretrain_tokens_per_gpu, batches.pretrain_max_tokens)
    # A different set of runs gives a different rule.
    doubled = [replace(r, global_batch_tokens=2 * r.global_batch_tokens,
                       global_batch_seqs=None) if r.role == "growth" else r for r in runs]
    assert GlobalBatchDefaults.from_recipes(finetune_recipes(), published=doubled
                                            ).pretrain_tokens_per_gpu == 2 * growth[
        (len(growth) - 1) // 2]


def test_the_rule_stays_within_2x_of_every_published_dense_run(defaults: PerfDefaults) -> None:
    """Each dense run with a published fleet, including those the rule is not fitted on (OPT
    2M on 992 A100, BLOOM 4M on 384, Llama 3 405B's 8K-GPU configuration)."""
    checked = 0
    for run in published_batches():
        if run.kind != "dense" or not run.accelerators:
            continue
        ratio = pretrain_batch_tokens(run.accelerators, defaults.batch) / run.global_batch_tokens
        assert 0.5 <= ratio <= 2.0, (run.run, ratio)
        checked += 1
    assert checked >= 7


def test_published_batches_name_sources_and_dates() -> None:
    runs = published_batches()
    assert {r.role for r in runs} == {"floor", "growth", "cap", "context"}
    for run in runs:
        assert run.source.strip(), run.run
        assert re.fullmatch(r"\d{4}-\d{2}", run.date), run.run
        assert run.kind in {"dense", "moe"}


@pytest.mark.parametrize(("change", "message"), [
    ({"role": "guess"}, "role must be one of"),
    ({"role": "growth", "accelerators": None}, "needs its accelerator count"),
    ({"global_batch_seqs": 1000}, "are not"),
    ({"global_batch_tokens": 0.0}, "must be positive"),
])
def test_a_bad_published_row_is_refused(change: dict[str, object], message: str) -> None:
    row = published_batches()[1]
    with pytest.raises(ValueError, match=message):
        replace(row, **change)  # type: ignore[arg-type]


def test_the_rule_needs_a_floor_growth_and_cap() -> None:
    runs = published_batches()
    for role in ("floor", "growth", "cap"):
        with pytest.raises(ValueError, match="published batches"):
            GlobalBatchDefaults.from_recipes(finetune_recipes(),
                                             published=[r for r in runs if r.role != role])
