"""The performance model's shipped defaults: every value has a source; networks by name."""

from __future__ import annotations

import pytest

from costsim.catalog.gpus import gpu_catalog
from costsim.catalog.perf_defaults import (
    framework_comparisons,
    get_network,
    network_names,
    perf_defaults,
)
from costsim.catalog.resources import read_data_csv
from costsim.domain.workload import ServingEngine, TrainingFramework
from costsim.errors import CatalogError


@pytest.mark.parametrize("name", ["perf_efficiency.csv", "perf_networks.csv",
                                  "perf_engines.csv", "perf_assumptions.csv",
                                  "allin_loss.csv", "perf_framework_benchmarks.csv",
                                  "perf_finetune_batches.csv"])
def test_every_row_names_its_source(name: str) -> None:
    rows = read_data_csv(name)
    assert rows
    assert all(row["source"].strip() for row in rows)


def test_every_engine_has_a_profile() -> None:
    engines = perf_defaults().serving.engines
    assert set(engines) == set(ServingEngine)


def test_every_gpu_has_a_network() -> None:
    defaults = perf_defaults()
    for gpu in gpu_catalog():
        assert defaults.network_for(gpu.name).name in network_names()


def test_efficiency_below_measured_matmul_ceilings() -> None:
    """η∞ stays below the best single-GPU matmul efficiency (stas00 MAMF: A100 86.9 %,
    H100 80.3 %, B200 77.6 %)."""
    eff = perf_defaults().training.compute_efficiency_by_generation
    assert eff["ampere"] < 0.869
    assert eff["hopper"] < 0.803
    assert eff["blackwell"] < 0.776


def test_network_lookup_with_suggestion() -> None:
    assert get_network("IB_NDR_3200").node_bandwidth_gbit_per_s == 3200
    with pytest.raises(CatalogError, match="did you mean 'ib-ndr-3200'"):
        get_network("ib-ndr-320")


def test_every_framework_has_an_efficiency_derived_from_its_published_figures() -> None:
    """The factor is the geometric mean of the framework's published-utilization ratios to
    Megatron-class runs (perf_framework_benchmarks.csv), not a tuned number; Megatron-LM is
    the calibration itself."""
    training = perf_defaults().training
    assert set(training.framework_efficiency) == set(TrainingFramework)
    assert training.framework_factor(TrainingFramework.MEGATRON_LM) == 1.0
    rows = framework_comparisons()
    for framework in TrainingFramework:
        ratios = [r.ratio for r in rows if r.framework is framework]
        if framework is TrainingFramework.MEGATRON_LM:
            assert not ratios
            continue
        assert ratios, framework
        assert min(ratios) <= training.framework_factor(framework) <= max(ratios)
    # Published orders: torchtitan / FSDP near the calibration, the HF Trainer well below.
    fsdp = training.framework_factor(TrainingFramework.PYTORCH_FSDP)
    hf = training.framework_factor(TrainingFramework.HF_TRAINER)
    assert 0.5 < hf < fsdp < 1.0
    assert all(row.date.strip() for row in rows)
