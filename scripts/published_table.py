"""Today's predictions ("before") for the published serving figures and training runs of issue 18.

Reads tests/data/serving_published.csv and tests/data/training_runs_published.csv (with the 13
runs of tests/data/published_runs_allin.csv) and prints, for every row, the published figure,
costsim's prediction and measured / predicted. Nothing here is fitted: the split column of each
file was written by the rules below before any prediction was looked at, and this script only
reports (tests/perf/test_published_data.py checks the files and that the columns equal the rules).

    python scripts/published_table.py              # both tables and the summary
    python scripts/published_table.py --csv        # machine-readable rows
    python scripts/published_table.py --write-before tests/data/serving_published_before.csv

Every serving row is printed before -> after: "before" is the prediction of the model as it was
before issue 18's sixth serving round (commit 0e24faf), kept in
tests/data/serving_published_before.csv (written once with ``--write-before`` on that model,
after the seen heldout4 rows SP109-SP243 had been added; the fifth round's "before", commit
f2fc5b7, the fourth round's, 91fd3d7, and the third round's, 8c31d1a, are in that file's git
history); "after" is today's.

Serving rows go through :func:`costsim.perf.serving.estimate_serving` (what ``costsim estimate
serve`` calls), one replica at the row's TP degree; a static-batch benchmark is replayed with
:func:`costsim.perf.burst.burst_throughput` on the same replica terms (as the S3 test does);
rows already in tests/data/serving_cases*.csv are predicted by their validation tests' helpers.
Training runs go through the path of tests/perf/test_allin_calibration.py: the steady-state
estimate of the run on its own cluster (:func:`costsim.perf.train_estimate.estimate_training_run`)
and the Monte Carlo band of :func:`costsim.perf.allin_loss.simulate_allin`, here with the shipped
loss defaults (costsim/data/allin_loss.csv) rather than a refit. The check through ``costsim
run`` of one-phase scenarios is scripts/allin_check.py.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_architecture_file, load_preset
from costsim.catalog.perf_defaults import allin_loss_defaults, perf_defaults
from costsim.catalog.serving_datasets import length_distribution, read_serving_rows, row_dataset
from costsim.domain.architecture import Architecture
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.request_lengths import DatasetKind
from costsim.domain.workload import (
    InferenceSetup,
    ParallelLayout,
    Quant,
    Recompute,
    ServingEngine,
    Task,
    TrainingSetup,
)
from costsim.errors import CostsimError
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.perf.allin_loss import simulate_allin
from costsim.perf.burst import burst_throughput
from costsim.perf.latency import closed_loop
from costsim.perf.layouts import LayoutConstraints
from costsim.perf.request_lengths import benchmark_requests
from costsim.perf.roofline import ReplicaTerms, replica_terms
from costsim.perf.serving import ServingEstimate, estimate_serving
from costsim.perf.train_estimate import estimate_training_run
from costsim.units import SECONDS_PER_HOUR

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SERVING_CSV = DATA / "serving_published.csv"
BEFORE_CSV = DATA / "serving_published_before.csv"
TRAINING_CSV = DATA / "training_runs_published.csv"
ALLIN_CSV = DATA / "published_runs_allin.csv"
ARCH_DIR = DATA / "architectures"
FIT, CHECK = "fit", "check"
# Same Monte Carlo settings as scripts/fit_allin_loss.py (row i draws from default_rng([SEED, i])).
SEED = 20261201
REPLICATIONS = 20_000
# ShareGPT's mean prompt (vLLM's benchmark, the S3 row) stands in where a source gives none.
SHAREGPT_MEAN_PROMPT_TOKENS = 202

SERVING_SPLIT_RULE = ("groups (rows of one source table at one request shape; a card-ratio row "
                      "joins the group of the rows it divides) ordered by (source_date, group) "
                      "alternate fit, check, fit, ... starting with fit")
TRAINING_SPLIT_RULE = ("within each scale_class (small: <= 128 GPUs and <= 14 days), runs ordered "
                       "by (source_date, id) alternate fit, check, ... starting with fit")
# Rows added after the "before" table was first printed get their half by a rule of their own,
# fixed before their predictions were looked at and independent of every other row, so that no
# existing row changes half (issue 18, Discipline item 4).
SERVING_NEW_SPLIT_RULE = (
    "new rows (SP44 on), fixed before any prediction: groups (one source table at one request "
    "shape) in order of their first id (the order they were added) alternate check, fit, ... "
    "starting with check; rows SP01-SP43, S1-S4, SX1-SX2 keep their own rule")
TRAINING_NEW_SPLIT_RULE = (
    "new rows (A19 on), fixed before any prediction: within each scale_class (small: <= 128 GPUs "
    "and <= 14 days), in id order (the order they were added) alternate check, fit, ... "
    "starting with check; rows A14-A18 keep their own rule")
SMALL_CARDS = frozenset({"A10G", "A10", "L4", "L40", "L40S", "T4", "RTX4090", "RTX3090",
                         "RTX5090", "A6000", "RTX6000-Ada"})


def read_rows(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows, in file order."""
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# --- the split rules ---------------------------------------------------------------------------

def serving_split_by_rule(rows: Sequence[dict[str, str]]) -> dict[str, str]:
    """Row id -> half: whole groups alternate in (source_date, group) order."""
    groups = sorted({(row["source_date"], row["group"]) for row in rows})
    half = {group: FIT if position % 2 == 0 else CHECK
            for position, (_, group) in enumerate(groups)}
    return {row["id"]: half[row["group"]] for row in rows}


def training_split_by_rule(rows: Sequence[dict[str, str]]) -> dict[str, str]:
    """Run id -> half: alternate within each scale class in (source_date, id) order."""
    split: dict[str, str] = {}
    for scale in sorted({row["scale_class"] for row in rows}):
        ordered = sorted((r for r in rows if r["scale_class"] == scale),
                         key=lambda r: (r["source_date"], r["id"]))
        for position, row in enumerate(ordered):
            split[row["id"]] = FIT if position % 2 == 0 else CHECK
    return split


def _id_key(row_id: str) -> tuple[str, int]:
    """'SP44' -> ('SP', 44): ids in the order they were added."""
    digits = row_id.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return row_id[:len(row_id) - len(digits)], int(digits)


def serving_new_split_by_rule(rows: Sequence[dict[str, str]]) -> dict[str, str]:
    """Row id -> half for rows under SERVING_NEW_SPLIT_RULE: groups in order of their first id
    alternate check, fit, ... (only these rows are looked at)."""
    groups: list[str] = []
    for row in sorted(rows, key=lambda r: _id_key(r["id"])):
        if row["group"] not in groups:
            groups.append(row["group"])
    half = {group: CHECK if position % 2 == 0 else FIT for position, group in enumerate(groups)}
    return {row["id"]: half[row["group"]] for row in rows}


def training_new_split_by_rule(rows: Sequence[dict[str, str]]) -> dict[str, str]:
    """Run id -> half for runs under TRAINING_NEW_SPLIT_RULE: within each scale class, in id
    order, alternate check, fit, ... (only these rows are looked at)."""
    split: dict[str, str] = {}
    for scale in sorted({row["scale_class"] for row in rows}):
        ordered = sorted((r for r in rows if r["scale_class"] == scale),
                         key=lambda r: _id_key(r["id"]))
        for position, row in enumerate(ordered):
            split[row["id"]] = CHECK if position % 2 == 0 else FIT
    return split


def split_by_stated_rules(rows: Sequence[dict[str, str]], *, serving: bool) -> dict[str, str]:
    """Row id -> half, each row by the rule its split_rule column names (rows without the
    column are the 13 runs of published_runs_allin.csv, split in that file)."""
    old_rule, new_rule = ((SERVING_SPLIT_RULE, SERVING_NEW_SPLIT_RULE) if serving
                          else (TRAINING_SPLIT_RULE, TRAINING_NEW_SPLIT_RULE))
    old = [row for row in rows if row.get("split_rule") == old_rule]
    new = [row for row in rows if row.get("split_rule") == new_rule]
    by_old = serving_split_by_rule(old) if serving else training_split_by_rule(old)
    by_new = serving_new_split_by_rule(new) if serving else training_new_split_by_rule(new)
    return {**by_old, **by_new}


def scale_class(gpus: int, days: float) -> str:
    """'small' for a run on <= 128 GPUs lasting <= 14 days (issue 18's class), else 'large'."""
    return "small" if gpus <= 128 and days <= 14 else "large"


# --- serving -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class ServingCheck:
    """One serving row against today's model."""

    row: dict[str, str]
    measured: float | None
    predicted: float | None
    tolerance: float | None
    reason: str = ""

    @property
    def ratio(self) -> float | None:
        """Measured / predicted."""
        if self.measured is None or not self.predicted:
            return None
        return self.measured / self.predicted

    @property
    def within(self) -> bool | None:
        """Whether |predicted / measured - 1| <= tolerance."""
        if self.ratio is None or self.tolerance is None:
            return None
        return abs(1.0 / self.ratio - 1.0) <= self.tolerance


# Which card is cheaper per token (issue 18): the per-GPU throughput ratio small/large against
# the per-GPU price ratio; prices: AWS us-east-1 on demand, the cheapest instance per GPU in the
# shipped price book (the basis of tests/data/serving_mix_prices.csv), fixed before comparing.
# A row with a card AWS does not rent there (workstation and consumer cards: RTX 3090/4090/5090,
# A6000, RTX 6000 Ada) prices BOTH its cards by the median on-demand price per GPU-hour over
# every offer of the price book (every cloud and marketplace; the median, so that one odd
# marketplace host does not decide): one basis for the two cards of a row. This fallback was
# written before the fourth held-out set was rated (validation/RATING_PLAN_heldout4.md), when
# its rating first met such a row.
PRICE_CLOUD, PRICE_REGION = "aws", "us-east-1"


def _per_gpu_rates(gpu: str, cloud: str | None, region: str | None) -> list[float]:
    from costsim.catalog.prices import offerings

    return [o.on_demand_usd_per_hour / o.gpus_per_instance
            for o in offerings(get_gpu(gpu).name, cloud, region) if o.on_demand_usd_per_hour]


def usd_per_gpu_hour(gpu: str) -> float:
    """The card's cheapest on-demand price per GPU-hour on the stated basis."""
    rates = _per_gpu_rates(gpu, PRICE_CLOUD, PRICE_REGION)
    if not rates:
        raise CostsimError(f"no {PRICE_CLOUD} {PRICE_REGION} on-demand price for {gpu}")
    return min(rates)


def median_usd_per_gpu_hour(gpu: str) -> float:
    """The card's median on-demand price per GPU-hour over every offer of the price book."""
    rates = sorted(_per_gpu_rates(gpu, None, None))
    if not rates:
        raise CostsimError(f"no on-demand price for {gpu} in the price book")
    middle = len(rates) // 2
    return rates[middle] if len(rates) % 2 else (rates[middle - 1] + rates[middle]) / 2.0


def price_ratio(small: str, large: str) -> float:
    """Per-GPU price of ``small`` over ``large`` on one basis for both (see above)."""
    if _per_gpu_rates(small, PRICE_CLOUD, PRICE_REGION) and \
            _per_gpu_rates(large, PRICE_CLOUD, PRICE_REGION):
        return usd_per_gpu_hour(small) / usd_per_gpu_hour(large)
    return median_usd_per_gpu_hour(small) / median_usd_per_gpu_hour(large)


def cheaper_card(row: dict[str, str], per_gpu_ratio: float) -> str:
    """The card of a card-ratio row that costs less per token at ``per_gpu_ratio`` (small card's
    tokens per GPU over the large card's)."""
    small, large = row["gpu"].split("/")
    return small if per_gpu_ratio > price_ratio(small, large) else large


def _tolerance(text: str) -> float | None:
    return float(text.removeprefix("+-").removesuffix("%")) / 100 if text.startswith("+-") else None


def _architecture(name: str) -> Architecture:
    return load_preset(name).architecture


def vllm_generation(row: dict[str, str]) -> str:
    """'V0' for a vLLM row whose engine text names a release below 0.8 (vLLM's V0 engine), 'V1'
    for 0.8 on (V1 is vLLM's default engine since 0.8.0), '' when the text names no release."""
    if row["costsim_engine"] != ServingEngine.VLLM.value:
        return ""
    found = re.search(r"\bvllm\s+v?(\d+)\.(\d+)", row["engine"], re.IGNORECASE)
    if not found:
        return ""
    return "V1" if (int(found.group(1)), int(found.group(2))) >= (0, 8) else "V0"


def row_engine(row: dict[str, str]) -> ServingEngine:
    """The engine profile a row is predicted with: its ``costsim_engine``, except that a vLLM
    row whose engine text names a V0 release (up to 0.7) is predicted with the ``vllm-v0``
    profile (issue 18, sixth serving round): the row's own text says which engine ran."""
    if vllm_generation(row) == "V0":
        return ServingEngine.VLLM_V0
    return ServingEngine(row["costsim_engine"])


def _estimate(row: dict[str, str], defaults: PerfDefaults, *, batch: int = 1,
              prompt: int | None = None) -> ServingEstimate:
    if prompt is not None:
        prompt_tokens = prompt
    else:
        prompt_tokens = (int(row["prompt_tokens"]) if row["prompt_tokens"]
                         else SHAREGPT_MEAN_PROMPT_TOKENS)
    return estimate_serving(
        _architecture(row["model"]), get_gpu(row["gpu"]),
        engine=row_engine(row), precision=Dtype(row["precision"]),
        quant=Quant(row["quant"]), kv_dtype=None, prompt_tokens=prompt_tokens,
        output_tokens=int(row["output_tokens"]), batch=batch, tp=int(row["tp"]),
        rate_requests_per_s=None, slo_ttft_s=None, slo_tpot_s=None, price_usd_per_gpu_hour=1.0,
        assumptions=defaults.serving)


def _replica_terms(row: dict[str, str], defaults: PerfDefaults, prompt: int,
                   output: int) -> ReplicaTerms:
    """The replica terms estimate_serving uses for the row's model, GPU, engine and layout,
    with requests of ``prompt`` + ``output`` tokens."""
    profile = defaults.serving.engine(row_engine(row))
    policy = replace(DEFAULT_POLICY, infer_utilization=profile.memory_utilization)
    setup = InferenceSetup(precision=Dtype(row["precision"]),
                           layout=ParallelLayout(tp=int(row["tp"])), batch=1,
                           context_tokens=prompt + output, quant=Quant(row["quant"]))
    return replica_terms(_architecture(row["model"]), get_gpu(row["gpu"]), setup, profile,
                         defaults.serving, policy)


def burst_lengths(row: dict[str, str]) -> tuple[list[int], list[int]]:
    """(prompt, output) lengths of the ``concurrency`` requests a burst row sends at once:
    the row's stated sizes for every request, or, for a ``sharegpt`` row, lengths drawn
    deterministically from the shipped ShareGPT distribution with the row's means
    (costsim.perf.request_lengths; issue 18, fifth serving round). An ``other:<name>`` row
    keeps its means: no distribution is shipped for it."""
    count, prompt, output = (int(row["concurrency"]), int(row["prompt_tokens"]),
                             int(row["output_tokens"]))
    dataset = row_dataset(row)
    if dataset.kind is DatasetKind.SHAREGPT:
        return benchmark_requests(length_distribution(dataset.kind), count, prompt, output)
    return [prompt] * count, [output] * count


def _static_batch_tokens_per_s(row: dict[str, str], defaults: PerfDefaults) -> float:
    """A static batch of ``concurrency`` requests run to completion (gptSessionBenchmark),
    replayed like the S3 test on the replica terms estimate_serving uses."""
    prompts, outputs = burst_lengths(row)
    terms = _replica_terms(row, defaults, int(row["prompt_tokens"]), int(row["output_tokens"]))
    return burst_throughput(terms, prompts, outputs, len(prompts)).output_tokens_per_s


def _closed_loop(row: dict[str, str], defaults: PerfDefaults) -> tuple[float, float]:
    """(output tokens/s, ms per token) of ``concurrency`` users each sending a request and
    waiting for it (costsim.perf.latency.closed_loop: the other users' prompts slow every
    decode step by their prefill share)."""
    users = int(row["concurrency"])
    prompt = int(row["prompt_tokens"]) if row["prompt_tokens"] else SHAREGPT_MEAN_PROMPT_TOKENS
    output = int(row["output_tokens"])
    est = _estimate(row, defaults, batch=1, prompt=prompt)
    terms = _replica_terms(row, defaults, prompt, output)
    loop = closed_loop(terms, users, prompt, output, est.max_batch, est.max_requests_per_s,
                       defaults.serving)
    return loop.output_tokens_per_s, loop.ms_per_output_token


def _offline_burst(row: dict[str, str], defaults: PerfDefaults) -> tuple[float, float]:
    """(requests/s, output tokens/s) of an offline benchmark (vLLM's benchmark_throughput, or
    benchmark_serving at request rate inf): ``concurrency`` requests handed to the engine at
    once, continuous batching at the engine's own cap (the KV cache at the mean residency, or
    its sequence limit), run to completion; replayed with burst_throughput on the replica terms
    estimate_serving uses, with the row's lengths (:func:`burst_lengths`)."""
    prompt, output = int(row["prompt_tokens"]), int(row["output_tokens"])
    prompts, outputs = burst_lengths(row)
    cap = _estimate(row, defaults).max_batch
    terms = _replica_terms(row, defaults, prompt, output)
    result = burst_throughput(terms, prompts, outputs, max(int(cap), 1))
    return result.requests_per_s, result.output_tokens_per_s


def _predict_plain(row: dict[str, str], defaults: PerfDefaults) -> float:
    kind, unit, mode = row["kind"], row["unit"], row["mode"]
    if kind == "batch1-ttft":
        return _estimate(row, defaults).prefill_s * 1e3
    if mode == "static-batch":
        return _static_batch_tokens_per_s(row, defaults)
    if mode == "offline-burst":
        requests_per_s, tokens_per_s = _offline_burst(row, defaults)
        return requests_per_s if unit == "requests_per_s" else tokens_per_s
    if mode == "closed-loop":
        tokens_per_s, ms_per_token = _closed_loop(row, defaults)
        return ms_per_token if unit.startswith("ms_per_token") else tokens_per_s
    if kind == "batch1-decode":
        tokens_per_s = _estimate(row, defaults).decode_tokens_per_s
        # a median time per output token at one request in flight (SP48)
        return 1e3 / tokens_per_s if unit.startswith("ms_per_token") else tokens_per_s
    return _estimate(row, defaults).output_tokens_per_s


def _reference_predictions(defaults: PerfDefaults) -> dict[str, tuple[float, float]]:
    """(predicted, published) of the rows kept in serving_cases*.csv, by their tests' helpers."""
    from tests.perf import test_validation as base
    from tests.perf import test_validation_extra as extra

    figures = {"S1": base.s1_decode_tokens_per_s(defaults),
               "S2": base.s2_decode_tokens_per_s(defaults),
               "S3": base.s3_burst_requests_per_s(defaults),
               "S4": (base.s4_weights_share(defaults), 0.625)}
    for row_id in sorted(extra.SERVING_RUNS):
        figures[row_id] = extra.serving_predicted_and_reported(row_id, defaults)
    return figures


def check_serving(rows: Sequence[dict[str, str]], defaults: PerfDefaults) -> list[ServingCheck]:
    """Every serving row against today's model (kept, with the reason, when it cannot run)."""
    by_id = {row["id"]: row for row in rows}
    references = (_reference_predictions(defaults)
                  if any(row["mode"] == "reference" for row in rows) else {})
    plain: dict[str, float] = {}
    checks = []
    for row in rows:
        tolerance = _tolerance(row["tolerance"])
        try:
            if row["mode"] == "reference":
                predicted, measured = references[row["id"]]
            elif row["kind"] == "card-ratio":
                small, large = row["ratio_of"].split("/")
                values = []
                for part in (small, large):
                    if part not in plain:
                        plain[part] = _predict_plain(by_id[part], defaults)
                    values.append(plain[part] / int(by_id[part]["gpus"]))
                predicted, measured = values[0] / values[1], float(row["figure"])
            else:
                if row["id"] not in plain:
                    plain[row["id"]] = _predict_plain(row, defaults)
                predicted, measured = plain[row["id"]], float(row["figure"])
        except CostsimError as err:
            checks.append(ServingCheck(row=row, measured=None if not row["figure"]
                                       else float(row["figure"]), predicted=None,
                                       tolerance=tolerance, reason=str(err)))
            continue
        if row["id"] == "S4":
            tolerance = None  # a range (0.55-0.70), shown as its midpoint
        checks.append(ServingCheck(row=row, measured=measured, predicted=predicted,
                                   tolerance=tolerance))
    return checks


# --- training ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class PublishedBand:
    """One run's published GPU-hours against a simulated P10/P50/P90 band (``reason``: why
    there is no band)."""

    row: dict[str, str]
    published: float
    p10: float | None
    p50: float | None
    p90: float | None
    reason: str = ""

    @property
    def inside(self) -> bool | None:
        """Whether the published figure lies within P10-P90."""
        if self.p10 is None or self.p90 is None:
            return None
        return self.p10 <= self.published <= self.p90


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingCheck(PublishedBand):
    """One run's published GPU-hours against today's steady estimate and simulated band."""

    steady: float | None


def _optional_int(text: str) -> int | None:
    return int(text) if text.strip() else None


def _run_architecture(spec: str) -> Architecture:
    if spec.startswith("preset:"):
        return load_preset(spec.removeprefix("preset:")).architecture
    return load_architecture_file(ARCH_DIR / spec)


def check_training(rows: Sequence[dict[str, str]], defaults: PerfDefaults, *,
                   replications: int = REPLICATIONS) -> list[TrainingCheck]:
    """Every run: steady GPU-hours and the P10/P50/P90 of the shipped all-in loss model."""
    loss = allin_loss_defaults()
    checks = []
    for index, row in enumerate(rows):
        published = float(row["published_gpu_hours"])
        fixed = LayoutConstraints(
            tp=_optional_int(row["tp"]), pp=_optional_int(row["pp"]),
            zero=_optional_int(row["zero"]),
            recompute=Recompute(row["recompute"]) if row["recompute"] else None,
            global_batch_seqs=_optional_int(row["global_batch_seqs"]))
        setup = TrainingSetup(task=Task.TRAIN, precision=Dtype(row["precision"]),
                              layout=ParallelLayout(), seq_len=int(row["seq_len"]))
        try:
            est = estimate_training_run(_run_architecture(row["architecture"]),
                                        get_gpu(row["gpu"]), int(row["gpus"]),
                                        float(row["tokens"]), setup, fixed, defaults=defaults,
                                        price_usd_per_gpu_hour=1.0)
        except CostsimError as err:
            checks.append(TrainingCheck(row=row, published=published, steady=None, p10=None,
                                        p50=None, p90=None, reason=str(err)))
            continue
        sample = simulate_allin(est.goodput.steady_wall_time_s, est.gpus, est.params_total,
                                gpus_per_node=defaults.networks[est.network].gpus_per_node,
                                goodput=defaults.goodput, loss=loss,
                                rng=np.random.default_rng([SEED, index]),
                                replications=replications)
        p10, p50, p90 = sample.gpu_hours_band()
        steady = est.goodput.steady_wall_time_s * est.gpus / SECONDS_PER_HOUR
        checks.append(TrainingCheck(row=row, published=published, steady=steady, p10=p10,
                                    p50=p50, p90=p90))
    return checks


def training_rows() -> list[dict[str, str]]:
    """The 13 runs of published_runs_allin.csv (scale class added) and the new runs."""
    old = read_rows(ALLIN_CSV)
    for row in old:
        days = float(row["published_gpu_hours"]) / int(row["gpus"]) / 24
        row["scale_class"] = scale_class(int(row["gpus"]), days)
        row["file"] = ALLIN_CSV.name
    new = read_rows(TRAINING_CSV)
    for row in new:
        row["file"] = TRAINING_CSV.name
    return [*old, *new]


# --- output ------------------------------------------------------------------------------------

def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0 or abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def _table(header: Sequence[str], cells: Iterable[Sequence[str]]) -> str:
    lines = [list(header), *[list(c) for c in cells]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True))
                     for line in lines)


SERVING_HEADER = ("id", "kind", "engine", "gpu", "model", "split", "measured", "unit",
                  "predicted", "meas/pred", "tol", "within", "cheaper", "modelled")
BEFORE_HEADER = ("id", "kind", "engine", "gpu", "model", "split", "measured", "unit", "tol",
                 "before", "meas/pred before", "within before", "after", "meas/pred after",
                 "within after", "cheaper after")


def read_before(path: Path = BEFORE_CSV) -> dict[str, float]:
    """Row id -> the prediction of the model before this round (the file's ``predicted``)."""
    if not path.exists():
        return {}
    return {row["id"]: float(row["predicted"]) for row in read_rows(path)
            if row["predicted"]}


def write_before(checks: Sequence[ServingCheck], path: Path, model_commit: str) -> None:
    """Keep today's predictions as the "before" column of later tables."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(("id", "predicted", "model_commit"))
        for c in checks:
            writer.writerow((c.row["id"], "" if c.predicted is None else repr(c.predicted),
                             model_commit))


def _within(check: ServingCheck, predicted: float | None) -> str:
    if predicted is None or check.measured is None or check.tolerance is None:
        return "-"
    return "yes" if abs(predicted / check.measured - 1.0) <= check.tolerance else "NO"


def before_after_cells(checks: Sequence[ServingCheck],
                       before: dict[str, float]) -> list[tuple[str, ...]]:
    """One line per serving row: the prediction before this round and today's."""
    cells: list[tuple[str, ...]] = []
    for c in checks:
        r, old = c.row, before.get(c.row["id"])
        old_ratio = "-" if old is None or c.measured is None else f"{c.measured / old:.2f}"
        cells.append((r["id"], r["kind"], r["engine"], r["gpu"], r["model"], r["split"],
                      _num(c.measured), r["unit"], r["tolerance"], _num(old), old_ratio,
                      _within(c, old), _num(c.predicted),
                      "-" if c.ratio is None else f"{c.ratio:.2f}", _within(c, c.predicted),
                      _cheaper_cell(c)))
    return cells
TRAINING_HEADER = ("id", "file", "scale", "GPUs", "split", "published_gpuh", "steady_gpuh",
                   "P10", "P50", "P90", "pub/P50", "inside")


def is_seen_heldout(row: dict[str, str]) -> bool:
    """Rows SP63-SP87, SP88-SP108 and SP109-SP243: validation/heldout2's, heldout3's and
    heldout4's serving rows, each set rated once as held out (commits a9f9fba, 32a49c4,
    8d146d5), then added to the calibration data (issue 18, fourth, fifth and sixth serving
    rounds)."""
    return row.get("notes", "").startswith(("SEEN: validation/heldout2",
                                            "SEEN: validation/heldout3",
                                            "SEEN: validation/heldout4"))


def cheaper_agrees(check: ServingCheck) -> bool | None:
    """For a card-ratio row: whether the prediction picks the card the measurement finds
    cheaper per token (None for other rows)."""
    if check.row["kind"] != "card-ratio" or check.measured is None or not check.predicted:
        return None
    return cheaper_card(check.row, check.measured) == cheaper_card(check.row, check.predicted)


def _cheaper_cell(check: ServingCheck) -> str:
    agrees = cheaper_agrees(check)
    if agrees is None:
        return "-"
    measured = cheaper_card(check.row, check.measured or 0.0)
    return f"{'yes' if agrees else 'NO'} ({measured})"


def serving_cells(checks: Sequence[ServingCheck]) -> list[tuple[str, ...]]:
    """One table line per serving row."""
    cells = []
    for c in checks:
        r = c.row
        within = "-" if c.within is None else ("yes" if c.within else "NO")
        modelled = r["modelled"] if not c.reason else f"no: {c.reason}"
        cells.append((r["id"], r["kind"], r["engine"], r["gpu"], r["model"], r["split"],
                      _num(c.measured), r["unit"], _num(c.predicted),
                      "-" if c.ratio is None else f"{c.ratio:.2f}", r["tolerance"], within,
                      _cheaper_cell(c), modelled))
    return cells


def training_cells(checks: Sequence[TrainingCheck]) -> list[tuple[str, ...]]:
    """One table line per run."""
    cells = []
    for c in checks:
        r = c.row
        inside = "-" if c.inside is None else ("yes" if c.inside else "NO")
        ratio = "-" if not c.p50 else f"{c.published / c.p50:.2f}"
        cells.append((r["id"], r["file"], r["scale_class"], r["gpus"], r["split"],
                      _num(c.published), _num(c.steady), _num(c.p10), _num(c.p50),
                      _num(c.p90), ratio, inside if not c.reason else f"no: {c.reason}"))
    return cells


def summary(serving: Sequence[ServingCheck], training: Sequence[TrainingCheck]) -> str:
    """Shares within tolerance / inside the band per half, and the worst rows."""
    lines = []
    for half in (CHECK, FIT):
        rated = [c for c in serving if c.row["split"] == half and c.within is not None]
        added = [c for c in rated if c.row["split_rule"] == SERVING_NEW_SPLIT_RULE]
        seen = [c for c in rated if is_seen_heldout(c.row)]
        lines.append(f"serving {half} half: {sum(bool(c.within) for c in rated)}/{len(rated)} "
                     f"within tolerance (rows added later: "
                     f"{sum(bool(c.within) for c in added)}/{len(added)}; of them heldout2's, "
                     f"heldout3's and heldout4's, "
                     f"seen after their rating: {sum(bool(c.within) for c in seen)}/{len(seen)})")
    ratios = [c for c in serving if cheaper_agrees(c) is not None]
    lines.append(f"card-ratio rows picking the cheaper card per token ({PRICE_CLOUD} "
                 f"{PRICE_REGION} on demand): {sum(bool(cheaper_agrees(c)) for c in ratios)}/"
                 f"{len(ratios)}")
    rated = [c for c in serving if c.ratio is not None and c.row["kind"] != "memory-share"]
    worst = sorted(rated, key=lambda c: -abs(math.log(c.ratio or 1.0)))[:6]
    lines.append("serving worst (measured/predicted): " + ", ".join(
        f"{c.row['id']} {c.ratio:.2f}" for c in worst))
    log_ratios = [math.log(c.ratio) for c in rated if c.ratio]
    median = math.exp(statistics.median(log_ratios))
    lines.append(f"serving median measured/predicted: {median:.2f}")
    for half in (CHECK, FIT):
        banded = [c for c in training if c.row["split"] == half and c.inside is not None]
        added = [c for c in banded if c.row.get("split_rule") == TRAINING_NEW_SPLIT_RULE]
        lines.append(f"training {half} half: {sum(bool(c.inside) for c in banded)}/{len(banded)} "
                     f"inside P10-P90 (runs added later: {sum(bool(c.inside) for c in added)}/"
                     f"{len(added)})")
    for scale in ("small", "large"):
        banded = [c for c in training if c.row["scale_class"] == scale and c.inside is not None]
        lines.append(f"training {scale} runs: {sum(bool(c.inside) for c in banded)}/"
                     f"{len(banded)} inside P10-P90")
    spreads = [c.p90 / c.p10 for c in training if c.p10 and c.p90]
    lines.append(f"training median P90/P10: {statistics.median(spreads):.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None,
         out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--csv", action="store_true", help="write CSV rows instead of tables")
    parser.add_argument("--replications", type=int, default=REPLICATIONS,
                        help=f"Monte Carlo draws per run (default {REPLICATIONS})")
    parser.add_argument("--write-before", type=Path, metavar="PATH",
                        help="write today's serving predictions as the 'before' file and stop")
    parser.add_argument("--model-commit", default="",
                        help="the commit of the model --write-before records")
    args = parser.parse_args(argv)
    defaults = perf_defaults()
    serving = check_serving(read_serving_rows(SERVING_CSV), defaults)
    if args.write_before:
        write_before(serving, args.write_before, args.model_commit)
        return 0
    training = check_training(training_rows(), defaults, replications=args.replications)
    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(("table", *SERVING_HEADER))
        writer.writerows(("serving", *cells) for cells in serving_cells(serving))
        writer.writerow(("table", *TRAINING_HEADER))
        writer.writerows(("training", *cells) for cells in training_cells(training))
        return 0
    before = read_before()
    if before:
        out(_table(BEFORE_HEADER, before_after_cells(serving, before)))
    else:
        out(_table(SERVING_HEADER, serving_cells(serving)))
    out("")
    out(_table(TRAINING_HEADER, training_cells(training)))
    out("")
    out(summary(serving, training))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
