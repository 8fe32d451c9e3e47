"""Finite-burst replay: how serving benchmarks measure "throughput" (makespan of N requests).

A benchmark such as vLLM's ``benchmark_throughput`` sends every request at once and divides by
the time the last one finishes; the tail, when the longest requests run at a small batch, makes
that figure lower than the steady-state capacity of :mod:`costsim.perf.roofline`.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.errors import InputError
from costsim.perf.roofline import ReplicaTerms, decode_step_s, prefill_work_s


@dataclass(frozen=True, slots=True, kw_only=True)
class BurstResult:
    """A finite batch of requests sent at once, run to completion (how serving benchmarks such
    as vLLM's ``benchmark_throughput`` measure "throughput")."""

    requests: int
    makespan_s: float
    requests_per_s: float
    output_tokens_per_s: float


def burst_throughput(r: ReplicaTerms, prompt_tokens: list[int], output_tokens: list[int],
                     max_batch: int) -> BurstResult:
    """Run requests of the given lengths through continuous batching, in order, all present at
    time 0: admit while a slot is free (prefill compute added to the iteration), then one
    decode step for every running sequence; finished sequences free their slot.

    Unlike the steady-state ``max_requests_per_s``, the result includes the drain at the end,
    when the longest requests run at a small batch; a benchmark of a few hundred requests with
    a heavy-tailed output length reports a figure well below the steady state.
    """
    if len(prompt_tokens) != len(output_tokens) or not prompt_tokens:
        raise InputError("", "requests", "need equal, non-empty prompt and output lengths")
    pending = list(zip(prompt_tokens, output_tokens, strict=True))
    pending.reverse()
    running: list[list[int]] = []  # [tokens left to generate, tokens cached]
    elapsed_s = 0.0
    while pending or running:
        while pending and len(running) < max_batch:
            prompt, output = pending.pop()
            elapsed_s += float(prefill_work_s(r, prompt))
            running.append([output, prompt])
        context = sum(seq[1] for seq in running) / len(running)
        elapsed_s += float(decode_step_s(r, len(running), context))
        for seq in running:
            seq[0] -= 1
            seq[1] += 1
        running = [seq for seq in running if seq[0] > 0]
    total_output = sum(output_tokens)
    return BurstResult(requests=len(prompt_tokens), makespan_s=elapsed_s,
                       requests_per_s=len(prompt_tokens) / elapsed_s,
                       output_tokens_per_s=total_output / elapsed_s)
