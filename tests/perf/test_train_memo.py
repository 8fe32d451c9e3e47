"""The layout search's memos (issue 20): a hit gives what a cold computation gives, and a
shared candidate table cannot be changed by a caller."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.gpus import get_gpu
from costsim.domain.performance import PerfDefaults
from costsim.domain.workload import (
    ParallelLayout,
    Recompute,
    TrainingFramework,
)
from costsim.memory.estimate import estimate_training
from costsim.perf import train_estimate
from costsim.perf.layouts import candidate_table
from costsim.perf.train_estimate import (
    LayoutConstraints,
    choose_layout,
    estimate_training_run,
    replica_memory_use,
)
from tests.perf.conftest import SEARCH_SETUP, arch

BASE = SEARCH_SETUP


def _clear() -> None:
    train_estimate._shared_candidate_table.cache_clear()
    train_estimate._replica_memory_use.cache_clear()


@settings(max_examples=25, deadline=None)
@given(gpus=st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 96, 24]),
       target=st.one_of(st.none(), st.sampled_from([8, 64, 256, 1024])),
       fixed=st.sampled_from([LayoutConstraints(), LayoutConstraints(tp=2),
                              LayoutConstraints(zero=3, recompute=Recompute.FULL),
                              LayoutConstraints(grad_accum=4)]))
def test_a_shared_table_equals_a_cold_one(gpus: int, target: int | None,
                                          fixed: LayoutConstraints) -> None:
    model = arch("llama-2-13b")
    shared = train_estimate._shared_candidate_table(model, gpus, fixed, target, 8)
    again = train_estimate._shared_candidate_table(model, gpus, fixed, target, 8)
    cold = candidate_table(model, gpus, fixed, target, 8)
    assert again is shared
    assert shared.columns.keys() == cold.columns.keys()
    for name, values in cold.columns.items():
        assert np.array_equal(shared.columns[name], values)
        assert shared.columns[name].dtype == values.dtype


def test_a_shared_table_is_read_only() -> None:
    table = train_estimate._shared_candidate_table(arch("llama-2-13b"), 16,
                                                   LayoutConstraints(), 256, 8)
    with pytest.raises(ValueError, match="read-only"):
        table.columns["tp"][0] = 3


def test_replica_memory_use_hit_equals_the_cold_value() -> None:
    _clear()
    model, gpu = arch("llama-2-13b"), get_gpu("A100-80GB")
    # the yardstick as main 34571ac computed it, directly from the memory engine
    replica = replace(BASE, micro_batch=1, grad_accum=1, recompute=Recompute.NONE)
    est = estimate_training(model, gpu, replica)
    expected = est.total_bytes / est.usable_bytes
    cold = replica_memory_use(model, gpu, BASE)
    # a setup that differs only in what the yardstick replaces shares the entry
    hit = replica_memory_use(model, gpu, replace(BASE, layout=ParallelLayout(tp=4, dp=2),
                                                 micro_batch=4, grad_accum=8,
                                                 recompute=Recompute.FULL))
    assert cold == hit == expected
    assert train_estimate._replica_memory_use.cache_info().hits == 1


@pytest.mark.parametrize("framework", [TrainingFramework.MEGATRON_LM,
                                       TrainingFramework.PYTORCH_FSDP])
def test_warm_estimates_equal_cold_ones(defaults: PerfDefaults,
                                        framework: TrainingFramework) -> None:
    """A whole run and its layout choice, rated after other frameworks and GPU types filled
    the memos, equal the run rated with empty memos."""
    model, base = arch("llama-2-13b"), replace(BASE, framework=framework)
    runs = []
    for warm in (False, True):
        _clear()
        if warm:
            for other in (get_gpu("H100"), get_gpu("A100-80GB")):
                for fw in TrainingFramework:
                    choose_layout(model, other, 32, replace(BASE, framework=fw),
                                  LayoutConstraints(), network=defaults.network_for(other.name),
                                  defaults=defaults)
        gpu = get_gpu("H100")
        runs.append(estimate_training_run(model, gpu, 32, 1e10, base, LayoutConstraints(),
                                          defaults=defaults, price_usd_per_gpu_hour=2.0))
    assert runs[0] == runs[1]
