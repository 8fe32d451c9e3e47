"""The performance model's shipped defaults (``costsim/data/perf_*.csv``), with their sources."""

from __future__ import annotations

import math
from functools import cache

from costsim.catalog.resources import read_data_csv
from costsim.domain.performance import (
    AllinLossAssumptions,
    EngineProfile,
    FinetuneRecipe,
    FrameworkComparison,
    GlobalBatchDefaults,
    GoodputAssumptions,
    Interconnect,
    PerfDefaults,
    PublishedBatch,
    QuantKernel,
    ServingAssumptions,
    StackFactors,
    TrainingAssumptions,
    framework_efficiencies,
)
from costsim.domain.precision import Dtype
from costsim.domain.workload import ServingEngine, TrainingFramework
from costsim.errors import CatalogError, name_key
from costsim.units import BYTES_PER_GIB


def _assumptions() -> dict[str, dict[str, tuple[float, str]]]:
    groups: dict[str, dict[str, tuple[float, str]]] = {}
    for row in read_data_csv("perf_assumptions.csv"):
        groups.setdefault(row["group"], {})[row["key"]] = (float(row["value"]), row["source"])
    return groups


def _yes(row: dict[str, str], key: str) -> bool:
    """A yes/no column of a shipped data file."""
    value = row[key].strip().lower()
    if value not in {"yes", "no"}:
        raise ValueError(f"perf_engines.csv row {row['engine']}: {key} must be yes or no "
                         f"(got {value!r})")
    return value == "yes"


def framework_comparisons() -> tuple[FrameworkComparison, ...]:
    """The published framework-vs-Megatron-class utilizations (perf_framework_benchmarks.csv)."""
    return tuple(
        FrameworkComparison(framework=TrainingFramework(row["framework"]), run=row["run"],
                            utilization=float(row["utilization"]),
                            reference_run=row["reference_run"],
                            reference_utilization=float(row["reference_utilization"]),
                            source=row["source"], date=row["date"])
        for row in read_data_csv("perf_framework_benchmarks.csv"))


def finetune_recipes() -> tuple[FinetuneRecipe, ...]:
    """Published fine-tuning recipes' global batches (perf_finetune_batches.csv)."""
    return tuple(
        FinetuneRecipe(kind=row["kind"], recipe=row["recipe"],
                       global_batch_seqs=int(row["global_batch_seqs"]),
                       seq_len=int(row["seq_len"]) if row["seq_len"] else None,
                       source=row["source"])
        for row in read_data_csv("perf_finetune_batches.csv"))


def published_batches() -> tuple[PublishedBatch, ...]:
    """Published pre-training runs' global batches on their fleets (perf_batch_scaling.csv):
    the sources of the default pre-training batch (costsim.perf.batch.pretrain_batch_tokens)."""
    return tuple(
        PublishedBatch(run=row["run"], kind=row["kind"], accelerator=row["accelerator"],
                       accelerators=int(row["accelerators"]) if row["accelerators"] else None,
                       seq_len=int(row["seq_len"]),
                       global_batch_seqs=(int(row["global_batch_seqs"])
                                          if row["global_batch_seqs"] else None),
                       global_batch_tokens=float(row["global_batch_tokens"]),
                       layout=row["layout"], role=row["role"], source=row["source"],
                       date=row["date"])
        for row in read_data_csv("perf_batch_scaling.csv"))


def _stack_rows() -> dict[tuple[str, str], tuple[float, str]]:
    return {(row["factor"], row["key"]): (float(row["value"]), row["source"])
            for row in read_data_csv("perf_stack_factors.csv")}


def stack_factors() -> StackFactors:
    """Era, precision and memory-size factors on η∞ (perf_stack_factors.csv)."""
    rows = _stack_rows()
    return StackFactors(
        legacy_last_year=int(rows[("era", "legacy_last_year")][0]),
        legacy_factor=rows[("era", "legacy")][0],
        precision_factor={Dtype(key): value for (factor, key), (value, _) in rows.items()
                          if factor == "precision"},
        memory_small_gib=rows[("memory", "small_gib")][0],
        memory_full_gib=rows[("memory", "full_gib")][0],
        memory_small_factor=rows[("memory", "small_factor")][0],
        sources={f"{factor}.{key}": source for (factor, key), (_, source) in rows.items()},
    )


@cache
def perf_defaults() -> PerfDefaults:
    """The default assumptions of the performance model (loaded once)."""
    groups = _assumptions()
    train, good, serve = groups["training"], groups["goodput"], groups["serving"]

    efficiency_rows = read_data_csv("perf_efficiency.csv")
    training = TrainingAssumptions(
        compute_efficiency_by_generation={
            row["generation"]: float(row["compute_efficiency"]) for row in efficiency_rows
        },
        # Generations without a published training table (turing, ada): the Ampere/Hopper
        # midpoint discounted for their low bandwidth-to-compute ratio; documented as assumed.
        default_compute_efficiency=0.50,
        tp_overlap_by_generation={
            row["generation"]: float(row["tp_comm_overlap"]) for row in efficiency_rows
        },
        width_half_point=train["width_half_point"][0],
        gemm_half_tokens_by_generation={
            row["generation"]: float(row["gemm_half_tokens"]) for row in efficiency_rows
        },
        # Generations without a GEMM profile (turing, ada): their ridge points (dense peak / HBM
        # bandwidth: T4 203, L4 403, L40S 419 FLOP/byte) are nearer H100's 295 than A100's
        # 153, so the hopper knee; documented as assumed.
        default_gemm_half_tokens=float(
            next(row["gemm_half_tokens"] for row in efficiency_rows
                 if row["generation"] == "hopper")),
        sync_overhead_per_node_doubling=train["sync_overhead_per_node_doubling"][0],
        nvlink_efficiency=train["nvlink_efficiency"][0],
        pcie_efficiency=train["pcie_efficiency"][0],
        backward_share_of_compute=train["backward_share_of_compute"][0],
        framework_efficiency=framework_efficiencies(framework_comparisons()),
        hbm_efficiency=train["hbm_efficiency"][0],
        dequant_bytes_per_weight=train["dequant_bytes_per_weight"][0],
        stack=stack_factors(),
        sources={
            **{key: source for key, (_, source) in train.items()},
            **{f"efficiency.{row['generation']}": row["source"] for row in efficiency_rows},
            **{f"tp_overlap.{row['generation']}": row["tp_overlap_source"]
               for row in efficiency_rows},
            **{f"gemm_half_tokens.{row['generation']}": row["gemm_half_tokens_source"]
               for row in efficiency_rows},
        },
    )
    goodput = GoodputAssumptions(
        interruptions_per_gpu_hour=good["interruptions_per_gpu_hour"][0],
        restart_s=good["restart_s"][0],
        checkpoint_write_gb_per_s_per_node=good["checkpoint_write_gb_per_s_per_node"][0],
        checkpoint_bytes_per_param=good["checkpoint_bytes_per_param"][0],
        checkpoint_fixed_s=good["checkpoint_fixed_s"][0],
        evaluation_fraction=good["evaluation_fraction"][0],
        sources={key: source for key, (_, source) in good.items()},
    )
    engines = {
        ServingEngine(row["engine"]): EngineProfile(
            engine=ServingEngine(row["engine"]),
            hbm_efficiency=float(row["hbm_efficiency"]),
            compute_efficiency=float(row["compute_efficiency"]),
            max_batch=int(row["max_batch"]),
            memory_utilization=float(row["memory_utilization"]),
            step_overhead_s=float(row["step_overhead_s"]),
            step_overhead_per_seq_s=float(row["step_overhead_per_seq_s"]),
            launch_s_per_layer=float(row["launch_s_per_layer"]),
            allreduce_latency_s=(float(row["allreduce_latency_s"])
                                 if row["allreduce_latency_s"] else None),
            chunked_prefill=_yes(row, "chunked_prefill"),
            paged_kv=_yes(row, "paged_kv"),
            gddr_hbm_efficiency=(float(row["gddr_hbm_efficiency"])
                                 if row["gddr_hbm_efficiency"] else None),
            fp8_kv_cache=_yes(row, "fp8_kv_cache"),
            attention_bandwidth_factor=(float(row["attention_bandwidth_factor"])
                                        if row["attention_bandwidth_factor"] else 1.0),
            fp8_compute_factor=(float(row["fp8_compute_factor"])
                                if row["fp8_compute_factor"] else 1.0),
            source=row["source"],
        )
        for row in read_data_csv("perf_engines.csv")
    }
    quant_kernels = {
        (ServingEngine(row["engine"]), row["quant"]): QuantKernel(
            engine=ServingEngine(row["engine"]), quant=row["quant"], family=row["family"],
            fused_max_batch=float(row["fused_max_batch"]) if row["fused_max_batch"]
            else math.inf,
            bandwidth_factor=(float(row["bandwidth_factor"]) if row["bandwidth_factor"]
                              else 1.0),
            source=row["source"])
        for row in read_data_csv("perf_quant_kernels.csv")
    }
    serving = ServingAssumptions(
        engines=engines,
        allreduce_latency_s=serve["allreduce_latency_s"][0],
        nvlink_efficiency=train["nvlink_efficiency"][0],
        pcie_efficiency=train["pcie_efficiency"][0],
        runtime_reserve_bytes=round(serve["runtime_reserve_gib"][0] * BYTES_PER_GIB),
        tail_wait_multiplier=serve["tail_wait_multiplier"][0],
        tail_concurrency_z=serve["tail_concurrency_z"][0],
        target_utilization=serve["target_utilization"][0],
        default_slo_ttft_p95_s=serve["default_slo_ttft_p95_s"][0],
        default_slo_tpot_p95_s=serve["default_slo_tpot_p95_s"][0],
        quant_kernels=quant_kernels,
        sources={key: source for key, (_, source) in serve.items()},
    )
    networks: dict[str, Interconnect] = {}
    default_by_gpu: dict[str, str] = {}
    for row in read_data_csv("perf_networks.csv"):
        networks[row["name"]] = Interconnect(
            name=row["name"],
            node_bandwidth_gbit_per_s=float(row["node_bandwidth_gbit_per_s"]),
            gpus_per_node=int(row["gpus_per_node"]),
            efficiency=float(row["efficiency"]),
            source=row["source"],
        )
        for gpu in filter(None, row["default_for_gpus"].split(";")):
            default_by_gpu[gpu] = row["name"]
    return PerfDefaults(
        training=training,
        goodput=goodput,
        serving=serving,
        networks=networks,
        default_network_by_gpu=default_by_gpu,
        fallback_network="eth-100",
        batch=GlobalBatchDefaults.from_recipes(finetune_recipes(),
                                               published=published_batches()),
    )


@cache
def allin_loss_defaults() -> AllinLossAssumptions:
    """What real runs lose beyond hardware faults, and the models' errors
    (``costsim/data/allin_loss.csv``; the loss fitted by scripts/fit_allin_loss.py on the fit
    half of the published runs, the training error estimated by scripts/training_model_error.py
    and the serving error by scripts/serving_model_error.py on the rated held-out sets)."""
    rows = {row["key"]: row for row in read_data_csv("allin_loss.csv")}
    return AllinLossAssumptions(
        extra_loss_median=float(rows["extra_loss_median"]["value"]),
        extra_loss_sigma=float(rows["extra_loss_sigma"]["value"]),
        throughput_error_sigma=float(rows["throughput_error_sigma"]["value"]),
        extra_loss_onset_days=float(rows["extra_loss_onset_days"]["value"]),
        training_error_sigma=float(rows["training_error_sigma"]["value"]),
        serving_error_sigma=float(rows["serving_error_sigma"]["value"]),
        sources={key: row["source"] for key, row in rows.items()},
    )


def network_names() -> tuple[str, ...]:
    """Names of the shipped inter-node networks."""
    return tuple(perf_defaults().networks)


def get_network(name: str, source: str = "--network") -> Interconnect:
    """Return the named inter-node network (case, '-', '_' and spaces ignored).

    Raises:
        CatalogError: unknown network; the message suggests close names.
    """
    networks = perf_defaults().networks
    by_key = {name_key(key): value for key, value in networks.items()}
    found = by_key.get(name_key(name))
    if found is None:
        raise CatalogError("network", name, networks, source=source)
    return found
