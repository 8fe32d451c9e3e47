"""Assumptions of the performance model: efficiencies, networks, failures, serving engines.

Every number here comes from a published source recorded next to it in the shipped CSV files
(``costsim/data/perf_*.csv``, loaded by :mod:`costsim.catalog.perf_defaults`). The engines in
:mod:`costsim.perf` take these objects as arguments; nothing is read from globals.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from costsim.domain.precision import Dtype
from costsim.domain.workload import ServingEngine, TrainingFramework


@dataclass(frozen=True, slots=True, kw_only=True)
class Interconnect:
    """A named network between nodes: per-node bandwidth in one direction.

    ``node_bandwidth_gbit_per_s`` is the sum over the node's NICs (e.g. 8 × 400 Gb/s = 3200);
    ``efficiency`` is the fraction NCCL collectives achieve of it.
    """

    name: str
    node_bandwidth_gbit_per_s: float
    gpus_per_node: int
    efficiency: float
    source: str = ""

    def __post_init__(self) -> None:
        if self.node_bandwidth_gbit_per_s <= 0:
            raise ValueError(f"network {self.name}: bandwidth must be > 0")
        if self.gpus_per_node < 1:
            raise ValueError(f"network {self.name}: gpus_per_node must be >= 1")
        if not 0 < self.efficiency <= 1:
            raise ValueError(f"network {self.name}: efficiency must be in (0, 1]")

    @property
    def bytes_per_s_per_gpu(self) -> float:
        """Achieved bytes/s per GPU in one direction (the node's NICs shared evenly)."""
        return self.node_bandwidth_gbit_per_s * 1e9 / 8 * self.efficiency / self.gpus_per_node


LEGACY, CURRENT = "legacy", "current"


@dataclass(frozen=True, slots=True, kw_only=True)
class StackFactors:
    """Efficiency of the training stack beyond GPU generation and framework (issue 18 item 2):
    its era, its precision and the GPU's memory size, each a factor on η∞ measured on
    published runs (``costsim/data/perf_stack_factors.csv``; docs/performance.md "Stack").

    The field defaults are neutral (every factor 1): the catalog loads the published values.
    """

    legacy_last_year: int = 2022
    legacy_factor: float = 1.0
    precision_factor: Mapping[Dtype, float] = field(default_factory=dict)
    memory_small_gib: float = 40.0
    memory_full_gib: float = 80.0
    memory_small_factor: float = 1.0
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        values = [self.legacy_factor, self.memory_small_factor, *self.precision_factor.values()]
        if not all(0 < value <= 1 for value in values):
            raise ValueError(f"stack factors must be in (0, 1] (got {values})")
        if not 0 < self.memory_small_gib < self.memory_full_gib:
            raise ValueError("memory_small_gib must be in (0, memory_full_gib)")

    def era(self, generation: str, precision: Dtype, framework_year: int | None) -> str:
        """The era of the stack: the framework year when given, else inferred: Volta code is
        legacy (no current-era Volta stack is published), fp16 on Ampere is a 2021-22 stack
        (bf16 replaced it there), everything else current."""
        if framework_year is not None:
            return LEGACY if framework_year <= self.legacy_last_year else CURRENT
        if generation == "volta" or (generation == "ampere" and precision is Dtype.FP16):
            return LEGACY
        return CURRENT

    def memory_factor(self, memory_gib: float) -> float:
        """1 at and above the calibration's memory, ``memory_small_factor`` at and below the
        small size, log-linear in between."""
        if memory_gib >= self.memory_full_gib:
            return 1.0
        if memory_gib <= self.memory_small_gib:
            return self.memory_small_factor
        share = (math.log(self.memory_full_gib / memory_gib)
                 / math.log(self.memory_full_gib / self.memory_small_gib))
        return float(self.memory_small_factor ** share)

    def factor(self, *, generation: str, precision: Dtype, memory_gib: float,
               framework_year: int | None = None) -> float:
        """The product of the era, precision and memory factors for one GPU and stack."""
        era = self.legacy_factor if self.era(generation, precision,
                                             framework_year) == LEGACY else 1.0
        return era * self.precision_factor.get(precision, 1.0) * self.memory_factor(memory_gib)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingAssumptions:
    """Defaults of the training step-time model (see docs/performance.md).

    ``compute_efficiency_by_generation``: achieved fraction of dense peak of the compute part of
    a training step for very wide layers, per GPU generation (``GpuSpec.generation``).
    ``width_half_point``: hidden size at which layer efficiency halves, w(h) = h/(h + h½).
    ``gemm_half_tokens_by_generation``: tokens per GEMM (micro-batch × sequence length, the M
    dimension) at which GEMM efficiency halves, g(M) = M/(M + M½), per GPU generation.
    ``sync_overhead_per_node_doubling``: straggler / synchronisation loss per doubling of nodes.
    ``tp_overlap_by_generation``: share of TP collectives hidden behind GEMMs.
    """

    compute_efficiency_by_generation: Mapping[str, float]
    default_compute_efficiency: float
    tp_overlap_by_generation: Mapping[str, float]
    width_half_point: float
    sync_overhead_per_node_doubling: float
    nvlink_efficiency: float
    pcie_efficiency: float
    backward_share_of_compute: float = 2.0 / 3.0
    gemm_half_tokens_by_generation: Mapping[str, float] = field(default_factory=dict)
    default_gemm_half_tokens: float = 0.0
    # Compute efficiency of each training framework relative to the Megatron-class calibration
    # (1.0 = the calibration; see framework_efficiencies).
    framework_efficiency: Mapping[TrainingFramework, float] = field(default_factory=dict)
    # QLoRA: achieved share of HBM bandwidth of the dequantization kernels, and the bytes each
    # frozen quantized weight moves per dequantization (see docs/performance.md §1).
    hbm_efficiency: float = 0.75
    dequant_bytes_per_weight: float = 4.5
    # Era, precision and memory-size factors on η∞ (neutral unless loaded from the catalog).
    stack: StackFactors = field(default_factory=StackFactors)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def framework_factor(self, framework: TrainingFramework) -> float:
        """Multiplier of η∞ for ``framework`` (1.0 for the Megatron-class calibration)."""
        return self.framework_efficiency.get(framework, 1.0)

    def gemm_half_tokens(self, generation: str) -> float:
        """M½ of a GPU generation: the tokens per GEMM at which its GEMMs reach half their
        large-shape rate (the documented default for generations without a profile)."""
        return self.gemm_half_tokens_by_generation.get(generation,
                                                       self.default_gemm_half_tokens)

    def tp_overlap(self, generation: str) -> float:
        """Share of tensor-parallel collectives hidden behind GEMMs by that generation's
        frameworks (0 when unknown)."""
        return self.tp_overlap_by_generation.get(generation, 0.0)

    def compute_efficiency(self, generation: str) -> float:
        """η∞ for a GPU generation, or the documented default for generations without data."""
        return self.compute_efficiency_by_generation.get(
            generation, self.default_compute_efficiency
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameworkComparison:
    """A framework's own published utilization beside a Megatron-class run (Megatron-LM, NeMo
    or llm-foundry, the code the model is calibrated on) of the same size class on the same GPU
    generation, both on one FLOP basis; ``ratio`` is how close the framework gets."""

    framework: TrainingFramework
    run: str
    utilization: float
    reference_run: str
    reference_utilization: float
    source: str
    date: str

    def __post_init__(self) -> None:
        for key in ("utilization", "reference_utilization"):
            value = getattr(self, key)
            if not 0 < value <= 1:
                raise ValueError(f"framework comparison {self.run}: {key} must be in (0, 1] "
                                 f"(got {value})")

    @property
    def ratio(self) -> float:
        """Framework utilization / reference utilization."""
        return self.utilization / self.reference_utilization


def framework_efficiencies(comparisons: Iterable[FrameworkComparison]
                           ) -> dict[TrainingFramework, float]:
    """Per framework, the geometric mean of its published-utilization ratios to Megatron-class runs;
    Megatron-LM itself is 1.0 (it is the calibration). The geometric mean treats a framework
    10 % above and 10 % below the reference alike."""
    ratios: dict[TrainingFramework, list[float]] = {}
    for row in comparisons:
        ratios.setdefault(row.framework, []).append(row.ratio)
    factors = {fw: math.exp(statistics.fmean(math.log(r) for r in values))
               for fw, values in ratios.items()}
    factors[TrainingFramework.MEGATRON_LM] = 1.0
    return factors


@dataclass(frozen=True, slots=True, kw_only=True)
class FinetuneRecipe:
    """A published fine-tuning recipe's global batch (sequences per optimizer step)."""

    kind: str  # "full" or "lora" (LoRA and QLoRA)
    recipe: str
    global_batch_seqs: int
    seq_len: int | None  # None: the recipe packs or truncates to the data, no fixed length
    source: str


FINETUNE_KINDS = ("full", "lora")


BATCH_ROLES = ("floor", "growth", "cap", "context")


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishedBatch:
    """A published pre-training run's global batch on its fleet (perf_batch_scaling.csv).

    ``role`` says what the row does for the default: ``floor`` (the batch every fleet gets at
    least), ``growth`` (a run on a fleet large enough that its batch tells how practice grows the
    batch with the fleet; one row per run), ``cap`` (the largest published batch: the rule stops
    there), ``context`` (shown beside the rule, not used by it).
    """

    run: str
    kind: str  # "dense" or "moe"
    accelerator: str
    accelerators: int | None  # None: not published
    seq_len: int
    global_batch_seqs: int | None  # None: the source states tokens only
    global_batch_tokens: float
    layout: str
    role: str
    source: str
    date: str

    def __post_init__(self) -> None:
        if self.role not in BATCH_ROLES:
            raise ValueError(f"published batch {self.run}: role must be one of "
                             f"{', '.join(BATCH_ROLES)} (got {self.role!r})")
        if self.role == "growth" and not self.accelerators:
            raise ValueError(f"published batch {self.run}: a growth row needs its accelerator "
                             "count")
        if self.global_batch_tokens <= 0 or self.seq_len < 1:
            raise ValueError(f"published batch {self.run}: batch and sequence length must be "
                             "positive")
        if (self.global_batch_seqs is not None
                and self.global_batch_seqs * self.seq_len != self.global_batch_tokens):
            raise ValueError(f"published batch {self.run}: {self.global_batch_seqs} sequences "
                             f"of {self.seq_len} are not {self.global_batch_tokens:g} tokens")

    @property
    def tokens_per_accelerator(self) -> float | None:
        """Tokens of the batch per GPU (or TPU chip); None where the count is not published."""
        return self.global_batch_tokens / self.accelerators if self.accelerators else None


def _pretrain_rule(runs: Iterable[PublishedBatch]) -> tuple[int, float, int]:
    """(floor, tokens per GPU, cap) of the pre-training default from the published runs.

    Floor: the ``floor`` row's batch (Llama 2's 4M tokens). Growth: the lower median of the
    ``growth`` rows' tokens per accelerator, the same statistic as the fine-tuning recipes (the
    smaller middle value: the smaller batch needs fewer excess tokens past the critical batch,
    McCandlish et al. 2018). Cap: the largest ``cap`` row's batch, beyond which nothing is
    published."""
    rows = list(runs)
    floors = [r for r in rows if r.role == "floor"]
    growth = [r.tokens_per_accelerator for r in rows if r.role == "growth"]
    caps = [r.global_batch_tokens for r in rows if r.role == "cap"]
    if len(floors) != 1:
        raise ValueError(f"published batches: need exactly one floor row (got {len(floors)})")
    if not growth or not caps:
        raise ValueError("published batches: need at least one growth row and one cap row")
    floor = round(floors[0].global_batch_tokens)
    cap = round(max(caps))
    if cap < floor:
        raise ValueError(f"published batches: the cap ({cap} tokens) is below the floor "
                         f"({floor})")
    per_gpu = float(statistics.median_low(g for g in growth if g is not None))
    return floor, per_gpu, cap


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobalBatchDefaults:
    """Default global batch when the user gives none.

    Pre-training, in tokens: ``pretrain_tokens`` (Llama 2's 4M) up to the fleet where
    ``pretrain_tokens_per_gpu`` × GPUs exceeds it, that product above, at most
    ``pretrain_max_tokens`` (:func:`costsim.perf.batch.pretrain_batch_tokens`; the figures are
    derived from perf_batch_scaling.csv, these field defaults are that file's). Fine-tuning, in
    sequences: the median of the published recipes of its kind."""

    pretrain_tokens: int = 4 * 2**20
    pretrain_tokens_per_gpu: float = 1024.0
    pretrain_max_tokens: int = 15360 * 4096
    finetune_seqs: Mapping[str, int] = field(default_factory=lambda: {"full": 128, "lora": 32})
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    published: tuple[PublishedBatch, ...] = field(default=(), compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.pretrain_tokens < 1 or self.pretrain_tokens_per_gpu < 0:
            raise ValueError("pre-training batch defaults must be positive")
        if self.pretrain_max_tokens < self.pretrain_tokens:
            raise ValueError("pretrain_max_tokens must be >= pretrain_tokens")

    @classmethod
    def from_recipes(cls, recipes: Iterable[FinetuneRecipe],
                     pretrain_tokens: int = 4 * 2**20,
                     published: Iterable[PublishedBatch] = ()) -> GlobalBatchDefaults:
        """The lower median of each kind's recipes (the smaller middle value when their number
        is even: the cheaper, more common recipe); with ``published`` runs, the pre-training
        rule derived from them (:func:`_pretrain_rule`), else the field defaults with
        ``pretrain_tokens`` as the floor."""
        by_kind: dict[str, list[FinetuneRecipe]] = {}
        for recipe in recipes:
            if recipe.kind not in FINETUNE_KINDS:
                raise ValueError(f"fine-tuning recipe {recipe.recipe}: kind must be one of "
                                 f"{', '.join(FINETUNE_KINDS)} (got {recipe.kind!r})")
            by_kind.setdefault(recipe.kind, []).append(recipe)
        missing = [kind for kind in FINETUNE_KINDS if kind not in by_kind]
        if missing:
            raise ValueError(f"no fine-tuning recipe of kind {', '.join(missing)}")
        seqs = {kind: int(statistics.median_low(r.global_batch_seqs for r in rows))
                for kind, rows in by_kind.items()}
        sources = {kind: "; ".join(f"{r.recipe} {r.global_batch_seqs}" for r in rows)
                   for kind, rows in by_kind.items()}
        runs = tuple(published)
        if not runs:
            return cls(pretrain_tokens=pretrain_tokens, finetune_seqs=seqs, sources=sources)
        floor, per_gpu, cap = _pretrain_rule(runs)
        sources["pretrain"] = "; ".join(f"{r.run} ({r.role})" for r in runs)
        return cls(pretrain_tokens=floor, pretrain_tokens_per_gpu=per_gpu,
                   pretrain_max_tokens=cap, finetune_seqs=seqs, sources=sources,
                   published=runs)


@dataclass(frozen=True, slots=True, kw_only=True)
class GoodputAssumptions:
    """Defaults of the goodput model (failures, checkpoints, restarts, evaluation)."""

    interruptions_per_gpu_hour: float
    restart_s: float
    checkpoint_write_gb_per_s_per_node: float
    checkpoint_bytes_per_param: float
    checkpoint_fixed_s: float
    evaluation_fraction: float
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.interruptions_per_gpu_hour < 0:
            raise ValueError("interruptions_per_gpu_hour must be >= 0")
        if not 0 <= self.evaluation_fraction < 1:
            raise ValueError("evaluation_fraction must be in [0, 1)")


@dataclass(frozen=True, slots=True, kw_only=True)
class AllinLossAssumptions:
    """What real training runs lose beyond hardware faults, and the steady-state model's error.

    The extra wall-time fraction x (software faults, loss-spike rollbacks, node replacement,
    allocation held while idle, restarts and evaluations beyond the goodput model) is lognormal:
    x = m(D) · exp(``extra_loss_sigma`` · Z), so x ≥ 0 and all-in wall time = hardware all-in
    time · (1 + x). Its median grows with the run's steady wall time D in days,
    m(D) = ``extra_loss_median`` · (1 − exp(−D / ``extra_loss_onset_days``)): such losses
    come from incidents a run meets about once every ``extra_loss_onset_days`` of wall time, so
    a run of hours meets none and a run of weeks carries the full median (0 onset days: the
    median for every run). ``throughput_error_sigma`` is the log-sd of the performance model's
    own error (median 1) on its validation rows, every phase's default throughput uncertainty;
    ``training_error_sigma`` (≥ it) is the training model's log-sd error on published runs it
    was not calibrated on, which a training phase with the default uncertainty carries in full
    (0: the same as ``throughput_error_sigma``); ``serving_error_sigma`` (≥ it) is the serving
    model's log-sd error on the blind held-out sets as they were rated, which a predicted
    serving capacity with the default uncertainty carries in full (0: the same as
    ``throughput_error_sigma``). Defaults and their derivation: ``costsim/data/allin_loss.csv``,
    docs/performance.md "What real runs lose" and "The serving model's error out of sample".
    """

    extra_loss_median: float
    extra_loss_sigma: float
    throughput_error_sigma: float
    extra_loss_onset_days: float = 0.0
    training_error_sigma: float = 0.0
    serving_error_sigma: float = 0.0
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        for key in ("extra_loss_median", "extra_loss_sigma", "throughput_error_sigma",
                    "extra_loss_onset_days", "training_error_sigma", "serving_error_sigma"):
            value = getattr(self, key)
            if not value >= 0 or value == float("inf"):
                raise ValueError(f"{key} must be a finite number >= 0 (got {value})")

    @property
    def training_sigma(self) -> float:
        """Log-sd of a predicted training run's throughput error (the default uncertainty)."""
        return max(self.training_error_sigma, self.throughput_error_sigma)

    @property
    def training_extra_sigma(self) -> float:
        """Log-sd of the training-only factor drawn on top of the shared throughput error, so
        that the product has ``training_sigma``: √(σ_train² − σ²)."""
        return float((self.training_sigma**2 - self.throughput_error_sigma**2) ** 0.5)

    @property
    def serving_sigma(self) -> float:
        """Log-sd of a predicted serving capacity's error (the default uncertainty)."""
        return max(self.serving_error_sigma, self.throughput_error_sigma)

    @property
    def serving_extra_sigma(self) -> float:
        """Log-sd of the serving-only factor drawn on top of the shared throughput error, so
        that the product has ``serving_sigma``: √(σ_serve² − σ²)."""
        return float((self.serving_sigma**2 - self.throughput_error_sigma**2) ** 0.5)


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineProfile:
    """How close a serving engine gets to the roofline, and its batching limits.

    ``hbm_efficiency``: achieved fraction of memory bandwidth in decode (``gddr_hbm_efficiency``
    on GDDR cards where the engine publishes its own, else the same); ``compute_efficiency``:
    achieved fraction of dense peak for large token counts (prefill); ``max_batch``: the
    engine's default cap on concurrent sequences; ``memory_utilization``: share of GPU memory the
    engine claims.

    Host (CPU) time of one iteration, serialized with the GPU (the engine waits for the sampled
    tokens before it schedules the next step): ``step_overhead_s`` + ``step_overhead_per_seq_s``
    × sequences in the batch (scheduling, sampling, stop checks, detokenization).
    ``launch_s_per_layer``: host time to issue one layer's kernels when the engine runs without
    CUDA graphs (eager PyTorch); the GPU runs behind the host, so a step takes the longer of the
    two. ``allreduce_latency_s``: latency of one tensor-parallel all-reduce call (None: the shared
    default of :class:`ServingAssumptions`, NCCL under CUDA graphs). ``chunked_prefill``: prompts
    ride along with decode steps (their compute is added, the weights are read once); otherwise
    a prompt runs as its own forward pass that stalls the running decodes. ``paged_kv``: the KV
    cache is allocated in pages as tokens are produced, so a running request holds its prompt
    and the tokens generated so far (prompt + output/2 on average), not its full context.
    ``fp8_kv_cache``: with FP8 weights and activations and no KV dtype asked, the engine stores
    the KV cache in FP8 (TensorRT-LLM's FP8 checkpoints); otherwise in the 16-bit activation
    dtype (vLLM's, SGLang's and TGI's ``kv_cache_dtype auto``). ``attention_bandwidth_factor``:
    the decode attention kernel's achieved bandwidth over the weight kernels' (reading the paged
    KV cache; 1 where the engine's attention reaches the same share). ``fp8_compute_factor``:
    the share of the FP8 dense peak FP8 GEMMs reach over the share 16-bit GEMMs reach of theirs
    (FP8 prefill gains 2 × the factor over bf16, not 2×).
    """

    engine: ServingEngine
    hbm_efficiency: float
    compute_efficiency: float
    max_batch: int
    memory_utilization: float
    step_overhead_s: float
    step_overhead_per_seq_s: float = 0.0
    launch_s_per_layer: float = 0.0
    allreduce_latency_s: float | None = None
    chunked_prefill: bool = True
    paged_kv: bool = False
    gddr_hbm_efficiency: float | None = None
    fp8_kv_cache: bool = True
    attention_bandwidth_factor: float = 1.0
    fp8_compute_factor: float = 1.0
    source: str = ""

    def __post_init__(self) -> None:
        for key in ("hbm_efficiency", "compute_efficiency", "memory_utilization",
                    "attention_bandwidth_factor", "fp8_compute_factor"):
            value = getattr(self, key)
            if not 0 < value <= 1:
                raise ValueError(f"engine {self.engine}: {key} must be in (0, 1] (got {value})")
        if self.gddr_hbm_efficiency is not None and not 0 < self.gddr_hbm_efficiency <= 1:
            raise ValueError(f"engine {self.engine}: gddr_hbm_efficiency must be in (0, 1] "
                             f"(got {self.gddr_hbm_efficiency})")
        if self.max_batch < 1:
            raise ValueError(f"engine {self.engine}: max_batch must be >= 1")
        for key in ("step_overhead_s", "step_overhead_per_seq_s", "launch_s_per_layer"):
            if not getattr(self, key) >= 0:
                raise ValueError(f"engine {self.engine}: {key} must be >= 0")
        if self.allreduce_latency_s is not None and not self.allreduce_latency_s >= 0:
            raise ValueError(f"engine {self.engine}: allreduce_latency_s must be >= 0")

    def bandwidth_efficiency(self, gddr: bool) -> float:
        """Achieved share of memory bandwidth in decode on a GDDR (True) or HBM card."""
        if gddr and self.gddr_hbm_efficiency is not None:
            return self.gddr_hbm_efficiency
        return self.hbm_efficiency


@dataclass(frozen=True, slots=True, kw_only=True)
class QuantKernel:
    """The weight-only quantized GEMM an engine runs for a format (perf_quant_kernels.csv).

    ``fused_max_batch``: the largest batch (tokens per GEMM) at which the kernel dequantizes in
    registers and moves only the quantized bytes (inf: at every batch, as Marlin); above it the
    kernel writes an fp16 copy of the weights and runs an fp16 GEMM on it (dequantize-then-GEMM),
    which moves more bytes than fp16 weights would.

    ``bandwidth_factor`` κ: the share of the engine's fp16 decode bandwidth the fused kernel
    reaches while it reads the quantized weights (1: as fast per byte as fp16). Unpacking,
    scaling and converting every weight in the inner loop of a matrix-vector product costs
    instructions the fp16 kernel does not issue, so fewer loads are in flight per SM and the
    kernel moves fewer bytes per second than the same engine's fp16 kernel on the same card.
    """

    engine: ServingEngine
    quant: str
    family: str
    fused_max_batch: float
    bandwidth_factor: float = 1.0
    source: str = ""

    def __post_init__(self) -> None:
        if not self.fused_max_batch >= 0:
            raise ValueError(f"quant kernel {self.engine}/{self.quant}: fused_max_batch must be "
                             f">= 0 (got {self.fused_max_batch})")
        if not 0 < self.bandwidth_factor <= 1:
            raise ValueError(f"quant kernel {self.engine}/{self.quant}: bandwidth_factor must "
                             f"be in (0, 1] (got {self.bandwidth_factor})")


# A format without a row runs a fused kernel at every batch (the plain roofline).
FUSED_KERNEL_FAMILY = "fused"


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingAssumptions:
    """Defaults of the serving model: engine profiles, TP all-reduce latency, tail rule.

    ``nvlink_efficiency`` / ``pcie_efficiency``: achieved share of the link's bandwidth for the
    TP all-reduces, the same measured figures as training's. ``target_utilization``: the share
    of a replica's maximum request rate a sized fleet runs at; ``default_slo_ttft_p95_s`` /
    ``default_slo_tpot_p95_s``: the SLO that applies when none is given (see
    :mod:`costsim.perf.sizing`).
    """

    engines: Mapping[ServingEngine, EngineProfile]
    allreduce_latency_s: float
    nvlink_efficiency: float
    pcie_efficiency: float
    runtime_reserve_bytes: int
    tail_wait_multiplier: float
    tail_concurrency_z: float
    target_utilization: float
    default_slo_ttft_p95_s: float
    default_slo_tpot_p95_s: float
    quant_kernels: Mapping[tuple[ServingEngine, str], QuantKernel] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not 0 < self.target_utilization <= 1:
            raise ValueError(f"target_utilization must be in (0, 1] "
                             f"(got {self.target_utilization})")
        if not (self.default_slo_ttft_p95_s > 0 and self.default_slo_tpot_p95_s > 0):
            raise ValueError("default SLOs must be > 0")

    def engine(self, engine: ServingEngine) -> EngineProfile:
        """The profile of ``engine``."""
        return self.engines[engine]

    def quant_kernel(self, engine: ServingEngine, quant: str) -> QuantKernel:
        """The weight-only kernel ``engine`` runs for ``quant`` (fused at every batch when the
        data has no row for it)."""
        found = self.quant_kernels.get((engine, str(quant)))
        if found is not None:
            return found
        return QuantKernel(engine=engine, quant=str(quant), family=FUSED_KERNEL_FAMILY,
                           fused_max_batch=math.inf)


@dataclass(frozen=True, slots=True, kw_only=True)
class PerfDefaults:
    """Everything the performance model assumes, loaded once by the catalog."""

    training: TrainingAssumptions
    goodput: GoodputAssumptions
    serving: ServingAssumptions
    networks: Mapping[str, Interconnect]
    default_network_by_gpu: Mapping[str, str]
    fallback_network: str
    batch: GlobalBatchDefaults = field(default_factory=GlobalBatchDefaults)

    def network_for(self, gpu_name: str) -> Interconnect:
        """The default inter-node network of clusters built from ``gpu_name``."""
        return self.networks[self.default_network_by_gpu.get(gpu_name, self.fallback_network)]
