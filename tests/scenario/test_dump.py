"""A plan written back as a scenario file's ``plans:`` item loads as the same plan: every
hand-written plan of every shipped and good scenario, and any plan hypothesis builds."""

from __future__ import annotations

import dataclasses
import shutil
from datetime import date
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.plans import Autoscale, Commitment, OwnedPurchase, PhaseUse, Plan, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.errors import CostsimError
from costsim.scenario.dump import jsonable_plan, plan_mapping, plan_yaml
from tests.scenario.conftest import HERE
from tests.scenario.paste import with_plans

ROOT = Path(__file__).parents[2]
FILES = [*sorted((ROOT / "scenarios").glob("*.yaml")), HERE / "good" / "everything.yaml",
         HERE / "good" / "lifecycle.yaml"]


def reload(source: Path, blocks: list[str], folder: Path) -> tuple[Plan, ...]:
    """The plans of ``source`` with its plans replaced by ``blocks``, loaded from ``folder``
    (the files it refers to copied beside it)."""
    for sibling in source.parent.iterdir():
        if sibling.suffix == ".csv":
            shutil.copy(sibling, folder / sibling.name)
    target = folder / source.name
    target.write_text(with_plans(source.read_text(encoding="utf-8"), blocks), encoding="utf-8")
    return load_scenario_file(target).scenario.plans


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_hand_written_plan_round_trips(path: Path, tmp_path: Path) -> None:
    plans = load_scenario_file(path).scenario.plans
    assert reload(path, [plan_yaml(plan) for plan in plans], tmp_path) == plans


def test_the_block_reads_as_a_person_writes_it() -> None:
    plans = {p.name: p for p in load_scenario_file(
        ROOT / "scenarios" / "lifecycle-assistant.yaml").scenario.plans}
    assert plan_yaml(plans["all-on-demand"]) == (
        "  - name: all-on-demand\n"
        "    use:\n"
        "      prototype: {gpu: A10G}\n"
        "      fine-tune: {gpu: H100, count: 16}\n"
        "      serve:\n"
        "        gpu: L4\n"
        "        autoscale: {min: 2, max: 200}\n")
    reserved = plan_mapping(plans["reserved-base"])
    assert reserved["use"]["serve"] == {
        "gpu": "H100", "option": "reserved", "term": "1y", "payment": "no-upfront", "count": 1,
        "spill": "on-demand", "autoscale": {"max": 50}}  # min 1 is the default: left out
    assert reserved["commitments"] == [{"gpu": "H100", "count": 1, "term": "1y",
                                        "payment": "no-upfront", "start": date(2027, 3, 8)}]
    assert jsonable_plan(plans["reserved-base"])["commitments"][0]["start"] == "2027-03-08"
    owned = plan_mapping(plans["buy-servers"])["owned"]
    assert owned[0] == {"server": "hgx-h100-8", "count": 2, "purchase": date(2027, 1, 4)}


def test_a_fleet_and_every_owned_part_are_written_in_the_files_words() -> None:
    loaded = load_scenario_file(HERE / "good" / "everything.yaml")
    plans = {p.name: p for p in loaded.scenario.plans}
    mixed = plan_mapping(plans["mixed"])
    assert mixed["cloud"] == "aws"
    assert [e["gpu"] for e in mixed["use"]["serve"]["fleet"]] == ["L4", "H100"]
    assert mixed["use"]["serve"]["fleet"][0]["autoscale"] == {
        "min": 2, "max": 40, "target_utilization": 0.7, "scale_up_delay_s": 120}
    assert mixed["use"]["prototype"] == {"gpu": "A10G", "option": "spot",
                                         "fallback": "on-demand"}
    parts = plan_mapping(plans["owned"])["owned"][0]
    assert parts["ram_gib"] == 2048
    assert parts["nic_gbps"] == 3200
    assert parts["life_years"] == 4
    # the text is plain YAML: safe_load gives the mapping back
    assert yaml.safe_load(plan_yaml(plans["mixed"])) == [mixed]


def test_traffic_shares_are_written_exactly_and_inline() -> None:
    use = PhaseUse(phase="serve", entries=(
        UseEntry(gpu="L40S", traffic=(0.9, 1.0)), UseEntry(gpu="L4", traffic=(0.1, 0.0))))
    plan = Plan(name="mix", uses=(use,))
    assert plan_yaml(plan) == (
        "  - name: mix\n"
        "    use:\n"
        "      serve:\n"
        "        fleet:\n"
        "          - gpu: L40S\n"
        "            traffic: [0.9, 1]\n"
        "          - gpu: L4\n"
        "            traffic: [0.1, 0]\n")


# ------------------------------------------------------------------ any plan, hypothesis-built
BASE = ROOT / "scenarios" / "lifecycle-assistant.yaml"
GPUS = ("A10G", "H100", "L4", "L40S", "A100-80GB")
DATES = st.dates(date(2027, 1, 4), date(2028, 6, 1))
PAYMENTS = st.sampled_from(list(Payment))


@st.composite
def use_entries(draw: st.DrawFn, gpu: str) -> UseEntry:
    option = draw(st.sampled_from([o for o in PurchaseOption if o is not PurchaseOption.API]))
    bound = option.is_reserved or option is PurchaseOption.OWNED
    cloud = None if option is PurchaseOption.OWNED else draw(st.sampled_from((None, "aws")))
    return UseEntry(
        gpu=gpu, option=option,
        count=draw(st.none() | st.integers(1, 64)),
        spill=draw(st.sampled_from((None, PurchaseOption.ON_DEMAND, PurchaseOption.SPOT)))
        if bound else None,
        fallback=draw(st.sampled_from((None, PurchaseOption.ON_DEMAND)))
        if option is PurchaseOption.SPOT else None,
        spot_share=draw(st.none() | st.floats(0, 1)),
        cloud=cloud,
        region=draw(st.sampled_from((None, "us-east-1"))) if cloud == "aws" else None,
        autoscale=draw(st.none() | st.builds(
            lambda low, extra, util, delay: Autoscale(
                min_replicas=low, max_replicas=None if extra is None else max(1, low) + extra,
                target_utilization=util, scale_up_delay_s=delay),
            st.integers(0, 8), st.none() | st.integers(0, 100),
            st.none() | st.floats(0.05, 1), st.none() | st.floats(0, 86_400))))


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    fleet = draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=3, unique=True))
    serve = tuple(draw(use_entries(g)) for g in fleet)
    if draw(st.booleans()):  # the optimizer's routed mix: each bucket's shares add up to 1
        weights = draw(st.lists(st.lists(st.floats(0.01, 1), min_size=len(fleet),
                                         max_size=len(fleet)), min_size=2, max_size=2))
        shares = [[w / sum(bucket) for w in bucket] for bucket in weights]  # [k][j]
        serve = tuple(dataclasses.replace(entry, traffic=(shares[0][j], shares[1][j]))
                      for j, entry in enumerate(serve))
    uses = (PhaseUse(phase="prototype", entries=(draw(use_entries(draw(st.sampled_from(GPUS)))),)),
            PhaseUse(phase="fine-tune", entries=(draw(use_entries("H100")),)),
            PhaseUse(phase="serve", entries=serve))
    commitments = draw(st.lists(st.builds(
        Commitment, gpu=st.sampled_from(GPUS), count=st.integers(1, 64),
        term_years=st.sampled_from((1, 3)), payment=PAYMENTS, start=DATES,
        cloud=st.just("aws"), region=st.sampled_from((None, "us-east-1"))), max_size=2))
    owned = draw(st.lists(st.builds(
        OwnedPurchase, server=st.sampled_from(("hgx-h100-8", "l40s-4")), count=st.integers(1, 8),
        purchase=DATES, life_years=st.none() | st.floats(0.5, 15),
        ram_gib=st.none() | st.integers(1, 65_536), nvme_tb=st.none() | st.floats(0.01, 1_000),
        cpu_cores=st.none() | st.integers(1, 1_024),
        nic_gbps=st.none() | st.floats(0.1, 12_800)), max_size=2))
    return Plan(name=draw(st.sampled_from(("optimized", "search 3: H100×16 + L4 fleet"))),
                uses=uses, commitments=tuple(commitments), owned=tuple(owned),
                cloud=draw(st.sampled_from((None, "aws"))))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(plan=plans())
def test_any_valid_plan_round_trips(plan: Plan, tmp_path: Path) -> None:
    scenario = load_scenario_file(BASE).scenario
    try:
        dataclasses.replace(scenario, plans=(plan,))  # the domain's own rules
    except CostsimError:
        assume(False)
    assert reload(BASE, [plan_yaml(plan)], tmp_path) == (plan,)
