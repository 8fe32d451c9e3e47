"""The scenario file's phases: experiments, training and serving (DESIGN §8).

Bounds come from the domain (costsim/domain/phases.py), so a file and a scenario built in code
obey the same limits; the few bounds the domain leaves open are set here with their reason.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from costsim.domain.phases import (
    MAX_ARRIVALS_PER_DAY,
    MAX_GPU_MEMORY_GIB,
    MAX_PHASE_MONTHS,
    MAX_REQUESTS_PER_S,
    MAX_TOKENS,
)
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant, ServingEngine, TrainingFramework
from costsim.scenario.spec_common import DistSpec, Name, Names, Number, Spec, Whole

# The longest context any shipped model family publishes (Llama 4 Scout: 10M tokens).
MAX_SEQ_LEN = 10_000_000
# LoRA ranks in use run 4..256; 4096 is the hidden size of an 8B model (a full-rank adapter).
MAX_LORA_RANK = 4096
# Llama 3 405B's largest global batch was 16M tokens; 1e9 is 60x that.
MAX_GLOBAL_BATCH_TOKENS = 1_000_000_000
TrainTask = Literal["train", "finetune"]


class ModelJobSpec(Spec):
    """An experiment job on a scenario model (its memory and GPU-hours are estimated)."""

    model: Name = Field(description="a key of `models`")
    task: TrainTask = Field("finetune", description="train (every weight) or finetune")
    tokens: Number = Field(ge=1, le=MAX_TOKENS, description="tokens one job processes")
    seq_len: Whole | None = Field(None, ge=1, le=MAX_SEQ_LEN,
                                  description="sequence length (none: the model's default)")
    lora_rank: Whole | None = Field(None, ge=1, le=MAX_LORA_RANK,
                                    description="LoRA rank (finetune only; none: full)")
    quant: Quant = Field(Quant.NONE, description="weight quantization (nf4 with LoRA: QLoRA)")
    precision: Dtype | None = Field(None, description="compute precision (none: bf16)")


class GenericJobSpec(Spec):
    """A job given by what it needs, for non-LLM work."""

    gpu_memory_gib: Number = Field(ge=1e-3, le=MAX_GPU_MEMORY_GIB,
                                   description="GPU memory one job needs on each of its GPUs")
    gpu_hours: DistSpec = Field(description="GPU-hours of one job: a number or a distribution "
                                "(job sizes vary); fixed values in [0.001, 1e6]")
    host_ram_gib: Number | None = Field(None, ge=0, le=MAX_GPU_MEMORY_GIB,
                                        description="host RAM per job (none: the per-job "
                                        "host-RAM rule of docs/simulator.md)")
    gpus: Whole = Field(1, ge=1, le=64, description="GPUs per job")


def _job_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "model" if "model" in value else "generic"
    return "model" if isinstance(value, ModelJobSpec) else "generic"


JobSpec = Annotated[
    Annotated[ModelJobSpec, Tag("model")] | Annotated[GenericJobSpec, Tag("generic")],
    Discriminator(_job_kind),
]


class ExperimentsSpec(Spec):
    """Prototyping: jobs arrive as a Poisson process."""

    name: Name = Field(description="the phase's name (plans refer to it)")
    kind: Literal["experiments"] = Field(description="the phase's kind")
    after: Names = Field(default_factory=list, description="phases that must end first")
    duration_months: Number = Field(ge=0.01, le=MAX_PHASE_MONTHS, description="length")
    arrivals_per_day: Number = Field(ge=1e-3, le=MAX_ARRIVALS_PER_DAY,
                                     description="mean jobs started per day")
    job: JobSpec = Field(description="a model job {model, tokens, ...} or a generic job "
                         "{gpu_memory_gib, gpu_hours, ...}")


class LayoutSpec(Spec):
    """A fixed parallel layout: tp·pp·dp GPUs."""

    tp: Whole = Field(1, ge=1, le=1024, description="tensor-parallel degree")
    pp: Whole = Field(1, ge=1, le=1024, description="pipeline-parallel degree")
    dp: Whole = Field(1, ge=1, le=100_000, description="data-parallel degree")
    zero: Whole = Field(0, ge=0, le=3, description="ZeRO stage (3 = FSDP full shard)")
    sp: bool = Field(False, description="sequence parallelism over the TP group")
    virtual_stages: Whole = Field(1, ge=1, le=128, description="interleaved pipeline chunks "
                                  "per GPU (needs pp > 1)")


class TrainingSpec(Spec):
    """Pre-training or fine-tuning one model on a number of tokens, optionally by a deadline."""

    name: Name = Field(description="the phase's name (plans refer to it)")
    kind: Literal["training"] = Field(description="the phase's kind")
    after: Names = Field(default_factory=list, description="phases that must end first")
    model: Name = Field(description="a key of `models`")
    task: TrainTask = Field("train", description="train (every weight) or finetune")
    tokens: Number = Field(ge=1, le=MAX_TOKENS, description="tokens to process")
    deadline_days: Number | None = Field(None, ge=0.01, le=36_500,
                                         description="days from the phase's start")
    seq_len: Whole | None = Field(None, ge=1, le=MAX_SEQ_LEN,
                                  description="sequence length (none: the model's default)")
    global_batch_tokens: Whole | None = Field(None, ge=1, le=MAX_GLOBAL_BATCH_TOKENS,
                                              description="tokens per optimizer step "
                                              "(none: the performance model's default)")
    lora_rank: Whole | None = Field(None, ge=1, le=MAX_LORA_RANK,
                                    description="LoRA rank (finetune only; none: full)")
    quant: Quant = Field(Quant.NONE, description="weight quantization")
    precision: Dtype | None = Field(None, description="compute precision (none: bf16)")
    framework: TrainingFramework = Field(TrainingFramework.MEGATRON_LM,
                                         description="training code whose efficiency applies")
    framework_year: Whole | None = Field(
        None, ge=2015, le=2100,
        description="year of the training code's release: its era (<= 2022 legacy, "
        "2023 on current; none: inferred from GPU generation and precision)")
    layout: LayoutSpec | None = Field(None, description="fixed layout (none: the fastest "
                                      "that fits)")
    allin_extra_loss: DistSpec | None = Field(None, description="extra wall time beyond "
                                              "hardware faults as a fraction (none: the "
                                              "calibrated distribution); fixed in [0, 10]")


class LoadSpec(Spec):
    """Serving demand: a peak rate shaped by day and week, growing monthly."""

    peak_requests_per_s: Number = Field(ge=1e-6, le=MAX_REQUESTS_PER_S,
                                        description="peak request rate at the start")
    diurnal: bool = Field(True, description="daily cycle (trough at night)")
    weekly: bool = Field(False, description="quieter weekends")
    growth_pct_per_month: Number = Field(0.0, ge=-50, le=100, description="monthly growth")
    trough_fraction: Number | None = Field(None, ge=0, le=1, description="nightly minimum as "
                                           "a share of the peak (none: docs/simulator.md)")
    weekend_fraction: Number | None = Field(None, ge=0, le=1, description="weekend scale "
                                            "(none: docs/simulator.md)")


class RequestSizeSpec(Spec):
    """One request size for every request."""

    prompt_tokens: Whole = Field(ge=1, le=10_000_000, description="input tokens")
    output_tokens: Whole = Field(ge=1, le=10_000_000, description="generated tokens")


class RequestBucketSpec(RequestSizeSpec):
    """A share of the requests with one size (the shares add up to 1)."""

    share: Number = Field(ge=1e-6, le=1, description="share of the requests")


def _requests_kind(value: Any) -> str:
    return "buckets" if isinstance(value, list | tuple) else "one"


RequestsSpec = Annotated[
    Annotated[RequestSizeSpec, Tag("one")]
    | Annotated[list[RequestBucketSpec], Tag("buckets"), Field(min_length=1, max_length=1000)],
    Discriminator(_requests_kind),
]


class SloSpec(Spec):
    """Latency objectives as p95 values."""

    ttft_p95_s: Number | None = Field(None, ge=1e-4, le=3600, description="time to first "
                                      "token, p95 (none: not constrained)")
    tpot_p95_s: Number | None = Field(None, ge=1e-4, le=3600, description="time per output "
                                      "token, p95 (none: not constrained)")


class ServingSpec(Spec):
    """Serving one model under a load profile and an SLO."""

    name: Name = Field(description="the phase's name (plans refer to it)")
    kind: Literal["serving"] = Field(description="the phase's kind")
    after: Names = Field(default_factory=list, description="phases that must end first")
    duration_months: Number = Field(ge=0.01, le=MAX_PHASE_MONTHS, description="length")
    model: Name = Field(description="a key of `models`")
    load: LoadSpec = Field(description="the demand")
    requests: RequestsSpec = Field(description="{prompt_tokens, output_tokens} or a list of "
                                   "buckets [{share, prompt_tokens, output_tokens}, ...]")
    slo: SloSpec = Field(SloSpec(), description="latency objectives")
    precision: Dtype | None = Field(None, description="weights' precision (none: bf16)")
    quant: Quant = Field(Quant.NONE, description="weight quantization")
    kv_dtype: Dtype | None = Field(None, description="KV-cache precision (none: as weights)")
    engine: ServingEngine = Field(ServingEngine.VLLM, description="inference engine")


PhaseSpec = Annotated[ExperimentsSpec | TrainingSpec | ServingSpec, Field(discriminator="kind")]
