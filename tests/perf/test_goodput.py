"""Goodput: Young/Daly checkpoint interval, failures, restarts and evaluation."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from costsim.domain.performance import PerfDefaults
from costsim.perf.goodput import MIN_GOODPUT, estimate_goodput, goodput_arrays


def test_interruption_rate_reproduces_llama3(defaults: PerfDefaults) -> None:
    """419 unexpected interruptions in 54 days on 16,384 GPUs (Llama 3 paper)."""
    rate = defaults.goodput.interruptions_per_gpu_hour
    assert rate * 54 * 24 * 16384 == pytest.approx(419, rel=0.01)


def test_young_interval_and_goodput_formula(defaults: PerfDefaults) -> None:
    g = estimate_goodput(86400.0, 1024, 7_000_000_000, gpus_per_node=8,
                         assumptions=defaults.goodput)
    a = defaults.goodput
    mtbf = 3600 / (a.interruptions_per_gpu_hour * 1024)
    assert g.mtbf_s == pytest.approx(mtbf)
    c = a.checkpoint_fixed_s + 7e9 * a.checkpoint_bytes_per_param / (128 * 1e9)
    assert g.checkpoint_s == pytest.approx(c)
    tau = math.sqrt(2 * c * mtbf)
    assert g.checkpoint_interval_s == pytest.approx(tau)
    expected = (1 - a.evaluation_fraction) * (1 - (a.restart_s + tau / 2) / mtbf) / (1 + c / tau)
    assert g.goodput == pytest.approx(expected)
    assert g.wall_time_s == pytest.approx(86400 / expected)


def test_llama3_scale_keeps_about_90_percent(defaults: PerfDefaults) -> None:
    """Llama 3 reports >90 % effective training time on 16,384 H100s; with evaluation on top
    the model lands in the high 80s."""
    g = estimate_goodput(54 * 86400.0, 16384, 405_000_000_000, gpus_per_node=8,
                         assumptions=defaults.goodput)
    assert 0.83 < g.goodput < 0.95
    assert g.expected_interruptions == pytest.approx(419 / g.goodput, rel=0.15)


def test_goodput_falls_with_fleet_size(defaults: PerfDefaults) -> None:
    arrays = goodput_arrays(np.array([8, 512, 16384, 262144]), 70e9, 8, defaults.goodput)
    assert np.all(np.diff(arrays.goodput) < 0)


def test_no_failures_leaves_evaluation_only(defaults: PerfDefaults) -> None:
    calm = replace(defaults.goodput, interruptions_per_gpu_hour=0.0)
    g = estimate_goodput(1000.0, 64, 1e9, gpus_per_node=8, assumptions=calm)
    assert g.goodput == pytest.approx(1 - calm.evaluation_fraction)
    assert g.expected_interruptions == 0


def test_failures_faster_than_progress_hit_the_floor(defaults: PerfDefaults) -> None:
    stormy = replace(defaults.goodput, interruptions_per_gpu_hour=0.01)
    g = estimate_goodput(1000.0, 100_000, 1e12, gpus_per_node=8, assumptions=stormy)
    assert g.goodput == MIN_GOODPUT
