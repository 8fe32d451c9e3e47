"""Throughput of the performance model: option evaluations per second.

Run: ``.venv/bin/python benchmarks/bench_perf.py`` (prints one line per benchmark).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from costsim.catalog.gpus import get_gpu
from costsim.catalog.models import load_preset
from costsim.catalog.perf_defaults import perf_defaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import (
    InferenceSetup,
    ParallelLayout,
    Quant,
    Recompute,
    ServingEngine,
    Task,
    TrainingSetup,
)
from costsim.memory.runtime import DEFAULT_POLICY
from costsim.memory.shape import model_shape
from costsim.perf.goodput import goodput_arrays
from costsim.perf.latency import latency_at_load
from costsim.perf.roofline import decode_step_s, replica_terms
from costsim.perf.serving import estimate_serving
from costsim.perf.sizing import replicas_for_rate
from costsim.perf.train_estimate import LayoutConstraints, choose_layout
from costsim.perf.training import (
    LayoutArrays,
    estimate_training_step,
    hardware_terms,
    training_step_arrays,
)


def _rate(label: str, count: int, run: Callable[[], object], repeat: int = 5) -> None:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<58} {count:>9,} evaluations in {best * 1e3:8.2f} ms = "
          f"{count / best:>14,.0f} /s")


def main() -> None:
    defaults = perf_defaults()
    arch = load_preset("llama-2-70b").architecture
    shape = model_shape(arch)
    gpu = get_gpu("H100")
    network = defaults.network_for(gpu.name)
    hw = hardware_terms(gpu, Dtype.BF16, network, defaults.training)
    rng = np.random.default_rng(0)
    n = 200_000
    layouts = LayoutArrays(
        tp=rng.choice([1, 2, 4, 8], n), pp=rng.choice([1, 2, 4, 8, 16], n),
        dp=rng.choice([1, 8, 64, 512], n), zero=rng.integers(0, 4, n),
        micro_batch=rng.choice([1, 2, 4], n), grad_accum=rng.choice([1, 8, 64], n),
        seq_len=rng.choice([2048, 4096, 8192], n), recompute=rng.integers(0, 3, n))
    _rate("training step time, vectorized (numpy arrays)", n,
          lambda: training_step_arrays(shape, hw, layouts, defaults.training))

    setup = TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16,
                          layout=ParallelLayout(tp=8, pp=4, dp=32, zero=1), seq_len=4096,
                          grad_accum=8, recompute=Recompute.SELECTIVE)
    k = 2_000
    _rate("training step time, one call per option (scalar API)", k,
          lambda: [estimate_training_step(shape, gpu, setup, network=network,
                                          assumptions=defaults.training) for _ in range(k)])

    _rate("goodput, vectorized", n,
          lambda: goodput_arrays(rng.integers(8, 65536, n), 7e10, 8, defaults.goodput))

    serve_setup = InferenceSetup(precision=Dtype.BF16, layout=ParallelLayout(tp=4),
                                 context_tokens=2048)
    r = replica_terms(arch, gpu, serve_setup, defaults.serving.engines[next(
        iter(defaults.serving.engines))], defaults.serving, DEFAULT_POLICY)
    batches = rng.integers(1, 256, n)
    contexts = rng.integers(128, 4096, n)
    _rate("serving decode step, vectorized", n, lambda: decode_step_s(r, batches, contexts))

    # The simulator's autoscaler: replicas for a day of one-minute buckets, then the latency of
    # each bucket at its per-replica load.
    capacity = 2.0
    bucket_rates = rng.uniform(0.0, 100.0, 1440)
    _rate("serving replicas for a rate, vectorized (1-minute buckets)", bucket_rates.size,
          lambda: replicas_for_rate(bucket_rates, capacity))
    loads = bucket_rates / np.maximum(replicas_for_rate(bucket_rates, capacity), 1)
    _rate("serving latency at a per-replica load, vectorized", loads.size,
          lambda: latency_at_load(r, loads, 1024, 256, 64, 2.9, defaults.serving))
    eight_b = load_preset("llama-3-8b").architecture
    _rate("estimate_serving incl. SLO capacity (scalar API)", 20,
          lambda: [estimate_serving(eight_b, gpu, engine=ServingEngine.VLLM,
                                    precision=Dtype.BF16, quant=Quant.NONE, kv_dtype=None,
                                    prompt_tokens=512, output_tokens=256, batch=1, tp=None,
                                    rate_requests_per_s=36.0, slo_ttft_s=None,
                                    slo_tpot_s=None, price_usd_per_gpu_hour=2.0,
                                    assumptions=defaults.serving) for _ in range(20)],
          repeat=3)

    base = replace(setup, layout=ParallelLayout())
    choice = choose_layout(arch, gpu, 512, base, LayoutConstraints(), network=network,
                           defaults=defaults)
    _rate(f"layout search incl. memory verdicts (512 GPUs, {choice.candidates} layouts)",
          choice.candidates,
          lambda: choose_layout(arch, gpu, 512, base, LayoutConstraints(), network=network,
                                defaults=defaults), repeat=3)


if __name__ == "__main__":
    main()
