"""The training stack factors (issue 18 item 2): era inference, precision and memory size."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.domain.performance import CURRENT, LEGACY, StackFactors
from costsim.domain.precision import Dtype

FACTORS = StackFactors(legacy_factor=0.85, memory_small_factor=0.9,
                       precision_factor={Dtype.FP16: 0.999, Dtype.FP8: 0.58})
GENERATIONS = ("volta", "ampere", "hopper", "blackwell", "cdna3", "ada")
PRECISIONS = (Dtype.BF16, Dtype.FP16, Dtype.FP8, Dtype.FP32)


@pytest.mark.parametrize(("generation", "precision", "year", "era"), [
    ("volta", Dtype.FP16, None, LEGACY),      # no current-era Volta stack is published
    ("ampere", Dtype.FP16, None, LEGACY),     # fp16 on A100: a 2021-22 stack
    ("ampere", Dtype.BF16, None, CURRENT),
    ("hopper", Dtype.FP16, None, CURRENT),    # every published H100 table is 2023+
    ("ampere", Dtype.BF16, 2022, LEGACY),     # BLOOM's Megatron-DeepSpeed: bf16 in 2022
    ("ampere", Dtype.FP16, 2024, CURRENT),    # the year overrides the inference
    ("volta", Dtype.FP16, 2023, CURRENT),
])
def test_era_is_the_year_when_given_else_inferred(generation: str, precision: Dtype,
                                                  year: int | None, era: str) -> None:
    assert FACTORS.era(generation, precision, year) == era


def test_neutral_defaults() -> None:
    assert StackFactors().factor(generation="ampere", precision=Dtype.FP16,
                                 memory_gib=16) == 1.0


def test_memory_factor_ends_and_midpoint() -> None:
    assert FACTORS.memory_factor(80) == 1.0
    assert FACTORS.memory_factor(141) == 1.0
    assert FACTORS.memory_factor(40) == 0.9
    assert FACTORS.memory_factor(24) == 0.9  # held below the smallest measured size
    # Log-linear: the geometric midpoint of 40 and 80 GB gets the square root.
    assert FACTORS.memory_factor(40 * 2**0.5) == pytest.approx(0.9**0.5)


@pytest.mark.parametrize("value", [0.0, 1.2, -0.1])
def test_factors_outside_zero_one_are_refused(value: float) -> None:
    with pytest.raises(ValueError, match="stack factors"):
        StackFactors(legacy_factor=value)
    with pytest.raises(ValueError, match="stack factors"):
        StackFactors(precision_factor={Dtype.FP8: value})


@given(st.floats(1, 300), st.floats(1, 300), st.sampled_from(GENERATIONS),
       st.sampled_from(PRECISIONS))
def test_more_memory_never_lowers_efficiency(a: float, b: float, generation: str,
                                            precision: Dtype) -> None:
    small, large = sorted((a, b))
    assert (FACTORS.factor(generation=generation, precision=precision, memory_gib=small)
            <= FACTORS.factor(generation=generation, precision=precision, memory_gib=large))


@given(st.floats(1, 300), st.sampled_from(GENERATIONS), st.integers(2015, 2100))
def test_fp16_loss_scaling_never_beats_bf16_of_the_same_era(memory: float, generation: str,
                                                            year: int) -> None:
    def eta(precision: Dtype) -> float:
        return FACTORS.factor(generation=generation, precision=precision, memory_gib=memory,
                              framework_year=year)

    assert eta(Dtype.FP16) <= eta(Dtype.BF16)


@given(st.floats(1, 300), st.sampled_from(GENERATIONS), st.sampled_from(PRECISIONS),
       st.integers(2015, 2100), st.integers(2015, 2100))
def test_a_later_stack_is_never_slower(memory: float, generation: str, precision: Dtype,
                                       year_a: int, year_b: int) -> None:
    early, late = sorted((year_a, year_b))
    assert (FACTORS.factor(generation=generation, precision=precision, memory_gib=memory,
                           framework_year=early)
            <= FACTORS.factor(generation=generation, precision=precision, memory_gib=memory,
                              framework_year=late))
