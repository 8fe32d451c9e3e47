"""A batch that starves the fleet: most of each step idle, and the batch that would not.

A global batch of B sequences on dp replicas gives each pipeline B/dp sequences, m = B/(dp·b)
micro-batches of b; the 1F1B bubble is (pp−1)/(m+pp−1) of the step and the gradient
all-reduce, paid once per step, is hidden behind less compute the fewer micro-batches there are.
When the bubble plus the exposed communication take over half the step (issue 17: "leaves the
fleet mostly idle"), the warning names the smallest batch of a doubling ladder, up to the
largest published batch, whose fastest layout brings that share below half.
"""

from __future__ import annotations

from collections.abc import Callable

from costsim.perf.training import TrainingStep

# Over half of each step waiting on the pipeline or the network: most of the fleet is idle.
IDLE_SHARE_LIMIT = 0.5


def idle_share(step: TrainingStep) -> float:
    """Share of the step spent in the pipeline bubble and exposed communication."""
    if step.step_time_s <= 0:
        return 0.0
    return (step.pipeline_bubble_s + step.communication_exposed_s) / step.step_time_s


def batch_ladder(current_seqs: int, max_seqs: int) -> list[int]:
    """Batches to try, smallest first: ``current_seqs`` doubled until ``max_seqs`` (which
    ends the ladder when it is larger than the current batch)."""
    ladder: list[int] = []
    seqs = 2 * max(1, current_seqs)
    while seqs < max_seqs:
        ladder.append(seqs)
        seqs *= 2
    if max_seqs > current_seqs:
        ladder.append(max_seqs)
    return ladder


def starved_batch_warning(step: TrainingStep, *, max_seqs: int,
                          rate: Callable[[int], TrainingStep | None]) -> str | None:
    """The warning for ``step`` when its batch leaves the fleet mostly idle, else None.

    ``rate(seqs)`` is the fastest fitting step with a global batch of ``seqs`` sequences (None
    when none fits); ``max_seqs`` is the largest published batch in sequences.
    """
    share = idle_share(step)
    if share <= IDLE_SHARE_LIMIT:
        return None
    setup = step.setup
    head = (f"batch starves the fleet: pipeline bubble and exposed communication take "
            f"{share:.0%} of each step with {setup.global_batch} sequences "
            f"({setup.global_batch * setup.seq_len:,} tokens) on dp {setup.layout.dp} x pp "
            f"{setup.layout.pp}")
    for seqs in batch_ladder(setup.global_batch, max_seqs):
        better = rate(seqs)
        if better is not None and idle_share(better) <= IDLE_SHARE_LIMIT:
            return (f"{head}; a batch of {seqs} sequences ({seqs * setup.seq_len:,} tokens, "
                    f"--global-batch {seqs}) brings it to {idle_share(better):.0%} at "
                    f"{better.tokens_per_s / step.tokens_per_s:.1f}x the throughput")
    return (f"{head}; no batch up to the largest published one ({max_seqs} sequences) brings "
            "it below half: communication paid on every token (tensor-parallel all-reduces, "
            "pipeline sends) dominates; less model parallelism, fewer GPUs or a faster "
            "interconnect would help")
