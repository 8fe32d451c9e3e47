"""Owned servers' parts in the simulator: a training phase runs on its servers' NICs, is slowed
by too few CPU cores, and cannot start without the RAM a node needs (perf/host_parts.py)."""

from __future__ import annotations

from datetime import date

import pytest

from costsim.domain.plans import OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.perf.train_estimate import SPEED_TIE_SHARE
from costsim.sim.prepare import TrainingPrep, prepare_plan
from tests.domain.scenario_builders import lifecycle


def _prep(server: str = "hgx-h100-8", gpu: str = "H100", servers: int = 2,
          **parts: float) -> tuple[TrainingPrep | None, tuple[str, ...]]:
    scenario = lifecycle()
    prototype, _, serve = scenario.plans[0].uses
    per_server = 8 if server.startswith("hgx") else 4
    plan = Plan(name="own", uses=(prototype, PhaseUse(phase="train", entries=(
        UseEntry(gpu=gpu, option=PurchaseOption.OWNED, count=servers * per_server),)), serve),
        owned=(OwnedPurchase(server=server, count=servers, purchase=date(2027, 1, 1),
                             **parts),))  # type: ignore[arg-type]
    prepared = prepare_plan(scenario, plan)
    train = prepared.phases.get("train")
    assert train is None or isinstance(train, TrainingPrep)
    return train, prepared.infeasible_reasons


def test_the_shipped_parts_leave_the_gpus_step_untouched() -> None:
    shipped, reasons = _prep()
    assert shipped is not None, reasons
    trimmed, _ = _prep(ram_gib=512, cpu_cores=32, nvme_tb=3.84)
    assert trimmed is not None
    assert trimmed.steady_s == pytest.approx(shipped.steady_s)


def test_too_few_cores_stretch_the_steady_time() -> None:
    shipped, _ = _prep()
    starved, _ = _prep(cpu_cores=16)  # 16 cores for 8 GPUs: half the 4 per GPU needed
    assert shipped is not None
    assert starved is not None
    assert starved.steady_s == pytest.approx(2 * shipped.steady_s)
    assert starved.tokens_per_s == pytest.approx(shipped.tokens_per_s / 2)


def test_the_servers_nics_are_the_phases_network() -> None:
    # 8B on 16 L40S (4 servers): the layout spans the nodes, so their NICs carry activations
    # and gradients every step: 4 × 100G instead of the shipped 2 × 100G is faster
    shipped, reasons = _prep("l40s-4", "L40S", 4)
    more_nics, _ = _prep("l40s-4", "L40S", 4, nic_gbps=400)
    assert shipped is not None, reasons
    assert more_nics is not None
    assert more_nics.steady_s < shipped.steady_s / (1 + SPEED_TIE_SHARE)


def test_a_node_short_of_ram_makes_the_plan_infeasible() -> None:
    train, reasons = _prep(ram_gib=16)
    assert train is None
    assert any("owned hgx-h100-8: system RAM 16 GiB <" in r for r in reasons)
