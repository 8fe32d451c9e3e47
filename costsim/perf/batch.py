"""The global batch a training run gets when the user gives none.

Pre-training uses Llama 2's 4M tokens per step (Touvron et al. 2023), rounded to whole
sequences. Fine-tuning is not pre-training: its published recipes step on tens to a hundred
sequences (Alpaca, Vicuna, Tulu 2: 128; Llama 2-Chat SFT: 64; QLoRA: 16), so full fine-tuning
and LoRA/QLoRA each get the median of their recipes (``costsim/data/perf_finetune_batches.csv``),
counted in sequences whatever their length.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.domain.performance import GlobalBatchDefaults
from costsim.domain.workload import Quant, Task, TrainingSetup


@dataclass(frozen=True, slots=True, kw_only=True)
class DefaultBatch:
    """A default global batch in sequences and the words that say where it comes from."""

    seqs: int
    basis: str


def default_global_batch(setup: TrainingSetup, batches: GlobalBatchDefaults) -> DefaultBatch:
    """The default global batch of ``setup``'s task (see the module docstring)."""
    if setup.task is Task.FINETUNE:
        kind = "lora" if setup.lora is not None else "full"
        seqs = batches.finetune_seqs[kind]
        what = ("QLoRA" if setup.quant is not Quant.NONE else "LoRA") if kind == "lora" \
            else "full fine-tuning"
        return DefaultBatch(seqs=seqs, basis=f"default for {what}: {seqs} sequences, the "
                                              "median of published recipes "
                                              "(perf_finetune_batches.csv)")
    seqs = max(1, round(batches.pretrain_tokens / setup.seq_len))
    return DefaultBatch(seqs=seqs, basis=f"default for pre-training: "
                                         f"{batches.pretrain_tokens / 2**20:g}M tokens "
                                         f"= {seqs} sequences of {setup.seq_len}")
