"""The valid range of every numeric flag, with why it is where it is (docs/inputs.md).

Each bound lies well beyond what any real model, cluster or workload has, so that it never
refuses a real question, yet close enough that no product of flags overflows a float64 or the
int64 arrays of ``memory --grid``: a number past it is a typo (``1e30``) or a fuzzer, and a
result computed from it would be meaningless (``$inf``) or wrong (an overflow).

Imported when the parser is built, so it stays free of heavy imports.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from costsim.errors import InputError


class FlagRange(NamedTuple):
    """A closed range [minimum, maximum] (``minimum`` itself excluded when ``open_minimum``)."""

    minimum: float
    maximum: float
    integer: bool
    why: str
    open_minimum: bool = False

    def describe(self) -> str:
        """The range as the help and the errors state it: ``1..1,000,000``, ``from 1e-6 to
        1e7``, ``above 0, up to 1e16``."""
        if self.integer:
            return f"{self.minimum:,.0f}..{self.maximum:,.0f}"
        if self.open_minimum:
            return f"above {_number(self.minimum)}, up to {_number(self.maximum)}"
        return f"from {_number(self.minimum)} to {_number(self.maximum)}"

    def check(self, flag: str, text: str) -> float:
        """The number ``text`` spells, checked against the range (InputError naming ``flag``)."""
        rule = (f"a whole number in {self.describe()}" if self.integer
                else f"a finite number {self.describe()}")
        try:
            value: float = int(str(text).strip()) if self.integer else float(text)
        except (ValueError, OverflowError):
            raise InputError("", flag, f"must be {rule} (got {str(text)!r})") from None
        too_low = value < self.minimum or (self.open_minimum and value == self.minimum)
        if not math.isfinite(value) or too_low or value > self.maximum:
            raise InputError("", flag, f"must be {rule} (got {text})")
        return value


def _number(value: float) -> str:
    """``1e-06`` → ``1e-6``, ``1e+16`` → ``1e16``; plain numbers as :g writes them."""
    return f"{value:g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


_GPUS = ("xAI's Colossus, the largest published cluster, has about 200,000 GPUs; "
         "10^6 is five times that")
_TOKENS_PER_SEQ = ("10^8 tokens is ten times the longest published context (Llama 4 Scout, "
                   "10M tokens); the model's own maximum positions apply too")

# Flag → its range. ``tests/cli/test_help.py`` checks that each flag's help states it and that
# docs/inputs.md lists it.
FLAG_RANGES: dict[str, FlagRange] = {
    "--gpus": FlagRange(1, 1_000_000, True, _GPUS),
    "--dp": FlagRange(1, 1_000_000, True, _GPUS),
    "--tp": FlagRange(1, 1_000_000, True, _GPUS + "; tp must also divide the attention heads"),
    "--pp": FlagRange(1, 10_000, True, "a stage holds at least one layer, and no model has "
                                       "10,000 layers (Llama 3.1 405B: 126)"),
    "--framework-year": FlagRange(2015, 2100, True, "the release year of the training code "
                                                    "(transformer training began in 2017)"),
    "--virtual-stages": FlagRange(1, 10_000, True, "a virtual stage holds at least one layer "
                                                   "(Llama 3 405B ran 126 layers)"),
    "--zero": FlagRange(0, 3, True, "the ZeRO stages (Rajbhandari et al. 2020): 3 = FSDP"),
    "--micro-batch": FlagRange(1, 100_000, True, "sequences per GPU per step; published runs "
                                                 "use 1 to a few dozen"),
    "--grad-accum": FlagRange(1, 1_000_000, True, "steps per optimizer update; a global batch "
                                                  "of 10^8 sequences needs fewer on 100+ GPUs"),
    "--seq-len": FlagRange(1, 100_000_000, True, _TOKENS_PER_SEQ),
    "--context": FlagRange(1, 100_000_000, True, _TOKENS_PER_SEQ),
    "--prompt-tokens": FlagRange(0, 100_000_000, True, _TOKENS_PER_SEQ),
    "--output-tokens": FlagRange(0, 100_000_000, True, _TOKENS_PER_SEQ),
    "--batch": FlagRange(1, 1_000_000, True, "concurrent sequences on one replica; vLLM "
                                             "schedules at most 256-1,024 by default "
                                             "(max_num_seqs)"),
    "--lora-rank": FlagRange(1, 100_000, True, "published recipes use ranks 1-256 (Hu et al. "
                                               "2021; QLoRA 64); the rank must also fit the "
                                               "adapted layer"),
    "--global-batch": FlagRange(1, 100_000_000, True, "sequences per step; Llama 3 405B used "
                                                      "2,048 sequences of 8,192 tokens"),
    "--global-batch-tokens": FlagRange(0, 1e10, False, "Llama 3 405B used 16M tokens per step "
                                                       "(Meta 2024); 10^10 is 600x that",
                                       open_minimum=True),
    "--tokens": FlagRange(0, 1e16, False, "Llama 3 trained on about 15T tokens (Meta 2024); "
                                          "10^16 is over 600x that", open_minimum=True),
    "--price-usd-per-gpu-hour": FlagRange(0, 1_000, False, "on-demand GPU-hours cost $0.14-$23 "
                                                           "in the price book; 0 = already "
                                                           "paid for"),
    "--rate": FlagRange(1e-6, 1e7, False, "10^-6 req/s is one request in 11.6 days; 10^7 req/s "
                                          "is 300x ChatGPT's reported 2.5 billion prompts a "
                                          "day (~29,000 req/s, 2025)"),
    "--slo-ttft-s": FlagRange(1e-4, 3_600, False, "no GPU returns a first token in 0.1 ms "
                                                  "(a forward pass is hundreds of kernels); an "
                                                  "hour is not interactive"),
    "--target-utilization": FlagRange(0, 1, False, "a share of the replica's maximum request "
                                                   "rate: 1 runs replicas flat out",
                                       open_minimum=True),
    "--slo-tpot-s": FlagRange(1e-4, 3_600, False, "0.1 ms per token is 10,000 tokens/s per "
                                                  "sequence, beyond any GPU's decode"),
    "--replications": FlagRange(1, 100_000, True, "Monte Carlo error falls as 1/sqrt(N): 1,000 "
                                                  "replications put the mean within ~3 % of a "
                                                  "standard deviation; 100,000 is 100x that"),
    "--seed": FlagRange(0, 2**32 - 1, True, "a label for the random streams, not a quantity: "
                                            "any 32-bit unsigned value (numpy's classic seed "
                                            "range)"),
    "--workers": FlagRange(1, 64, True, "worker processes for the replications; results are "
                                        "the same for any count, and past the machine's cores "
                                        "more only adds start-up time"),
    "--top": FlagRange(1, 1_000, True, "finalists the optimizer simulates after the analytic "
                                       "screen, each at --replications; 1,000 finalists of "
                                       "200 replications is hours on a laptop"),
    "--max-deadline-risk": FlagRange(0, 1, False, "a probability: 0 = no replication may miss "
                                                  "a deadline, 1 = no limit"),
    "--max-budget-risk": FlagRange(0, 1, False, "a probability: 0 = no replication may cost "
                                                "more than budget_usd, 1 = no limit"),
    "--min-slo-attainment": FlagRange(0, 1, False, "a share of requests served within the "
                                                   "SLO: 1 = every request, 0 = no limit"),
}


def describe(flag: str) -> str:
    """``flag``'s range for its help text."""
    return FLAG_RANGES[flag].describe()


# Names the help lists as valid values. The data files are the truth (reading them would slow
# every ``--help``); tests/cli/test_help.py checks these lists against them.
NETWORK_NAMES = ("ib-hdr-1600", "ib-ndr-3200", "roce-3200", "efa-3200", "efa-400", "ib-edr-400",
                 "eth-100")
CLOUD_NAMES = ("aws", "azure", "fluidstack", "gcp", "hyperbolic", "hyperstack", "ibm", "lambda",
               "mithril", "nebius", "owned", "paperspace", "seeweb", "vast", "verda")

# The default pre-training batch rule as ``estimate train --help`` states it (batch tokens =
# min(cap, max(floor, tokens per GPU x GPUs))). costsim/data/perf_batch_scaling.csv is the truth
# (reading it would slow every ``--help``); tests/cli/test_help.py checks these figures against
# the rule the catalog derives from it.
PRETRAIN_BATCH_FLOOR_TOKENS = 4 * 2**20
PRETRAIN_BATCH_TOKENS_PER_GPU = 1024
PRETRAIN_BATCH_MAX_TOKENS = 15360 * 4096
DEFAULT_BATCH_HELP = (
    f"pre-training grows the batch with the fleet as published runs do: "
    f"{PRETRAIN_BATCH_FLOOR_TOKENS / 2**20:.0f}M tokens (Llama 2) up to "
    f"{PRETRAIN_BATCH_FLOOR_TOKENS // PRETRAIN_BATCH_TOKENS_PER_GPU:,} GPUs, then "
    f"{PRETRAIN_BATCH_TOKENS_PER_GPU:,} tokens per GPU (the lower median of Llama 3 405B, PaLM, "
    f"Gopher and MT-NLG on 2,240-16,384 accelerators; Llama 3 405B: 16M on 16,384 H100), at "
    f"most {PRETRAIN_BATCH_MAX_TOKENS / 2**20:.0f}M (DeepSeek-V3: 15,360 x 4,096, the largest "
    "published), in "
    "whole sequences; fine-tuning: the median of published recipes, 128 sequences full, 32 "
    "LoRA/QLoRA; sources in costsim/data/perf_batch_scaling.csv")
