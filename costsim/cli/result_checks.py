"""Results that would mislead someone paying for them are refused, with the reason.

A price is only worth printing for a run that can happen: a training run shorter than one
optimizer step has no meaningful time or cost (it rounds to "$0"), and a run whose fleet fails
faster than it checkpoints never finishes, so any cost for it is fiction (docs/inputs.md).
"""

from __future__ import annotations

from costsim.errors import InfeasibleError, InputError
from costsim.perf.train_estimate import TrainingEstimate


def check_training_result(est: TrainingEstimate) -> None:
    """Refuse a training estimate that is not a run a user could pay for.

    Raises:
        InputError: ``--tokens`` is less than one optimizer step of the chosen global batch.
        InfeasibleError: failures outpace progress on this many GPUs (the goodput floor).
    """
    setup = est.setup
    step_tokens = setup.global_batch * setup.seq_len
    if est.tokens < step_tokens:
        raise InputError("", "--tokens", f"must be at least one optimizer step, "
                                         f"{step_tokens:,} tokens (global batch "
                                         f"{setup.global_batch} x seq-len {setup.seq_len}); "
                                         f"got {est.tokens:g} (or give a smaller "
                                         "--global-batch / --global-batch-tokens)")
    if est.goodput.would_not_finish:
        goodput = est.goodput
        raise InfeasibleError(
            f"--gpus {est.gpus}: the run would not finish: this fleet fails every "
            f"{goodput.mtbf_s / 60:,.1f} minutes and each failure costs a "
            f"{goodput.restart_s:,.0f} s restart plus the work since the last checkpoint, so "
            f"goodput falls to its {goodput.goodput:.0%} floor; use fewer GPUs")
