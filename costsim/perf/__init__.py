"""Performance model: training step time, goodput, serving throughput and latency.

Public API (engines take everything as arguments; defaults come from
:func:`costsim.catalog.perf_defaults.perf_defaults`):

* :func:`estimate_training_run` — fastest fitting layout, steady time, goodput, all-in time, cost.
* :func:`choose_layout` — the fastest layout the memory engine says fits.
* :func:`estimate_training_step` / :func:`training_step_arrays` — step time of one / many layouts.
* :func:`score_fleet_options` — many (GPU, network, layout) options in one vectorized call.
* :func:`estimate_goodput` / :func:`goodput_arrays` — failures, checkpoints, restarts.
* :func:`simulate_allin`, :func:`sample_extra_loss`, :func:`sample_hardware_wall_s` — what real
  runs lose beyond hardware faults, by Monte Carlo (:mod:`costsim.perf.allin_loss`).
* :func:`estimate_serving` — throughput, p95 latency, SLO capacity, replicas, $/token.
* :func:`replica_terms`, :func:`stack_replicas`, :func:`max_throughput_arrays`,
  :func:`decode_step_s` — the serving roofline (:mod:`costsim.perf.roofline`).
* :func:`latency_at_load`, :func:`max_rate_at_slo` — latency at a load
  (:mod:`costsim.perf.latency`).
* :func:`sizing_rule`, :func:`capacity_under_rule`, :func:`replicas_for_rate` — how much load
  a replica may take and how many replicas a rate needs (:mod:`costsim.perf.sizing`; pure, for
  the simulator's autoscaler).
* :func:`quantization_candidates`, :func:`better_quantizations`, :func:`estimate_with_advice` —
  quantization advice
  (:mod:`costsim.perf.quant_advice`).
* :func:`burst_throughput` — finite benchmark replay (:mod:`costsim.perf.burst`).
"""

from costsim.perf.allin_loss import (
    AllinSample,
    extra_loss_median,
    sample_extra_loss,
    sample_hardware_wall_s,
    sample_throughput_error,
    simulate_allin,
)
from costsim.perf.burst import BurstResult, burst_throughput
from costsim.perf.flops import hardware_flops_per_token, model_flops_per_token
from costsim.perf.goodput import Goodput, estimate_goodput, goodput_arrays
from costsim.perf.latency import LoadLatency, latency_at_load, max_rate_at_slo
from costsim.perf.quant_advice import (
    QuantCandidate,
    QuantOption,
    better_quantizations,
    estimate_with_advice,
    quantization_candidates,
)
from costsim.perf.roofline import (
    ReplicaTerms,
    decode_step_s,
    max_throughput_arrays,
    replica_terms,
    stack_replicas,
)
from costsim.perf.serving import ServingEstimate, estimate_serving
from costsim.perf.sizing import (
    ReplicaCapacity,
    SizingBound,
    SizingRule,
    SloSource,
    capacity_under_rule,
    replicas_for_rate,
    sizing_rule,
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
    "AllinSample", "BurstResult", "FleetOption", "Goodput", "LayoutConstraints", "LoadLatency",
    "QuantCandidate", "QuantOption", "ReplicaCapacity", "ReplicaTerms", "ServingEstimate",
    "SizingBound", "SizingRule", "SloSource", "StepArrays", "TrainingEstimate", "TrainingStep",
    "better_quantizations", "burst_throughput", "capacity_under_rule", "choose_layout",
    "decode_step_s", "estimate_goodput", "estimate_serving", "estimate_training_run",
    "estimate_training_step", "estimate_with_advice", "extra_loss_median", "goodput_arrays",
    "hardware_flops_per_token", "latency_at_load", "max_rate_at_slo", "max_throughput_arrays",
    "model_flops_per_token", "quantization_candidates", "replica_terms", "replicas_for_rate",
    "sample_extra_loss",
    "sample_hardware_wall_s", "sample_throughput_error", "score_fleet_options", "simulate_allin",
    "sizing_rule", "stack_replicas", "training_step_arrays",
]
