"""Named random streams: same names, same numbers; different names, independent numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.domain.uncertainty import Fixed, LogNormal, Normal, Triangular, Uniform
from costsim.sim.draws import draw
from costsim.sim.streams import named_rng, replication_seeds


def test_the_same_names_give_the_same_numbers_in_a_fresh_sequence() -> None:
    a = named_rng(replication_seeds(7, 3)[1], "phase", "train", "failures").random(5)
    b = named_rng(replication_seeds(7, 3)[1], "phase", "train", "failures").random(5)
    assert np.array_equal(a, b)


def test_a_replication_does_not_depend_on_how_many_were_asked() -> None:
    few = named_rng(replication_seeds(7, 3)[2], "x").random(3)
    many = named_rng(replication_seeds(7, 300)[2], "x").random(3)
    assert np.array_equal(few, many)


def test_names_and_replications_separate_the_streams() -> None:
    root = replication_seeds(0, 2)
    draws = {
        "a": named_rng(root[0], "phase", "a").random(),
        "b": named_rng(root[0], "phase", "b").random(),
        "a-rep1": named_rng(root[1], "phase", "a").random(),
        "a-seed1": named_rng(replication_seeds(1, 2)[0], "phase", "a").random(),
    }
    assert len(set(draws.values())) == 4


def test_draw_honours_each_distribution() -> None:
    rng = np.random.default_rng(0)
    assert draw(Fixed(value=3.0), rng) == 3.0
    values = np.array([draw(Normal(mean=5, sd=3, low=0), rng) for _ in range(4000)])
    assert values.min() >= 0
    logs = np.array([draw(LogNormal(sigma=0.2), rng) for _ in range(4000)])
    assert np.median(logs) == pytest.approx(1.0, abs=0.02)
    assert all(1 <= draw(Uniform(low=1, high=2), rng) <= 2 for _ in range(100))
    tri = np.array([draw(Triangular(low=0, mode=1, high=5), rng) for _ in range(4000)])
    assert tri.mean() == pytest.approx(2.0, abs=0.1)


@given(st.integers(min_value=0, max_value=2**32), st.text(min_size=1, max_size=20))
def test_any_seed_and_name_give_a_valid_reproducible_generator(seed: int, name: str) -> None:
    root = replication_seeds(seed, 1)[0]
    assert named_rng(root, name).random() == named_rng(root, name).random()
