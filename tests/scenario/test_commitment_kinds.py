"""``commitments`` entries of each kind: reservation (the default), savings-plan,
capacity-block — loaded into the domain, and written back as a person writes them."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from costsim.cli.scenario_names import load_scenario_file
from costsim.domain.commitments import CapacityBlock, SavingsPlan
from costsim.domain.pricing import Payment
from costsim.scenario.dump import plan_mapping, plan_yaml
from tests.scenario.paste import with_plans

SCENARIO = """name: kinds
start: 2027-01-01
horizon_months: 6
models:
  assistant: {preset: llama-3-8b}
phases:
  - {name: train, kind: training, model: assistant, task: finetune, tokens: 2e10}
plans:
  - name: p
    cloud: aws
    use: {train: {gpu: H100, count: 8}}
    commitments:
      - {gpu: H100, count: 8, term: 1y, start: 2027-01-01}
      - {kind: savings-plan, cloud: AWS, usd_per_hour: 12.5, term: 3y, payment: all-upfront,
         start: 2027-02-01, family: h100-sxm}
      - {kind: capacity-block, gpu: H100, count: 16, cloud: aws, start: 2027-03-01, days: 14}
      - {kind: savings-plan, cloud: aws, usd_per_hour: 5, term: 1y, start: 2027-01-01,
         compute: true}
"""


def _load(tmp_path: Path, text: str = SCENARIO) -> object:
    path = tmp_path / "kinds.yaml"
    path.write_text(text, encoding="utf-8")
    return load_scenario_file(path)


def test_each_kind_becomes_its_domain_object(tmp_path: Path) -> None:
    (plan,) = _load(tmp_path).scenario.plans  # type: ignore[attr-defined]
    assert len(plan.commitments) == 1  # the reservation, kind left out
    assert plan.savings_plans == (
        SavingsPlan(cloud="aws", usd_per_hour=12.5, term_years=3, payment=Payment.ALL_UPFRONT,
                    start=date(2027, 2, 1), family="H100"),
        SavingsPlan(cloud="aws", usd_per_hour=5.0, term_years=1, payment=Payment.NO_UPFRONT,
                    start=date(2027, 1, 1), family=None))
    assert [sp.index for sp in plan.savings_plans] == [1, 3]  # positions in the file
    assert plan.capacity_blocks == (CapacityBlock(gpu="H100", count=16, cloud="aws",
                                                  start=date(2027, 3, 1), days=14),)
    assert plan.capacity_blocks[0].index == 2


def test_savings_plans_and_blocks_are_written_back_and_load_equal(tmp_path: Path) -> None:
    loaded = _load(tmp_path)
    (plan,) = loaded.scenario.plans  # type: ignore[attr-defined]
    commitments = plan_mapping(plan)["commitments"]
    assert commitments[1] == {"kind": "savings-plan", "cloud": "aws", "usd_per_hour": 12.5,
                              "term": "3y", "payment": "all-upfront",
                              "start": date(2027, 2, 1), "family": "H100"}
    assert commitments[3] == {"kind": "capacity-block", "gpu": "H100", "count": 16,
                              "cloud": "aws", "start": date(2027, 3, 1), "days": 14}
    again = tmp_path / "again"
    again.mkdir()
    (path := again / "kinds.yaml").write_text(with_plans(SCENARIO, [plan_yaml(plan)]),
                                             encoding="utf-8")
    assert load_scenario_file(path).scenario.plans == (plan,)


def test_the_resolved_inputs_show_them_and_a_file_without_them_reads_as_before(
        tmp_path: Path) -> None:
    loaded = _load(tmp_path)
    resolved = loaded.resolved["plans"][0]  # type: ignore[attr-defined]
    assert resolved["savings_plans"][0]["usd_per_hour"] == 12.5
    assert "index" not in resolved["savings_plans"][0]
    assert resolved["capacity_blocks"][0]["days"] == 14
    written = loaded.as_written["plans"][0]["commitments"]  # type: ignore[attr-defined]
    assert "kind" not in written[0]
    assert written[2]["kind"] == "capacity-block"
    plain = SCENARIO.split("    commitments:")[0]
    other = tmp_path / "plain"
    other.mkdir()
    resolved_plain = _load(other, plain).resolved["plans"][0]  # type: ignore[attr-defined]
    assert "savings_plans" not in resolved_plain
    assert "capacity_blocks" not in resolved_plain
