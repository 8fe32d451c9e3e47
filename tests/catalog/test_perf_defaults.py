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
                                  "perf_finetune_batches.csv", "perf_quant_kernels.csv"])
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


# torchao's batch-1 decode table (pytorch/ao torchao/quantization/README.md @92dd5f557,
# 2024-10-07, "a single NVIDIA-A100-80GB GPU"; the fit-half rows SP54-SP59 of
# tests/data/serving_published.csv): its Memory Bandwidth column in GB/s, bf16 / int8wo /
# int4wo-64, for Llama-2-7B and Llama-3-8B.
TORCHAO_A100_GB_PER_S = {"llama-2-7b": (1418.93, 1131.18, 751.42),
                         "llama-3-8b": (1435.54, 1150.80, 763.33)}


def test_torch_compile_bandwidth_factors_are_the_published_ratios() -> None:
    """κ of torch.compile's weight-only kernels = the quantized kernel's bytes per second over
    bf16's on the same card and stack, averaged over the two models, to two decimals."""
    kernels = perf_defaults().serving
    for position, quant in ((1, "int8"), (2, "int4")):
        ratios = [row[position] / row[0] for row in TORCHAO_A100_GB_PER_S.values()]
        expected = round(sum(ratios) / len(ratios), 2)
        kernel = kernels.quant_kernel(ServingEngine.TORCH_COMPILE, quant)
        assert kernel.bandwidth_factor == expected, quant
    # no measured factor: the fp16 rate (vLLM's Marlin, TensorRT-LLM's weight-only GEMM)
    assert kernels.quant_kernel(ServingEngine.VLLM, "int4").bandwidth_factor == 1.0
    assert kernels.quant_kernel(ServingEngine.LLAMA_CPP, "int4").bandwidth_factor == 1.0


@pytest.mark.parametrize("factor", [0.0, -0.1, 1.5, float("nan")])
def test_a_bandwidth_factor_outside_0_1_is_refused(factor: float) -> None:
    from costsim.domain.performance import QuantKernel

    with pytest.raises(ValueError, match="bandwidth_factor"):
        QuantKernel(engine=ServingEngine.VLLM, quant="int4", family="x", fused_max_batch=1.0,
                    bandwidth_factor=factor)
