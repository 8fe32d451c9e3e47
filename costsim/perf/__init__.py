"""Performance model: training step time, goodput, serving throughput and latency.

Public API (engines take everything as arguments; defaults come from
:func:`costsim.catalog.perf_defaults.perf_defaults`):

* :func:`estimate_training_run` — fastest fitting layout, steady time, goodput, all-in time, cost.
* :func:`choose_layout` — the fastest layout the memory engine says fits.
* :func:`estimate_training_step` / :func:`training_step_arrays` — step time of one / many layouts.
* :func:`score_fleet_options` — many (GPU, network, layout) options in one vectorized call.
* :func:`estimate_goodput` / :func:`goodput_arrays` — failures, checkpoints, restarts.
* :func:`estimate_serving` — throughput, p95 latency, SLO capacity, replicas, $/token.
* :func:`replica_terms`, :func:`stack_replicas`, :func:`max_throughput_arrays`,
  :func:`decode_step_s`, :func:`latency_at_load`, :func:`burst_throughput` — serving formulas.
"""

from costsim.perf.flops import hardware_flops_per_token, model_flops_per_token
from costsim.perf.goodput import Goodput, estimate_goodput, goodput_arrays
from costsim.perf.serving import (
    ReplicaTerms,
    ServingEstimate,
    burst_throughput,
    decode_step_s,
    estimate_serving,
    latency_at_load,
    max_throughput_arrays,
    replica_terms,
    stack_replicas,
)
from costsim.perf.train_estimate import (
    FleetOption,
    LayoutConstraints,
    TrainingEstimate,
    choose_layout,
    estimate_training_run,
    score_fleet_options,
)
from costsim.perf.training import (
    StepArrays,
    TrainingStep,
    estimate_training_step,
    training_step_arrays,
)

__all__ = [
    "FleetOption", "Goodput", "LayoutConstraints", "ReplicaTerms",
    "ServingEstimate", "StepArrays", "TrainingEstimate", "TrainingStep", "burst_throughput",
    "choose_layout", "decode_step_s", "estimate_goodput", "estimate_serving",
    "estimate_training_run", "estimate_training_step", "goodput_arrays",
    "hardware_flops_per_token", "latency_at_load", "max_throughput_arrays",
    "model_flops_per_token", "replica_terms", "score_fleet_options", "stack_replicas",
    "training_step_arrays",
]
