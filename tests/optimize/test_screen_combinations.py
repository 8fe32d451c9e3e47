"""The finalists drawn lazily (issue 20): ``cheapest_combinations`` gives exactly the head of the
whole product's order, data moves, ties and repeated names included, and ``best_combinations``
the finalists it gave when it sorted the whole product."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain.plans import PhaseUse, UseEntry
from costsim.optimize.choice import PhaseChoice
from costsim.optimize.screen import (
    PER_PHASE,
    ChoiceEstimate,
    Combination,
    all_combinations,
    best_combinations,
    cheapest_combinations,
)

CLOUDS = ("aws", "gcp", "lambda", "owned")  # egress $0.09, $0.12, $0 and $0 per GB


def _choice(phase: str, i: int, slug: str) -> PhaseChoice:
    return PhaseChoice(phase=phase, label=f"{phase} {i}", slug=slug, prep=None,
                       use=PhaseUse(phase=phase, entries=(UseEntry(gpu="L4"),)))


@st.composite
def _phase(draw: st.DrawFn, phase: str) -> list[ChoiceEstimate]:
    """A phase's screened choices as the screen lists them: by cost (small integers, so costs
    and sums tie often), some names repeated, each on a cloud, training checkpoints."""
    n = draw(st.integers(1, 6))
    costs = sorted(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)))
    out = []
    for i, cost in enumerate(costs):
        slug = f"{phase}{draw(st.integers(0, 3))}"  # repeated names: ties on (cost, name)
        out.append(ChoiceEstimate(
            choice=_choice(phase, i, slug), cost_usd=float(cost), duration_s=1.0,
            p_deadline_missed=None, meets_deadline=True,
            clouds=(draw(st.sampled_from(CLOUDS)),), dataset_gb=draw(st.sampled_from((0, 50))),
            checkpoint_gb=draw(st.sampled_from((0.0, 30.0)))))
    return out


_PHASES = st.integers(1, 3).flatmap(
    lambda n: st.tuples(*(_phase(f"p{k}") for k in range(n))))


def _slugs(combos: Sequence[Combination]) -> list[tuple[str, float]]:
    return [(c.slug, c.cost_usd) for c in combos]


@settings(max_examples=200, deadline=None)
@given(per_phase=_PHASES, count=st.integers(1, 60))
def test_the_cheapest_are_the_head_of_the_whole_order(
        per_phase: tuple[list[ChoiceEstimate], ...], count: int) -> None:
    everything = all_combinations(per_phase)
    cheapest = cheapest_combinations(per_phase, count)
    assert cheapest == everything[:count]
    # the same objects' choices in the same order: ties broken as the whole sort breaks them
    assert [[e.choice for e in c.estimates] for c in cheapest] == [
        [e.choice for e in c.estimates] for c in everything[:count]]


def _finalists_from_the_whole_product(screened: Sequence[tuple[str, Sequence[ChoiceEstimate]]],
                                      count: int) -> list[Combination]:
    """best_combinations as it was before issue 20: the whole product built and sorted."""
    shortlists = [([e for e in estimates if e.meets_deadline] or list(estimates))[:count]
                  for _, estimates in screened]
    best = [s[0] for s in shortlists]
    ordered = [Combination.of(best)]
    by_cost = sorted(range(len(best)), key=lambda p: -best[p].cost_usd)
    for k in range(1, PER_PHASE):
        for p in by_cost:
            if k < len(shortlists[p]) and len(ordered) < count:
                ordered.append(Combination.of([shortlists[p][k] if q == p else b
                                               for q, b in enumerate(best)]))
    for combo in all_combinations(shortlists):
        if len(ordered) >= count:
            break
        if combo not in ordered:
            ordered.append(combo)
    return sorted(ordered, key=Combination.order)


@settings(max_examples=200, deadline=None)
@given(per_phase=_PHASES, count=st.integers(1, 60))
def test_finalists_are_those_of_the_whole_product(
        per_phase: tuple[list[ChoiceEstimate], ...], count: int) -> None:
    screened = [(f"p{k}", estimates) for k, estimates in enumerate(per_phase)]
    assert best_combinations(screened, count) == _finalists_from_the_whole_product(screened,
                                                                                    count)


def test_data_moves_can_push_the_cheapest_choices_behind() -> None:
    # the cheapest choices sit on two clouds: 1,000 GB copied at $0.09 outweigh a dearer
    # choice on the same cloud, so the cheapest plan is not the cheapest choices' sum
    first = [ChoiceEstimate(choice=_choice("a", i, f"a{i}"), cost_usd=cost, duration_s=1.0,
                            p_deadline_missed=None, meets_deadline=True, clouds=(cloud,),
                            dataset_gb=1000.0)
             for i, (cost, cloud) in enumerate(((0.0, "aws"), (50.0, "gcp")))]
    second = [ChoiceEstimate(choice=_choice("b", 0, "b0"), cost_usd=0.0, duration_s=1.0,
                             p_deadline_missed=None, meets_deadline=True, clouds=("gcp",),
                             dataset_gb=1000.0)]
    cheapest = cheapest_combinations([first, second], 1)
    assert _slugs(cheapest) == [("a1.b0", 50.0)]
    assert _slugs(all_combinations([first, second])) == [("a1.b0", 50.0), ("a0.b0", 90.0)]


def test_unsorted_or_unpriced_lists_take_the_whole_product() -> None:
    phase = [ChoiceEstimate(choice=_choice("a", i, f"a{i}"), cost_usd=cost, duration_s=1.0,
                            p_deadline_missed=None, meets_deadline=True)
             for i, cost in enumerate((5.0, 1.0, float("nan")))]
    assert [c.slug for c in cheapest_combinations([phase], 2)] == [
        c.slug for c in all_combinations([phase])[:2]]
    assert cheapest_combinations([phase], 0) == []
    assert cheapest_combinations([phase, []], 2) == []


def test_equal_costs_and_names_keep_the_product_order() -> None:
    # (a1, b0) is drawn first (its choices sum to 5.5) but costs 10 with its $4.5 data move,
    # as (a0, b1) does; under one name the whole sort keeps the product's order: (a0, b1) first
    def est(phase: str, i: int, cost: float, cloud: str) -> ChoiceEstimate:
        return ChoiceEstimate(choice=_choice(phase, i, phase), cost_usd=cost, duration_s=1.0,
                              p_deadline_missed=None, meets_deadline=True, clouds=(cloud,),
                              dataset_gb=50.0)

    per_phase = [[est("a", 0, 0.0, "lambda"), est("a", 1, 5.5, "aws")],
                 [est("b", 0, 0.0, "gcp"), est("b", 1, 10.0, "lambda")]]
    labels = [[e.choice.label for e in c.estimates] for c in cheapest_combinations(per_phase, 3)]
    assert labels == [["a 0", "b 0"], ["a 0", "b 1"], ["a 1", "b 0"]]
    assert cheapest_combinations(per_phase, 3) == all_combinations(per_phase)[:3]
