"""What ``costsim estimate train`` / ``estimate serve`` print: the JSON objects
(docs/performance.md) built from the performance model's estimates, and their text tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from costsim.cli.common import format_table
from costsim.cli.numbers import hours, percent, usd_amount, usd_rate
from costsim.perf.sizing import slo_text
from costsim.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MINUTE


def training_payload(est: Any, model: str, price_source: str,
                     extra_warnings: list[str]) -> dict[str, Any]:
    """The ``estimate train --json`` object (docs/performance.md)."""
    step = est.step
    setup = step.setup
    lay = setup.layout
    good = est.goodput
    return {
        "model": model,
        "params_total": est.params_total,
        "tokens": est.tokens,
        "gpu": est.gpu,
        "gpus": est.gpus,
        "network": est.network,
        "framework": setup.framework.value,
        "framework_efficiency": est.framework_efficiency,
        "stack_era": est.stack_era,
        "stack_efficiency": est.stack_efficiency,
        "layout": {"tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "zero": lay.zero, "sp": lay.sp,
                   "virtual_stages": lay.virtual_stages,
                   "micro_batch": setup.micro_batch, "grad_accum": setup.grad_accum,
                   "seq_len": setup.seq_len, "recompute": setup.recompute.value,
                   "global_batch": setup.global_batch},
        "global_batch": setup.global_batch,
        "global_batch_tokens": setup.global_batch * setup.seq_len,
        "global_batch_basis": est.global_batch_basis,
        "flops_total": est.flops_total,
        "step_time_s": step.step_time_s,
        "tokens_per_s": step.tokens_per_s,
        "basis": est.basis.value,
        "profile_source": est.profile_source or None,
        "predicted_tokens_per_s": (est.predicted_tokens_per_s
                                   if est.predicted_tokens_per_s is not None
                                   else step.tokens_per_s),
        "model_tflops_per_gpu": step.model_tflops_per_gpu,
        "hardware_tflops_per_gpu": step.hardware_tflops_per_gpu,
        "mfu": step.mfu,
        "hfu": step.hfu,
        "breakdown_s": {"compute": step.compute_s,
                        "communication_exposed": step.communication_exposed_s,
                        "pipeline_bubble": step.pipeline_bubble_s,
                        "sync": step.sync_s,
                        "tensor_parallel": step.tensor_parallel_s,
                        "data_parallel_exposed": step.data_parallel_exposed_s,
                        "pipeline_p2p": step.pipeline_p2p_s},
        "steady_wall_time_s": good.steady_wall_time_s,
        "goodput": good.goodput,
        "goodput_detail": {"mtbf_s": good.mtbf_s, "checkpoint_s": good.checkpoint_s,
                           "checkpoint_interval_s": good.checkpoint_interval_s,
                           "expected_interruptions": good.expected_interruptions,
                           "restart_s": good.restart_s,
                           "failure_loss_fraction": good.failure_loss_fraction,
                           "checkpoint_fraction": good.checkpoint_fraction,
                           "evaluation_fraction": good.evaluation_fraction},
        "wall_time_s": good.wall_time_s,
        "gpu_hours": est.gpu_hours,
        "price_usd_per_gpu_hour": est.price_usd_per_gpu_hour,
        "price_source": price_source,
        "cost_usd": est.cost_usd,
        "memory_per_gpu_bytes": est.memory_total_bytes,
        "memory_usable_bytes": est.memory_usable_bytes,
        "layouts_rated": est.candidates,
        "layouts_fitting": est.fitting,
        "warnings": [*est.warnings, *extra_warnings],
    }


def _duration(seconds: float) -> str:
    if seconds >= 2 * SECONDS_PER_DAY:
        return f"{seconds / SECONDS_PER_DAY:.2f} days"
    if seconds >= 2 * SECONDS_PER_HOUR:
        return f"{seconds / SECONDS_PER_HOUR:.2f} hours"
    return f"{seconds / SECONDS_PER_MINUTE:.1f} minutes"


def _train_basis(p: dict[str, Any]) -> str:
    """Where the steady rate comes from (DESIGN §12)."""
    if p["basis"] == "predicted":
        return "predicted (the performance model)"
    return (f"{p['basis']} from {p['profile_source']} (the model alone: "
            f"{p['predicted_tokens_per_s']:,.0f} tokens/s)")


def print_train(p: dict[str, Any]) -> None:
    """The ``estimate train`` table of a :func:`training_payload`."""
    lay = p["layout"]
    b = p["breakdown_s"]
    rows = [
        ("model / params", f"{p['model']} / {p['params_total'] / 1e9:.2f}B"),
        ("fleet", f"{p['gpus']} x {p['gpu']} ({p['network']})"),
        ("framework", f"{p['framework']} (efficiency x{p['framework_efficiency']:.2f} of the "
                      f"Megatron-class calibration; {p['stack_era']}-era stack, precision and "
                      f"GPU memory x{p['stack_efficiency']:.2f})"),
        ("layout", f"tp={lay['tp']} pp={lay['pp']} dp={lay['dp']} zero={lay['zero']} "
                   f"sp={lay['sp']} virtual_stages={lay['virtual_stages']} "
                   f"micro_batch={lay['micro_batch']} grad_accum="
                   f"{lay['grad_accum']} seq_len={lay['seq_len']} recompute={lay['recompute']}"),
        ("global batch", f"{p['global_batch']} sequences = {p['global_batch_tokens']:,} tokens "
                         f"({p['global_batch_basis']})"),
        ("step time", f"{p['step_time_s']:.3f} s (compute {b['compute']:.3f}, comm exposed "
                      f"{b['communication_exposed']:.3f}, bubble {b['pipeline_bubble']:.3f}, "
                      f"sync {b['sync']:.3f})"),
        ("throughput", f"{p['tokens_per_s']:,.0f} tokens/s; {p['model_tflops_per_gpu']:.0f} "
                       f"model TFLOPS/GPU; MFU {percent(p['mfu'])}, HFU {percent(p['hfu'])}"),
        ("rate basis", _train_basis(p)),
        ("steady wall time", _duration(p["steady_wall_time_s"])),
        ("goodput", percent(p["goodput"])),
        ("all-in wall time", _duration(p["wall_time_s"])),
        ("GPU-hours", hours(p["gpu_hours"])),
        ("price", f"${usd_rate(p['price_usd_per_gpu_hour'])}/GPU-h "
                  f"({p['price_source'] or 'none'})"),
        ("cost", usd_amount(p["cost_usd"])),
    ]
    print(format_table(rows, ("estimate train", "")))
    for warning in p["warnings"]:
        print(f"warning: {warning}")


def serving_payload(est: Any, model: str, price_source: str, extra_warnings: list[str],
                    advice: Sequence[str] = ()) -> dict[str, Any]:
    """The ``estimate serve --json`` object (docs/performance.md)."""
    return {
        "model": model,
        "gpu": est.gpu,
        "gpus_per_replica": est.gpus_per_replica,
        "engine": est.engine.value,
        "precision": est.precision.value,
        "quant": est.quant.value,
        "kv_dtype": est.kv_dtype.value,
        "prompt_tokens": est.prompt_tokens,
        "output_tokens": est.output_tokens,
        "batch": est.batch,
        "decode_tokens_per_s": est.decode_tokens_per_s,
        "decode_step_s": est.decode_step_s,
        "prefill_s": est.prefill_s,
        "max_batch": est.max_batch,
        "kv_capacity_tokens": est.kv_capacity_tokens,
        "weights_bytes_per_gpu": est.weights_bytes_per_gpu,
        "output_tokens_per_s": est.output_tokens_per_s,
        "max_requests_per_s": est.max_requests_per_s,
        "ttft_s": est.ttft_s,
        "tpot_s": est.tpot_s,
        "ttft_p95_s": est.ttft_p95_s,
        "tpot_p95_s": est.tpot_p95_s,
        "load_requests_per_s_per_replica": est.load_requests_per_s,
        "utilization": est.utilization,
        "max_requests_per_s_at_slo": est.max_requests_per_s_at_slo,
        "rate_requests_per_s": est.rate_requests_per_s,
        "replicas_needed": est.replicas_needed,
        "sizing_rule": est.sizing_rule.value,
        "target_utilization": est.target_utilization,
        "slo_ttft_p95_s": est.slo_ttft_s,
        "slo_tpot_p95_s": est.slo_tpot_s,
        "slo_source": est.slo_source.value,
        "slo_met": est.slo_met,
        "capacity_requests_per_s_per_replica": est.capacity_requests_per_s,
        "price_usd_per_gpu_hour": est.price_usd_per_gpu_hour,
        "price_source": price_source,
        "cost_per_million_output_tokens_usd": est.cost_per_million_output_tokens_usd,
        "cost_per_million_tokens_usd": est.cost_per_million_tokens_usd,
        # DESIGN §12: the basis of the throughput, SLO capacity, replica and cost figures
        # (latencies are always the model's) and the measured rows they rest on
        "basis": est.basis.value,
        "profile_source": est.profile_source,
        "measured_over_predicted_capacity": est.measured_over_predicted,
        "warnings": [*est.warnings, *extra_warnings],
        "advice": list(advice),
    }


def _latency_load(p: dict[str, Any]) -> str:
    """At what load the TTFT / TPOT row was computed."""
    load = p["load_requests_per_s_per_replica"]
    if load is None:
        return f"idle replica, batch {p['batch']} (give --rate for latency under load)"
    return (f"{p['rate_requests_per_s']:g} req/s over {p['replicas_needed']} replicas = "
            f"{load:.2f} req/s per replica ({p['utilization']:.0%} of max)")


def _sizing(p: dict[str, Any]) -> str:
    """The bound that set a replica's capacity."""
    capacity = p["capacity_requests_per_s_per_replica"]
    if p["sizing_rule"] == "target-utilization":
        return (f"{capacity:.2f} req/s per replica = target utilization "
                f"{p['target_utilization']:.0%} of max")
    if not p["slo_met"]:
        return "none: no load meets the SLO"
    return (f"{capacity:.2f} req/s per replica = the SLO's limit (below target utilization "
            f"{p['target_utilization']:.0%} of max)")


def _slo(p: dict[str, Any]) -> str:
    """The SLO that applied, where it came from, and the highest rate that meets it."""
    limit = p["max_requests_per_s_at_slo"]
    met = (f"met up to {limit:.2f} req/s per replica" if p["slo_met"]
           else "not met at any load")
    slo = slo_text(p["slo_ttft_p95_s"], p["slo_tpot_p95_s"])
    return f"{slo} ({p['slo_source']}); {met}"


def _serve_basis(p: dict[str, Any]) -> str:
    """Where throughput and capacity come from (latencies are the model's)."""
    if p["basis"] == "predicted":
        return "predicted (the performance model)"
    ratio = p["measured_over_predicted_capacity"]
    versus = "" if ratio is None else f", {ratio:.2f} x the model's capacity"
    return (f"{p['basis']} throughput and capacity from {p['profile_source']}{versus}; "
            "latencies predicted")


def print_serve(p: dict[str, Any]) -> None:
    """The ``estimate serve`` table of a :func:`serving_payload`."""
    def opt(value: Any, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    rows = [
        ("model", f"{p['model']} ({p['precision']}, quant {p['quant']}, KV {p['kv_dtype']})"),
        ("replica", f"{p['gpus_per_replica']} x {p['gpu']}, {p['engine']}"),
        ("request", f"{p['prompt_tokens']} prompt + {p['output_tokens']} output tokens"),
        ("decode", f"{p['decode_tokens_per_s']:.1f} tokens/s per sequence at batch "
                   f"{p['batch']}"),
        ("max batch", f"{p['max_batch']} (KV room {p['kv_capacity_tokens']:,} tokens)"),
        ("max throughput", f"{p['max_requests_per_s']:.2f} req/s, "
                           f"{p['output_tokens_per_s']:,.0f} output tokens/s"),
        ("TTFT / TPOT", f"{p['ttft_s']:.3f} s / {p['tpot_s'] * 1000:.1f} ms "
                        f"(p95 {p['ttft_p95_s']:.3f} s / {p['tpot_p95_s'] * 1000:.1f} ms)"),
        ("latency load", _latency_load(p)),
        ("SLO", _slo(p)),
        ("sizing", _sizing(p)),
        ("replicas needed", opt(p["replicas_needed"], "d")),
        ("price", f"${usd_rate(p['price_usd_per_gpu_hour'])}/GPU-h "
                  f"({p['price_source'] or 'none'})"),
        ("$ per M tokens", f"{usd_rate(p['cost_per_million_tokens_usd'])} (output only "
                           f"{usd_rate(p['cost_per_million_output_tokens_usd'])})"),
        ("basis", _serve_basis(p)),
    ]
    print(format_table(rows, ("estimate serve", "")))
    for warning in p["warnings"]:
        print(f"warning: {warning}")
    for line in p["advice"]:
        print(f"advice: {line}")
