"""What a team measured on its own stack (DESIGN §12): serving benchmark points and training
run rates, as read from their files by :mod:`costsim.catalog` readers.

A measured figure wins over the performance model for the case it covers. Each figure costsim
reports says which basis it has (:class:`Basis`) and, when measured, which file and row
(``source``) it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from costsim.domain.architecture import Architecture
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant, ServingEngine, TrainingFramework


class Basis(StrEnum):
    """Where a reported figure comes from (DESIGN §12)."""

    MEASURED = "measured"  # read from a measurement file for this exact case
    PREDICTED_ADJUSTED = "predicted-adjusted"  # the model × a measured/predicted ratio nearby
    PREDICTED = "predicted"  # the performance model alone


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingPoint:
    """One measured serving point (a row of the serving profile CSV, or one benchmark result).

    Token counts are means when the benchmark mixed sizes. ``request_rate_per_s`` is the offered
    rate (None: offline, all requests at once); ``requests_per_s`` / ``output_tokens_per_s`` the
    achieved throughput (at least one is given). Latencies are seconds; a p99 read in place of a
    p95 is kept as the (conservative) p95. ``engine``, ``precision``, ``quant`` None: the defaults;
    ``tp`` None matches any degree. ``source`` names the file and row (and the row's own source).
    """

    model: str
    architecture: Architecture
    gpu: str  # canonical name
    engine: ServingEngine | None = None
    precision: Dtype | None = None
    quant: Quant | None = None
    tp: int | None = None
    prompt_tokens: float
    output_tokens: float
    concurrency: int | None = None
    request_rate_per_s: float | None = None
    requests_per_s: float | None = None
    output_tokens_per_s: float | None = None
    ttft_p50_s: float | None = None
    ttft_p95_s: float | None = None
    tpot_p50_s: float | None = None
    tpot_p95_s: float | None = None
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingFileContext:
    """What a benchmark result file may not say about its own run, given beside it (CLI flags
    ``--model``/``--gpu``/``--tp``/``--engine``, or a scenario's ``measurements.serving`` entry):
    names as the user wrote them, resolved by the reader. A value here fills a missing one and
    overrides what a benchmark JSON guessed (its ``model_id``, SGLang's ``server_info``); in a
    serving CSV it fills empty cells only. ``model`` is a preset or a config.json path."""

    model: str | None = None
    gpu: str | None = None
    tp: int | None = None
    engine: str | None = None
    precision: str | None = None
    quant: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingPoint:
    """One measured steady-state training rate (a row of the training run CSV, or a log read
    by a reader): the whole fleet's ``tokens_per_s``, or a ``step_time_s`` or an ``mfu`` from
    which it follows. Goodput (failures, checkpoints) is not in it: costsim applies it on top.
    """

    model: str
    architecture: Architecture
    gpu: str  # canonical name
    gpus: int
    framework: TrainingFramework | None = None
    precision: Dtype | None = None
    seq_len: int | None = None
    global_batch_tokens: float | None = None
    tokens_per_s: float | None = None
    step_time_s: float | None = None
    mfu: float | None = None
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Measurements:
    """A scenario's measured inputs (``measurements: {serving: [...], training: [...]}``):
    the points read and the files they came from (paths as resolved from the scenario)."""

    serving: tuple[ServingPoint, ...] = ()
    training: tuple[TrainingPoint, ...] = ()
    serving_files: tuple[str, ...] = ()
    training_files: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.serving or self.training)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDetails:
    """What a training log does not say about its run, given beside the file (``calibrate
    train`` / ``estimate train`` flags, or a scenario's ``measurements.training`` mapping).

    They fill what the file leaves out and never replace a value the file states. ``model`` is
    a preset or a config path; ``architecture`` (a scenario's own model) wins over it.
    ``where`` names where they were given, for error messages: empty for command-line flags
    (``--gpu``), else the key path (``measurements.training.0``).
    """

    model: str | None = None
    architecture: Architecture | None = None
    gpu: str | None = None
    gpus: int | None = None
    seq_len: int | None = None
    precision: str | None = None
    framework: str | None = None
    where: str = ""

    def label(self, field: str) -> str:
        """Where ``field`` was given: ``--seq-len`` or ``measurements.training.0.seq_len``."""
        return f"{self.where}.{field}" if self.where else "--" + field.replace("_", "-")
