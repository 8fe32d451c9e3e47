"""The Pareto mask: no front point dominated, every other point dominated by a front point."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from costsim.optimize.pareto import pareto_mask

points = st.lists(st.tuples(st.integers(1, 20), st.integers(1, 20)), min_size=0, max_size=40)


@given(points)
def test_no_front_point_is_dominated_and_every_other_point_is(pts: list[tuple[int, int]]) -> None:
    mask = pareto_mask([p[0] for p in pts], [p[1] for p in pts])

    def dominates(a: tuple[int, int], b: tuple[int, int]) -> bool:
        return a[0] <= b[0] and a[1] <= b[1] and a != b

    for i, p in enumerate(pts):
        if mask[i]:
            assert not any(dominates(q, p) for q in pts)
        else:
            assert any(dominates(q, p) for j, q in enumerate(pts) if mask[j])
    assert len(pts) == 0 or mask.any()


def test_identical_points_are_both_on_the_front() -> None:
    assert pareto_mask([1.0, 1.0, 2.0], [5.0, 5.0, 5.0]).tolist() == [True, True, False]
