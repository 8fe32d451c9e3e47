"""The layout search and a whole training run: fit checks, errors, warnings, cost."""

from __future__ import annotations

from dataclasses import replace

import pytest

from costsim.catalog.gpus import get_gpu
from costsim.domain.performance import PerfDefaults
from costsim.domain.precision import Dtype
from costsim.domain.workload import ParallelLayout, Recompute, Task, TrainingSetup
from costsim.errors import InfeasibleError, InputError
from costsim.memory.estimate import estimate_training
from costsim.memory.runtime import Verdict
from costsim.perf.train_estimate import (
    SPEED_TIE_SHARE,
    LayoutConstraints,
    choose_layout,
    estimate_training_run,
    score_options,
)
from costsim.units import SECONDS_PER_HOUR
from tests.perf.conftest import SEARCH_SETUP, arch

BASE = SEARCH_SETUP


def test_search_returns_the_fastest_fitting_layout(defaults: PerfDefaults) -> None:
    model, gpu = arch("llama-2-13b"), get_gpu("H100")
    choice = choose_layout(model, gpu, 64, BASE, LayoutConstraints(),
                           network=defaults.network_for("H100"), defaults=defaults)
    assert choice.fitting <= choice.candidates
    chosen = choice.step.setup
    assert chosen.layout.gpus == 64
    assert estimate_training(model, gpu, chosen).verdict is Verdict.FITS
    # No other fitting layout among a few hand-made ones is faster.
    others = [TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16, seq_len=4096,
                            layout=ParallelLayout(tp=tp, dp=64 // tp, zero=z, sp=tp > 1),
                            micro_batch=1, grad_accum=max(1, 1024 // (64 // tp)),
                            recompute=Recompute.FULL)
              for tp, z in ((1, 3), (2, 1), (4, 1), (8, 0))]
    fitting = [s for s in others if estimate_training(model, gpu, s).verdict is Verdict.FITS]
    speeds = score_options(model, gpu, fitting, network=defaults.network_for("H100"),
                           defaults=defaults)
    # Layouts within SPEED_TIE_SHARE of the fastest count as equally fast.
    assert choice.step.tokens_per_s >= max(speeds) * (1 - SPEED_TIE_SHARE)


def test_fixed_degrees_are_kept(defaults: PerfDefaults) -> None:
    fixed = LayoutConstraints(tp=2, pp=2, zero=1, recompute=Recompute.SELECTIVE)
    choice = choose_layout(arch("llama-2-13b"), get_gpu("H100"), 32, BASE, fixed,
                           network=defaults.network_for("H100"), defaults=defaults)
    lay = choice.step.setup.layout
    assert (lay.tp, lay.pp, lay.dp, lay.zero) == (2, 2, 8, 1)
    assert choice.step.setup.recompute is Recompute.SELECTIVE


def test_given_layout_that_does_not_fit_names_the_component(defaults: PerfDefaults) -> None:
    fixed = LayoutConstraints(tp=1, pp=1, dp=8, zero=0, micro_batch=1, grad_accum=1,
                              recompute=Recompute.NONE)
    with pytest.raises(InfeasibleError, match=r"does not fit H100: .* largest component "
                                              r"optimizer"):
        choose_layout(arch("llama-2-13b"), get_gpu("H100"), 8, BASE, fixed,
                      network=defaults.network_for("H100"), defaults=defaults)


def test_no_layout_fits(defaults: PerfDefaults) -> None:
    from costsim.catalog.models import load_preset

    with pytest.raises(InfeasibleError, match="no layout of 2 x T4 fits"):
        choose_layout(load_preset("llama-2-70b").architecture, get_gpu("T4"), 2,
                      TrainingSetup(task=Task.TRAIN, precision=Dtype.FP16,
                                    layout=ParallelLayout(), seq_len=4096),
                      LayoutConstraints(), network=defaults.network_for("T4"),
                      defaults=defaults)


def test_invalid_fixed_degrees_are_input_errors(defaults: PerfDefaults) -> None:
    net = defaults.network_for("H100")
    with pytest.raises(InputError, match="--tp"):
        choose_layout(arch("llama-2-7b"), get_gpu("H100"), 24, BASE, LayoutConstraints(tp=3),
                      network=net, defaults=defaults)
    with pytest.raises(InputError, match="--gpus"):
        choose_layout(arch("llama-2-7b"), get_gpu("H100"), 16,
                      BASE, LayoutConstraints(tp=2, pp=2, dp=2), network=net, defaults=defaults)


def test_run_totals_are_consistent(defaults: PerfDefaults) -> None:
    est = estimate_training_run(arch("llama-2-7b"), get_gpu("H100"), 64, 1e11, BASE,
                                LayoutConstraints(), defaults=defaults,
                                price_usd_per_gpu_hour=3.0)
    assert est.goodput.steady_wall_time_s == pytest.approx(1e11 / est.step.tokens_per_s)
    assert est.goodput.wall_time_s == pytest.approx(
        est.goodput.steady_wall_time_s / est.goodput.goodput)
    assert est.gpu_hours == pytest.approx(est.goodput.wall_time_s * 64 / SECONDS_PER_HOUR)
    assert est.cost_usd == pytest.approx(3.0 * est.gpu_hours)
    assert est.flops_total == pytest.approx(est.step.model_flops_per_token * 1e11)


def test_small_model_on_big_gpu_is_flagged(defaults: PerfDefaults) -> None:
    est = estimate_training_run(arch("gpt2"), get_gpu("H200"), 1, 1e9,
                                TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16,
                                              layout=ParallelLayout(), seq_len=1024),
                                LayoutConstraints(micro_batch=1, recompute=Recompute.NONE,
                                                  global_batch_seqs=8),
                                defaults=defaults, price_usd_per_gpu_hour=1.0)
    assert any("larger than the job" in w for w in est.warnings)


def test_slow_network_is_flagged(defaults: PerfDefaults) -> None:
    est = estimate_training_run(arch("megatron-gpt-145b"), get_gpu("H100"), 256, 1e10,
                                TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16,
                                              layout=ParallelLayout(), seq_len=2048),
                                LayoutConstraints(tp=16, pp=1, recompute=Recompute.FULL),
                                defaults=defaults, price_usd_per_gpu_hour=1.0,
                                network=defaults.networks["eth-100"])
    assert any("collapses" in w for w in est.warnings)


def test_bad_tokens_and_price(defaults: PerfDefaults) -> None:
    with pytest.raises(InputError, match="--tokens"):
        estimate_training_run(arch("gpt2"), get_gpu("H100"), 1, 0, BASE, LayoutConstraints(),
                              defaults=defaults, price_usd_per_gpu_hour=1.0)


def test_equally_fast_layouts_resolve_to_the_least_sharded(defaults: PerfDefaults) -> None:
    """A small model on big GPUs runs plain data parallel with a large micro-batch, not ZeRO-3
    with micro-batch 1, when the model rates both equally fast."""
    choice = choose_layout(arch("gpt2"), get_gpu("H100"), 8,
                           TrainingSetup(task=Task.TRAIN, precision=Dtype.BF16,
                                         layout=ParallelLayout(), seq_len=1024),
                           LayoutConstraints(), network=defaults.network_for("H100"),
                           defaults=defaults)
    setup = choice.step.setup
    assert (setup.layout.zero, setup.layout.tp, setup.layout.pp) == (0, 1, 1)
    assert setup.recompute is Recompute.NONE
    assert setup.micro_batch > 1


def test_oversized_gpu_is_flagged_and_a_snug_one_is_not(defaults: PerfDefaults) -> None:
    """DESIGN §2 rule 2: a GPU far larger than the job (a replica fills < 30 %) gets a warning."""
    small = estimate_training_run(arch("gpt2"), get_gpu("H200"), 8, 1e9,
                                  replace(BASE, seq_len=1024), LayoutConstraints(),
                                  defaults=defaults, price_usd_per_gpu_hour=1.0)
    assert any("larger than the job needs" in w for w in small.warnings)
    big = estimate_training_run(arch("llama-2-7b"), get_gpu("A100-80GB"), 64, 1e9, BASE,
                                LayoutConstraints(), defaults=defaults,
                                price_usd_per_gpu_hour=1.0)
    assert not any("larger than the job needs" in w for w in big.warnings)
