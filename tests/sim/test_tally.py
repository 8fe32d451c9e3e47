"""A plan's replications folded into a tally (costsim.sim.tally): the same figures as the
replications reduced whole, in replication order only, and a few hundred bytes a replication."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.sim.demand import DemandHistogram
from costsim.sim.montecarlo import fold, new_tally, run_plan, simulate_block
from costsim.sim.prepare import prepare_plan
from costsim.sim.results import FleetBands, FleetProfile
from costsim.sim.tally import FleetTally
from tests.domain.scenario_builders import lifecycle

_profiles = st.lists(st.one_of(
    st.none(),
    st.tuples(st.integers(0, 30 * 24), st.lists(st.integers(0, 40), min_size=0, max_size=24 * 9))
), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None)
@given(_profiles)
def test_fleet_bands_from_peak_counts_equal_the_bands_of_every_profile(
        drawn: list[tuple[int, list[int]] | None]) -> None:
    profiles = [None if d is None else FleetProfile.of(d[0], np.array(d[1], dtype=np.int64))
                for d in drawn]
    tally = FleetTally(len(profiles))
    for profile in profiles:
        tally.add(profile)
    # bit for bit, not approximately: a run's JSON must not move
    assert tally.bands("serve", len(profiles)) == FleetBands.of("serve", profiles)


def test_replications_out_of_order_are_refused() -> None:
    scenario = lifecycle()
    prep = prepare_plan(scenario, scenario.plans[0])
    reps = simulate_block(prep, seed=0, replications=3, indices=[1, 0])
    tally = new_tally(prep, 3)
    with pytest.raises(ValueError, match="out of order"):
        fold(prep, tally, reps[0])


def test_workers_fold_consecutive_blocks_to_the_same_result() -> None:
    scenario = lifecycle()
    prep = prepare_plan(scenario, scenario.plans[0])
    assert run_plan(prep, seed=5, replications=7, workers=3) == run_plan(
        prep, seed=5, replications=7)


def test_a_tally_holds_a_few_hundred_bytes_per_replication() -> None:
    scenario = lifecycle()
    prep = prepare_plan(scenario, scenario.plans[0])
    reps = simulate_block(prep, seed=0, replications=400, indices=range(400))

    def held(replications: int) -> int:
        tally = new_tally(prep, replications)
        for rep in reps[:replications]:
            fold(prep, tally, rep)
        return len(pickle.dumps(tally))

    per_replication = (held(400) - held(100)) / 300
    # a Replication of this plan pickles to ~6 KiB (ledger lines, demand histograms, fleet)
    assert len(pickle.dumps(reps[1])) > 4 * 1024
    assert per_replication < 1024


def test_rows_store_nothing_until_a_row_is_not_all_positive_zeros() -> None:
    from costsim.sim.tally import Rows

    rows = Rows(3, 2)
    rows.set(0, [0, 0.0])  # +0.0 (and integer zeros): nothing stored, reads as zeros
    assert rows._values is None
    rows.set(1, [0.0, -0.0])  # a negative zero is kept, with its sign
    assert rows._values is not None
    assert math.copysign(1.0, float(rows.values(2)[1, 1])) == -1.0
    nan_rows = Rows(2, 1)
    nan_rows.set(0, [math.nan])
    assert math.isnan(float(nan_rows.values(1)[0, 0]))


def test_pooled_demand_counts_hours_in_whole_integers() -> None:
    parts = [DemandHistogram(gpu="L4", replications=1, levels=(0, 2, 5), hours=(3, 4, 1),
                             gpu_hours=(0.0, 7.5, 4.25)),
             DemandHistogram(gpu="L4", replications=1, levels=(2, 3), hours=(6, 2),
                             gpu_hours=(11.0, 5.5))]
    pooled = DemandHistogram.pooled(parts)
    assert pooled.levels == (0, 2, 3, 5)
    assert pooled.hours == (3, 10, 2, 1)
    assert all(type(n) is int for n in (*pooled.levels, *pooled.hours))
    assert pooled.gpu_hours == (0.0, 7.5 + 11.0, 5.5, 4.25)


@settings(max_examples=100, deadline=None)
@given(rows=st.integers(1, 40), months=st.integers(1, 6), seed=st.integers(0, 2**32 - 1),
       ties=st.booleans())
def test_percentiles_of_every_column_at_once_equal_each_columns_own(
        rows: int, months: int, seed: int, ties: bool) -> None:
    """The cumulative cash's bands: np.percentile along the replications' axis gives each
    month what Stats.of gives that month's column alone, to the bit."""
    from costsim.sim.montecarlo import Stats

    rng = np.random.default_rng(seed)
    values = rng.normal(1e5, 3e4, size=(rows, months))
    if ties:
        values = np.round(values, -4)
    cash = np.cumsum(values, axis=1)
    together = np.percentile(cash, [10, 50, 90], axis=0)
    for m in range(months):
        alone = Stats.of(cash[:, m].tolist())
        assert (alone.p10, alone.p50, alone.p90) == tuple(float(v) for v in together[:, m])
        assert alone.mean == float(np.ascontiguousarray(cash[:, m]).mean())
