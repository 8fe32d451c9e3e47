"""Data moved between clouds (costsim.sim.transfer): the rule on its own, and the ledger lines a
whole replication books, checked against GB × the source cloud's egress rate by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from costsim.domain.plans import PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PriceFlag, PriceOverrides, PurchaseOption
from costsim.domain.scenario import DataSizes, ScenarioPrices
from costsim.sim.engine import simulate_replication
from costsim.sim.ledger import Category
from costsim.sim.prepare import TrainingPrep, prepare_plan
from costsim.sim.streams import replication_seeds
from costsim.sim.transfer import data_moves, moved_gb
from tests.domain.scenario_builders import lifecycle

ROOT = replication_seeds(0, 1)[0]
# costsim/data/storage_prices.csv, first-tier internet egress
AWS_EGRESS, GCP_EGRESS = 0.09, 0.12


def test_the_data_follows_the_work_and_the_source_pays() -> None:
    moves = data_moves([("a", ("aws",)), ("b", ("aws",)), ("c", ("gcp",)), ("d", ("aws",)),
                        ("e", ("aws", "azure"))])
    assert [(m.phase, m.from_cloud, m.to_cloud, m.usd_per_gb) for m in moves] == [
        ("c", "aws", "gcp", AWS_EGRESS), ("d", "gcp", "aws", GCP_EGRESS),
        ("e", "aws", "azure", AWS_EGRESS)]
    assert moves[0].pool == "data move aws → gcp"
    assert not data_moves([("a", ("gcp",)), ("b", ("gcp",))])  # one cloud: nothing moves
    owned = data_moves([("a", ("owned",)), ("b", ("aws",))])
    assert owned[0].usd_per_gb == 0.0  # transit bundled with colocation
    fallback = data_moves([("a", ("seeweb",)), ("b", ("aws",))])[0]
    assert fallback.estimate
    assert fallback.usd_per_gb == AWS_EGRESS


def test_a_move_carries_the_data_set_and_the_checkpoints_written_before_it() -> None:
    checkpoints = [(100.0, 112e9), (500.0, 50e9)]
    assert moved_gb(2000, 3, checkpoints, 99.0) == 2000
    assert moved_gb(2000, 3, checkpoints, 100.0) == pytest.approx(2000 + 336)
    assert moved_gb(2000, 3, checkpoints, 600.0) == pytest.approx(2000 + 336 + 150)


def _three_clouds() -> Plan:
    return Plan(name="spread", uses=(
        PhaseUse(phase="prototype", entries=(UseEntry(gpu="A10G", cloud="aws"),)),
        PhaseUse(phase="train", entries=(UseEntry(gpu="H100", count=8, cloud="gcp"),)),
        PhaseUse(phase="serve", entries=(UseEntry(gpu="L4", cloud="aws"),)),
    ))


def test_a_plan_on_three_clouds_books_each_move_at_gb_times_the_source_rate() -> None:
    scenario = lifecycle(data=DataSizes(dataset_gb=2000, checkpoints_retained=3))
    scenario = replace(scenario, plans=(_three_clouds(),))
    prep = prepare_plan(scenario, scenario.plans[0])
    assert prep.feasible, prep.infeasible_reasons
    train = prep.phases["train"]
    assert isinstance(train, TrainingPrep)
    rep = simulate_replication(prep, ROOT, 0)
    moves = {line.key.pool: line for line in rep.ledger.lines
             if line.key.category is Category.DATA_TRANSFER and line.key.phase}
    # prototype (aws) → train (gcp): the data set, at AWS's rate
    assert moves["data move aws → gcp"].key.phase == "train"
    assert moves["data move aws → gcp"].amount_usd == pytest.approx(round(2000 * AWS_EGRESS, 2))
    # train (gcp) → serve (aws): the data set and the run's 3 retained checkpoints, at GCP's
    checkpoint_gb = train.checkpoint_bytes / 1e9  # 8.03e9 parameters × 14 bytes
    assert checkpoint_gb == pytest.approx(112.4, abs=0.1)
    expected = round((2000 + 3 * checkpoint_gb) * GCP_EGRESS, 2)
    assert moves["data move gcp → aws"].amount_usd == pytest.approx(expected)
    # and the rate with its source is among the prices the plan used
    used = {p.pool: p for p in prep.prices_used() if p.option == "data-transfer"}
    assert used["data move gcp → aws"].usd_per_gb == GCP_EGRESS
    assert "gcp internet egress" in used["data move gcp → aws"].source


def test_a_plan_pinned_to_one_cloud_moves_nothing() -> None:
    scenario = lifecycle(data=DataSizes(dataset_gb=2000))
    pinned = replace(scenario.plans[0], cloud="aws")
    scenario = replace(scenario, plans=(pinned,))
    prep = prepare_plan(scenario, pinned)
    assert prep.data_moves() == ()
    rep = simulate_replication(prep, ROOT, 0)
    assert not [line for line in rep.ledger.lines if line.key.pool.startswith("data move")]


def test_a_blocked_row_is_chosen_only_with_allow_flags() -> None:
    # 8×B200 on spot: the cheapest row (Verda, spot only) carries missing-on-demand
    plan = Plan(name="b200", uses=(
        PhaseUse(phase="prototype", entries=(UseEntry(gpu="A10G"),)),
        PhaseUse(phase="train", entries=(UseEntry(gpu="B200", count=8,
                                                  option=PurchaseOption.SPOT),)),
        PhaseUse(phase="serve", entries=(UseEntry(gpu="L4"),)),
    ))
    scenario = replace(lifecycle(), plans=(plan,))
    plain = prepare_plan(scenario, plan).phases["train"]
    assert isinstance(plain, TrainingPrep)
    assert plain.source.rental is not None
    assert PriceFlag.MISSING_ON_DEMAND not in plain.source.rental.offering.flags
    allowed = replace(scenario, prices=ScenarioPrices(overrides=PriceOverrides(
        allowed_flags=(PriceFlag.MISSING_ON_DEMAND,))))
    lifted = prepare_plan(allowed, plan).phases["train"]
    assert isinstance(lifted, TrainingPrep)
    assert lifted.source.rental is not None
    assert lifted.source.rental.offering.key == "verda FIN-03 8B200.240V"
    assert "missing-on-demand" in {f for p in prepare_plan(allowed, plan).prices_used()
                                   for f in p.flags}
