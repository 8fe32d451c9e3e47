"""Block draws: one call gives the numbers, in order, that as many scalar draws give."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain.uncertainty import (
    Distribution,
    Fixed,
    LogNormal,
    Normal,
    Triangular,
    Uniform,
)
from costsim.sim.draws import draw, draw_many

DISTRIBUTIONS: list[Distribution] = [
    Fixed(value=4.0),
    Normal(mean=2.0, sd=1.5),
    Normal(mean=2.0, sd=1.5, low=0.5, high=3.0),
    LogNormal(median=4.0, sigma=0.5),
    Uniform(low=0.5, high=2.5),
    Triangular(low=0.5, mode=1.0, high=1.5),
    Triangular(low=2.0, mode=2.0, high=2.0),
]


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: type(d).__name__)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300))
@settings(max_examples=25, deadline=None)
def test_a_block_is_the_scalar_draws_in_order(dist: Distribution, seed: int, n: int) -> None:
    scalar_rng, block_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    scalar = np.array([draw(dist, scalar_rng) for _ in range(n)], dtype=np.float64)
    block = draw_many(dist, block_rng, n)
    assert block.dtype == np.float64
    assert np.array_equal(scalar, block)
    # and the generator is left where the scalar draws left it
    assert scalar_rng.random() == block_rng.random()


def test_a_fixed_value_draws_no_random_numbers() -> None:
    rng = np.random.default_rng(1)
    assert draw_many(Fixed(value=2.5), rng, 3).tolist() == [2.5, 2.5, 2.5]
    assert rng.random() == np.random.default_rng(1).random()
