"""A measured training run beside the model's prediction for the same case (``costsim
calibrate train``, DESIGN §12): the same model, GPU, count, sequence length, global batch,
framework and precision, the model's fastest fitting layout for them."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from costsim.domain.gpu import GpuSpec
from costsim.domain.measurements import TrainingPoint
from costsim.domain.performance import PerfDefaults
from costsim.domain.workload import Quant, Task
from costsim.errors import CostsimError
from costsim.perf.layouts import LayoutConstraints
from costsim.perf.measured_training import (
    point_framework,
    point_mfu,
    point_precision,
    point_tokens_per_s,
)
from costsim.perf.setups import training_setup
from costsim.perf.train_estimate import choose_layout

# The verdict calls the model right for a stack when the median ratio is within this share
# (about the model's own P5-P95 band on published runs, costsim/data/allin_loss.csv).
AGREEMENT_SHARE = 0.20


@dataclass(frozen=True, slots=True, kw_only=True)
class PointCalibration:
    """One measured point and the model's figures for it (None: no layout fits)."""

    point: TrainingPoint
    seq_len: int
    measured_tokens_per_s: float
    measured_mfu: float
    predicted_tokens_per_s: float | None
    predicted_mfu: float | None
    layout: str  # the model's layout ("" when none fits)
    note: str  # why there is no prediction ("" when there is)

    @property
    def ratio(self) -> float | None:
        """measured / predicted tokens/s (the MFU ratio is the same: one FLOP definition)."""
        if self.predicted_tokens_per_s is None:
            return None
        return self.measured_tokens_per_s / self.predicted_tokens_per_s


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationSummary:
    """The ratios of every predicted point: median, range, and a one-line verdict."""

    points: int
    compared: int
    median_ratio: float | None
    min_ratio: float | None
    max_ratio: float | None
    verdict: str


def calibrate_point(point: TrainingPoint, gpu: GpuSpec,
                    defaults: PerfDefaults) -> PointCalibration:
    """``point`` beside the model's prediction for its case (``gpu`` = the point's GPU)."""
    base = training_setup(point.architecture, gpu, task=Task.TRAIN,
                          precision=point_precision(point, gpu), seq_len=point.seq_len,
                          lora_rank=None, quant=Quant.NONE, source=point.source,
                          framework=point_framework(point))
    batch = point.global_batch_tokens
    fixed = LayoutConstraints(global_batch_seqs=None if batch is None
                              else max(1, round(batch / base.seq_len)))
    measured = point_tokens_per_s(point, gpu)
    mfu = point_mfu(point, gpu, base.seq_len)
    try:
        choice = choose_layout(point.architecture, gpu, point.gpus, base, fixed,
                               network=defaults.network_for(gpu.name), defaults=defaults)
    except CostsimError as exc:
        return PointCalibration(point=point, seq_len=base.seq_len,
                                measured_tokens_per_s=measured, measured_mfu=mfu,
                                predicted_tokens_per_s=None, predicted_mfu=None, layout="",
                                note=str(exc))
    step = choice.step
    lay = step.setup.layout
    return PointCalibration(
        point=point, seq_len=base.seq_len, measured_tokens_per_s=measured, measured_mfu=mfu,
        predicted_tokens_per_s=step.tokens_per_s, predicted_mfu=step.mfu,
        layout=(f"tp={lay.tp} pp={lay.pp} dp={lay.dp} zero={lay.zero} micro_batch="
                f"{step.setup.micro_batch} grad_accum={step.setup.grad_accum} "
                f"recompute={step.setup.recompute.value}"),
        note="")


def summarize(rows: Sequence[PointCalibration]) -> CalibrationSummary:
    """Median and range of measured / predicted, and what they say."""
    ratios = [r.ratio for r in rows if r.ratio is not None]
    if not ratios:
        return CalibrationSummary(points=len(rows), compared=0, median_ratio=None,
                                  min_ratio=None, max_ratio=None,
                                  verdict="no point could be predicted (no layout fits)")
    median = statistics.median(ratios)
    spread = (f" (range {min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else "")
    head = f"median measured/predicted {median:.2f} over {len(ratios)} run(s){spread}: "
    if abs(median - 1) <= AGREEMENT_SHARE:
        tail = (f"the model is within ±{AGREEMENT_SHARE:.0%} of your stack; measured runs "
                "still win where they apply")
    elif median < 1:
        tail = (f"your stack runs at {median:.0%} of the model's rate: give these runs as "
                "--profile or measurements.training so estimates use them")
    else:
        tail = (f"your stack runs {median:.2f}x the model's rate: give these runs as --profile "
                "or measurements.training so estimates use them")
    return CalibrationSummary(points=len(rows), compared=len(ratios), median_ratio=median,
                              min_ratio=min(ratios), max_ratio=max(ratios), verdict=head + tail)
