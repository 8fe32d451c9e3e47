"""Derive the torch-compile framework factor from the fit half of the published runs.

No Megatron-class table exists for 124M-2B models on one H100 node, so the factor of the
``torch-compile`` framework (torch.compile'd single-node PyTorch loops: nanoGPT, modded-nanogpt,
nanochat) is measured against the calibration itself: for every run of the fit half whose stack
hint (scripts/allin_check.py STACK_HINT_RULE) is torch-compile, the steady MFU its published
GPU-hours imply (published / (hardware all-in × (1 + the median extra loss for its duration;
0 for a figure that scripts/allin_check.py FIGURE_BASIS_RULE calls steady: a timer)),
with the loss as shipped) over the MFU the Megatron-class model predicts for the same scenario.
Check-half runs are never read. The rows printed are those of
costsim/data/perf_framework_benchmarks.csv for torch-compile; the factor is their geometric
mean (costsim.domain.performance.framework_efficiencies).

    python scripts/derive_compile_factor.py
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from costsim.catalog.perf_defaults import allin_loss_defaults, perf_defaults
from costsim.domain.workload import TrainingFramework
from costsim.perf.allin_loss import extra_loss_median
from scripts.allin_check import published_runs, stack_hint
from scripts.fit_allin_loss import run_ratios
from scripts.published_table import FIT


def main() -> int:
    defaults = perf_defaults()
    # The Megatron-class calibration: the factor being derived must not enter its own estimate.
    efficiency = {k: v for k, v in defaults.training.framework_efficiency.items()
                  if k is not TrainingFramework.TORCH_COMPILE}
    defaults = replace(defaults, training=replace(defaults.training,
                                                  framework_efficiency=efficiency))
    loss = allin_loss_defaults()
    rows = [r for r in published_runs()
            if r["split"] == FIT and stack_hint(r)[0] == TrainingFramework.TORCH_COMPILE.value]
    ratios = []
    for run in run_ratios(rows, defaults):
        # a timed or throughput-derived figure holds no extra loss (FIGURE_BASIS_RULE)
        median_x = 0.0 if run.loss_free else extra_loss_median(loss, run.steady_wall_time_s)
        error = run.published_gpu_hours / (run.hardware_allin_gpu_hours * (1 + median_x))
        predicted = run.steady_mfu
        ratios.append(1 / error)
        print(f"{run.row['id']} {run.row['model']}: predicted MFU {predicted:.4f}, implied "
              f"{predicted / error:.4f} (published / (hardware all-in x (1 + {median_x:.3f}))"
              f" = {error:.3f}), ratio {1 / error:.3f}")
    factor = math.exp(statistics.fmean(math.log(r) for r in ratios))
    print(f"torch-compile factor (geometric mean of {len(ratios)}): {factor:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
