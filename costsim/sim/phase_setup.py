"""A training phase's setup as the simulator and the optimizers read it."""

from __future__ import annotations

from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.phases import TrainingPhase
from costsim.domain.workload import TrainingSetup
from costsim.perf.layouts import LayoutConstraints
from costsim.perf.setups import training_setup


def phase_setup(arch: Architecture, phase: TrainingPhase,
                gpu: GpuSpec) -> tuple[TrainingSetup, LayoutConstraints]:
    """The phase's training setup on ``gpu`` (precision, sequence length, framework and its
    year, LoRA) and its fixed layout degrees and global batch; the layout search fills in the
    rest.

    Raises:
        InputError: a precision the GPU lacks.
    """
    base = training_setup(arch, gpu, task=phase.task, precision=phase.precision,
                          seq_len=phase.seq_len, lora_rank=phase.lora_rank, quant=phase.quant,
                          source=f"phases.{phase.name}.precision", framework=phase.framework,
                          framework_year=phase.framework_year)
    lay = phase.layout
    fixed = LayoutConstraints(
        tp=lay.tp if lay else None, pp=lay.pp if lay else None,
        dp=lay.dp if lay else None, zero=lay.zero if lay else None,
        global_batch_seqs=(None if phase.global_batch_tokens is None
                           else max(1, round(phase.global_batch_tokens / base.seq_len))))
    return base, fixed
