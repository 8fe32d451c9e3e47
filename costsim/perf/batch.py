"""The global batch a training run gets when the user gives none.

Pre-training grows the batch with the fleet, as published practice does
(``costsim/data/perf_batch_scaling.csv``, docs/performance.md "Default global batch"):

    batch_tokens(G) = min(cap, max(floor, k · G))

with floor = Llama 2's 4M tokens (Touvron et al. 2023), k = the lower median of the tokens per
accelerator of the published runs on thousands of accelerators (Llama 3 405B 1,024 on 16,384
H100; PaLM 683; Gopher 1,465; MT-NLG 1,755: k = 1,024, so the floor holds up to 4,096 GPUs) and
cap = the largest published batch (DeepSeek-V3's 15,360 × 4,096 = 62.9M tokens), rounded to
whole sequences. It depends on the GPU count only, not on the layout: every layout the search
rates keeps the same batch, so the search cannot buy speed by choosing a larger batch, which
would cost tokens past the critical batch size that the estimate does not charge.

Fine-tuning is not pre-training: its published recipes step on tens to a hundred sequences
(Alpaca, Vicuna, Tulu 2: 128; Llama 2-Chat SFT: 64; QLoRA: 16), so full fine-tuning and
LoRA/QLoRA each get the median of their recipes (``costsim/data/perf_finetune_batches.csv``),
counted in sequences whatever their length and whatever the fleet.
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


def pretrain_batch_tokens(gpus: int, batches: GlobalBatchDefaults) -> float:
    """The default pre-training batch of a ``gpus``-GPU fleet, in tokens (module docstring);
    non-decreasing in ``gpus``."""
    grown = batches.pretrain_tokens_per_gpu * max(1, gpus)
    return float(min(batches.pretrain_max_tokens, max(batches.pretrain_tokens, grown)))


def _millions(tokens: float) -> str:
    return f"{tokens / 2**20:.3g}M"


def default_global_batch(setup: TrainingSetup, batches: GlobalBatchDefaults, *,
                         gpus: int) -> DefaultBatch:
    """The default global batch of ``setup``'s task on ``gpus`` GPUs (module docstring)."""
    if setup.task is Task.FINETUNE:
        kind = "lora" if setup.lora is not None else "full"
        seqs = batches.finetune_seqs[kind]
        what = ("QLoRA" if setup.quant is not Quant.NONE else "LoRA") if kind == "lora" \
            else "full fine-tuning"
        return DefaultBatch(seqs=seqs, basis=f"default for {what}: {seqs} sequences, the "
                                              "median of published recipes "
                                              "(perf_finetune_batches.csv)")
    tokens = pretrain_batch_tokens(gpus, batches)
    seqs = max(1, round(tokens / setup.seq_len))
    per_gpu = f"{batches.pretrain_tokens_per_gpu:,.0f} tokens per GPU"
    if tokens >= batches.pretrain_max_tokens:
        why = (f"the largest published batch; the rule gives {per_gpu} above "
               f"{_millions(batches.pretrain_tokens)}")
    elif tokens > batches.pretrain_tokens:
        why = f"{per_gpu} x {gpus} GPUs, as published runs on thousands of GPUs step"
    else:
        why = f"Llama 2's batch; it grows at {per_gpu} on larger fleets"
    return DefaultBatch(seqs=seqs, basis=f"default for pre-training: {_millions(tokens)} "
                                         f"tokens = {seqs} sequences of {setup.seq_len}, "
                                         f"{why} (perf_batch_scaling.csv)")
