"""The phases of a project: experiments (prototyping), training or fine-tuning, serving.

Each phase starts at the scenario's start, or when every phase it comes ``after`` has ended
Experiments and serving last a given number of months; a training phase lasts until
its tokens are processed, which the simulator decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from costsim.domain.precision import Dtype
from costsim.domain.uncertainty import Distribution, Fixed
from costsim.domain.workload import ParallelLayout, Quant, ServingEngine, Task, TrainingFramework
from costsim.errors import ScenarioError

# Bounds for what any real project has; a value outside is a typo.
MAX_PHASE_MONTHS = 120
MAX_TOKENS = 1e15  # 10^15 tokens: ~60x Llama 3's 15T pre-training set
MAX_REQUESTS_PER_S = 1e6
MAX_ARRIVALS_PER_DAY = 1e5
MAX_JOB_GPU_HOURS = 1e6
MAX_GPU_MEMORY_GIB = 1e4


class PhaseKind(StrEnum):
    """What a phase does with GPUs."""

    EXPERIMENTS = "experiments"
    TRAINING = "training"
    SERVING = "serving"


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelJob:
    """An experiment job on a scenario model: its memory comes from the memory engine, its
    GPU-hours from the performance model for ``tokens``."""

    model: str
    task: Task = Task.FINETUNE
    tokens: float
    seq_len: int | None = None
    lora_rank: int | None = None
    quant: Quant = Quant.NONE
    precision: Dtype | None = None

    def __post_init__(self) -> None:
        _in_range("job.tokens", self.tokens, 1, MAX_TOKENS)
        if self.task is Task.INFER:
            raise ScenarioError("", "job.task", "an experiment job trains or fine-tunes; "
                                "got 'infer'")
        if self.lora_rank is not None and self.task is not Task.FINETUNE:
            raise ScenarioError("", "job.lora_rank", "LoRA needs task 'finetune'")


@dataclass(frozen=True, slots=True, kw_only=True)
class GenericJob:
    """A job given by what it needs, for non-LLM work: GPU memory per GPU, GPU-hours (a
    distribution, so job sizes can vary), host RAM and GPUs per job."""

    gpu_memory_gib: float
    gpu_hours: Distribution
    host_ram_gib: float | None = None  # None: the documented per-job host-RAM rule applies
    gpus: int = 1

    def __post_init__(self) -> None:
        _in_range("job.gpu_memory_gib", self.gpu_memory_gib, 1e-3, MAX_GPU_MEMORY_GIB)
        if isinstance(self.gpu_hours, Fixed):
            _in_range("job.gpu_hours", self.gpu_hours.value, 1e-3, MAX_JOB_GPU_HOURS)
        if self.host_ram_gib is not None:
            _in_range("job.host_ram_gib", self.host_ram_gib, 0, MAX_GPU_MEMORY_GIB)
        _in_range("job.gpus", self.gpus, 1, 64)


Job = ModelJob | GenericJob


@dataclass(frozen=True, slots=True, kw_only=True)
class ExperimentsPhase:
    """Prototyping: jobs arrive as a Poisson process at ``arrivals_per_day``."""

    name: str
    after: tuple[str, ...] = ()
    duration_months: float
    arrivals_per_day: float
    job: Job

    kind: ClassVar[PhaseKind] = PhaseKind.EXPERIMENTS

    def __post_init__(self) -> None:
        _name(self.name)
        _in_range(f"phases.{self.name}.duration_months", self.duration_months, 0.01,
                  MAX_PHASE_MONTHS)
        _in_range(f"phases.{self.name}.arrivals_per_day", self.arrivals_per_day, 1e-3,
                  MAX_ARRIVALS_PER_DAY)

    @property
    def models(self) -> tuple[str, ...]:
        """Scenario models this phase uses."""
        return (self.job.model,) if isinstance(self.job, ModelJob) else ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingPhase:
    """Pre-training or fine-tuning one model on ``tokens`` tokens, optionally by a deadline.

    ``layout`` fixes the parallel layout (else the performance model's fastest fitting one);
    ``framework`` names the training code whose published efficiency applies and
    ``framework_year`` (optional) its release year, which sets the stack's era;
    ``allin_extra_loss`` replaces the calibrated distribution of the extra wall time x a real
    run loses beyond hardware faults (software faults, rollbacks, idle allocation; all-in time
    = hardware all-in time × (1 + x); docs/performance.md "What real runs lose").
    """

    name: str
    after: tuple[str, ...] = ()
    model: str
    task: Task = Task.TRAIN
    tokens: float
    deadline_days: float | None = None
    seq_len: int | None = None
    global_batch_tokens: int | None = None
    lora_rank: int | None = None
    quant: Quant = Quant.NONE
    precision: Dtype | None = None
    framework: TrainingFramework = TrainingFramework.MEGATRON_LM
    # The training code's release year (None: its era is inferred; docs/performance.md "Stack").
    framework_year: int | None = None
    layout: ParallelLayout | None = None
    allin_extra_loss: Distribution | None = None

    kind: ClassVar[PhaseKind] = PhaseKind.TRAINING

    def __post_init__(self) -> None:
        _name(self.name)
        where = f"phases.{self.name}"
        _in_range(f"{where}.tokens", self.tokens, 1, MAX_TOKENS)
        if self.task is Task.INFER:
            raise ScenarioError("", f"{where}.task", "a training phase trains or fine-tunes; "
                                "got 'infer'")
        if self.deadline_days is not None:
            _in_range(f"{where}.deadline_days", self.deadline_days, 0.01, 36_500)
        if self.framework_year is not None:
            _in_range(f"{where}.framework_year", self.framework_year, 2015, 2100)
        if isinstance(self.allin_extra_loss, Fixed):
            _in_range(f"{where}.allin_extra_loss", self.allin_extra_loss.value, 0, 10)
        if self.lora_rank is not None and self.task is not Task.FINETUNE:
            raise ScenarioError("", f"{where}.lora_rank", "LoRA needs task 'finetune'")

    @property
    def models(self) -> tuple[str, ...]:
        """Scenario models this phase uses."""
        return (self.model,)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadProfile:
    """Serving demand over the calendar: a peak rate shaped by day and week, growing monthly.

    ``trough_fraction`` is the nightly minimum as a share of the peak; ``weekend_fraction`` scales
    Saturdays and Sundays. Defaults are documented in docs/simulator.md with their sources.
    """

    peak_requests_per_s: float
    diurnal: bool = True
    weekly: bool = False
    growth_pct_per_month: float = 0.0
    trough_fraction: float | None = None
    weekend_fraction: float | None = None

    def __post_init__(self) -> None:
        _in_range("load.peak_requests_per_s", self.peak_requests_per_s, 1e-6, MAX_REQUESTS_PER_S)
        _in_range("load.growth_pct_per_month", self.growth_pct_per_month, -50, 100)
        for key in ("trough_fraction", "weekend_fraction"):
            value = getattr(self, key)
            if value is not None:
                _in_range(f"load.{key}", value, 0, 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestBucket:
    """A share of the requests with one prompt and output size."""

    share: float
    prompt_tokens: int
    output_tokens: int

    def __post_init__(self) -> None:
        _in_range("requests.share", self.share, 1e-6, 1)
        _in_range("requests.prompt_tokens", self.prompt_tokens, 1, 10_000_000)
        _in_range("requests.output_tokens", self.output_tokens, 1, 10_000_000)


@dataclass(frozen=True, slots=True, kw_only=True)
class Slo:
    """Latency objectives as p95 values (None: not constrained)."""

    ttft_p95_s: float | None = None
    tpot_p95_s: float | None = None

    def __post_init__(self) -> None:
        for key in ("ttft_p95_s", "tpot_p95_s"):
            value = getattr(self, key)
            if value is not None:
                _in_range(f"slo.{key}", value, 1e-4, 3600)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingPhase:
    """Serving one model for ``duration_months`` under a load profile and an SLO."""

    name: str
    after: tuple[str, ...] = ()
    duration_months: float
    model: str
    load: LoadProfile
    requests: tuple[RequestBucket, ...]
    slo: Slo = Slo()
    precision: Dtype | None = None
    quant: Quant = Quant.NONE
    kv_dtype: Dtype | None = None
    engine: ServingEngine = ServingEngine.VLLM

    kind: ClassVar[PhaseKind] = PhaseKind.SERVING

    def __post_init__(self) -> None:
        _name(self.name)
        where = f"phases.{self.name}"
        _in_range(f"{where}.duration_months", self.duration_months, 0.01, MAX_PHASE_MONTHS)
        if not self.requests:
            raise ScenarioError("", f"{where}.requests", "needs at least one request size")
        total = math.fsum(b.share for b in self.requests)
        if abs(total - 1) > 1e-6:
            raise ScenarioError("", f"{where}.requests", f"shares must add up to 1, got {total:g}")

    @property
    def models(self) -> tuple[str, ...]:
        """Scenario models this phase uses."""
        return (self.model,)


Phase = ExperimentsPhase | TrainingPhase | ServingPhase


def _name(name: str) -> None:
    if not name or not name.strip():
        raise ScenarioError("", "phases.name", "a phase needs a non-empty name")


def _in_range(key: str, value: float, low: float, high: float) -> None:
    """One rule for every bounded number: finite and within [low, high]."""
    if not math.isfinite(value) or not low <= value <= high:
        raise ScenarioError("", key, f"must be a finite number in [{low:g}, {high:g}], "
                            f"got {value!r}")
