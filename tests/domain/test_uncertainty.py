"""Uncertainty descriptions: means, and the ranges that keep a factor positive."""

from __future__ import annotations

import math

import pytest

from costsim.domain.uncertainty import (
    Fixed,
    LogNormal,
    Normal,
    Triangular,
    Uncertainty,
    Uniform,
)
from costsim.errors import ScenarioError


def test_means_are_the_textbook_values() -> None:
    assert Fixed(value=2.5).mean == 2.5
    assert LogNormal(sigma=0.3).mean == pytest.approx(math.exp(0.045))
    assert Uniform(low=1, high=3).mean == 2
    assert Triangular(low=0, mode=3, high=6).mean == 3


def test_defaults_vary_nothing() -> None:
    block = Uncertainty()
    for name in block.variables():
        dist = getattr(block, name)
        assert dist is None or isinstance(dist, Fixed)


@pytest.mark.parametrize(
    ("make", "key"),
    [
        (lambda: Normal(mean=0, sd=-1), "sd"),
        (lambda: LogNormal(sigma=float("nan")), "sigma"),
        (lambda: Uniform(low=2, high=1), "low"),
        (lambda: Triangular(low=0, mode=5, high=4), "mode"),
        (lambda: Uncertainty(failure_rate_scale=Fixed(value=0)), "failure_rate_scale"),
        (lambda: Uncertainty(throughput_error=Normal(mean=1, sd=0.1)), "throughput_error"),
        (lambda: Uncertainty(spot_hazard_scale=Uniform(low=-1, high=2)), "spot_hazard_scale"),
    ],
)
def test_bad_distributions_name_their_key(make: object, key: str) -> None:
    with pytest.raises(ScenarioError, match=key):
        make()  # type: ignore[operator]
