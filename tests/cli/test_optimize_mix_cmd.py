"""The serving GPU mix end to end (issue 16 item 2): ``optimize`` chooses the program's mix,
writes its shares as ``traffic`` into the plan block, and ``run`` of the pasted block bills what
the program solved.

The exact case: one request size at a steady 10 requests/s; card A (an L40S here) at $1.00/h
serving 3 requests/s per replica, card B (an L4) at $0.40/h serving 1. Alone, each costs
$4.00/h (4 A or 10 B); the mix 3 A + 1 B costs $3.40/h (A takes 0.9 of the requests, B 0.1).

Prices come from the scenario's own price file (a cloud of its own, so nothing else in the book
is cheaper). Capacities come through ONE seam, :func:`costsim.sim.serving_prep.replica_capacities`
(the function that returns a replica's per-bucket capacities; the simulator's preparation and
the serving-mix program both call it), replaced here by :func:`measured_capacities`. They are
the *sized* capacities (what the sizing rule divides the rate by, after the target utilization),
so the case is exact. A measured serving profile (scenario ``measurements: {serving: [...]}``)
can replace the fixture once it exists: it must then give those sized figures.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from costsim.domain.calendar import Calendar
from costsim.domain.gpu import GpuSpec
from costsim.errors import InfeasibleError
from costsim.sim.serving_prep import ReplicaCapacities
from costsim.units import SECONDS_PER_HOUR
from tests.scenario.paste import with_plans

from .conftest import Cli

# requests/s one replica is sized for, per GPU type (one request size); $/h of a 1-GPU instance
CARDS = {"L40S": (3.0, 1.00), "L4": (1.0, 0.40)}
RATE = 10.0
MIX_USD_PER_HOUR = 3 * 1.00 + 1 * 0.40
SINGLE_USD_PER_HOUR = 4.00

PRICES = """\
cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,effective_date,source
lab,lab-1,card-a.1,L40S,1,1.00,2026-11-01,test price
lab,lab-1,card-b.1,L4,1,0.40,2026-11-01,test price
"""

SCENARIO = f"""\
name: Exact mix
start: 2027-01-04
horizon_months: 1
models:
  assistant: {{preset: llama-3-8b}}
prices: {{price_file: prices.csv}}
uncertainty: {{throughput_error: 1}}
phases:
  - {{name: serve, kind: serving, duration_months: 1, model: assistant,
     load: {{peak_requests_per_s: {RATE}, diurnal: false, weekly: false,
            growth_pct_per_month: 0}},
     requests: {{prompt_tokens: 500, output_tokens: 200}}}}
plans:
  - name: card-a-only
    cloud: lab
    region: lab-1
    use: {{serve: {{gpu: L40S}}}}
  - name: card-b-only
    cloud: lab
    region: lab-1
    use: {{serve: {{gpu: L4}}}}
"""


def measured_capacities(arch: Any, gpu: GpuSpec, phase: Any, defaults: Any,
                        **_: Any) -> ReplicaCapacities:
    """Stands in for ``replica_capacities``: the cards' capacities, every bucket alike; any
    other GPU is one the test did not measure (as a model that does not fit it is refused)."""
    if gpu.name not in CARDS:
        raise InfeasibleError(f"{gpu.name}: not measured in this test")
    capacity = CARDS[gpu.name][0]
    per_bucket = tuple(capacity for _ in phase.requests)
    return ReplicaCapacities(gpus_per_replica=1, sizing_requests_per_s=per_bucket,
                             service_requests_per_s=per_bucket)


@pytest.fixture
def cards(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The scenario file, its price file beside it, and the capacities seam replaced."""
    monkeypatch.setattr("costsim.sim.serving_prep.replica_capacities", measured_capacities)
    (tmp_path / "prices.csv").write_text(PRICES)
    path = tmp_path / "exact-mix.yaml"
    path.write_text(SCENARIO)
    return path


def _phase_hours() -> float:
    """Hours the month-long phase serves and is billed: exactly 730.5 (its last hourly bucket
    pro rata, docs/simulator.md "Calendar and billing")."""
    calendar = Calendar(start=date(2027, 1, 4), horizon_months=1)
    return calendar.months_s(1) / SECONDS_PER_HOUR


@pytest.mark.usefixtures("no_charts")
def test_optimize_chooses_the_mix_and_the_pasted_block_bills_it(cli: Cli, cards: Path,
                                                                tmp_path: Path) -> None:
    code, text, err = cli("optimize", str(cards), "--json", "--replications", "2",
                          "--workers", "1", "--out", str(tmp_path / "opt"))
    assert code == 0, err
    document = json.loads(text)
    best = document["best"]
    fleet = best["plan"]["use"]["serve"]["fleet"]
    assert {e["gpu"]: e["traffic"] for e in fleet} == {"L40S": [0.9], "L4": [0.1]}
    by_name = {row["name"]: row for row in document["ranked"]}
    hours = _phase_hours()
    for single in ("card-a-only", "card-b-only"):
        assert by_name[single]["cost_usd"]["mean"] == pytest.approx(SINGLE_USD_PER_HOUR * hours)
    assert best["cost_usd"]["mean"] == pytest.approx(MIX_USD_PER_HOUR * hours)
    # the block printed to paste: pasted as the scenario's only plan, `run` bills $3.40/h
    block = (tmp_path / "opt" / "best-plan.yaml").read_text()
    assert yaml.safe_load(block)[0]["use"]["serve"]["fleet"] == fleet
    pasted = tmp_path / "pasted.yaml"
    pasted.write_text(with_plans(cards.read_text(), [block]))
    code, text, err = cli("run", str(pasted), "--json", "--replications", "2", "--workers",
                          "1", "--out", str(tmp_path / "run"))
    assert code == 0, err
    (plan,) = json.loads(text)["plans"]
    assert plan["cost_usd"]["mean"] == pytest.approx(MIX_USD_PER_HOUR * hours)
    gpu_hours = {line["gpu"]: line["gpu_hours"] for line in plan["ledger"]
                 if line["category"] == "compute"}
    assert gpu_hours == pytest.approx({"L40S": 3 * hours, "L4": 1 * hours})
    assert plan["metrics"]["slo_attainment"] == pytest.approx(1.0)


def test_traffic_shares_that_do_not_add_up_are_refused(cli: Cli, cards: Path) -> None:
    text = cards.read_text().replace(
        "    use: {serve: {gpu: L4}}\n",
        "    use: {serve: {fleet: [{gpu: L40S, traffic: [0.8]}, {gpu: L4, traffic: [0.1]}]}}\n")
    cards.write_text(text)
    code, out, err = cli("run", str(cards), "--json", "--replications", "1")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "traffic" in row)
    assert (f"{cards}:{line}: plans[1].use.serve.fleet: the traffic shares of requests[0] add "
            "up to 0.9 over the fleet; they must add up to 1") in err


# The same case with the capacities read from a measured serving profile, as a team would give
# them (no seam replaced): an offline row sets each card's maximum, a rate sweep with p95
# latencies its SLO capacity — TTFT p95 reaches the 1 s SLO exactly at 3 req/s on card A and
# at 1 req/s on card B, so the sized capacity is min(u · maximum, SLO capacity) = 3 and 1.
PROFILE = """\
model,gpu,engine,prompt_tokens,output_tokens,request_rate,requests_per_s,ttft_p95_s,tpot_p95_s,source
llama-3-8b,L40S,vllm,500,200,inf,10,,,exact case: offline
llama-3-8b,L40S,vllm,500,200,2,2,0.5,0.02,exact case: rate sweep
llama-3-8b,L40S,vllm,500,200,3,3,1.0,0.02,exact case: rate sweep
llama-3-8b,L40S,vllm,500,200,4,4,2.0,0.02,exact case: rate sweep
llama-3-8b,L4,vllm,500,200,inf,5,,,exact case: offline
llama-3-8b,L4,vllm,500,200,1,1,1.0,0.02,exact case: rate sweep
llama-3-8b,L4,vllm,500,200,2,2,2.0,0.02,exact case: rate sweep
"""


@pytest.fixture
def measured_cards(tmp_path: Path) -> Path:
    """The exact case's scenario with its SLO and a measured profile beside it."""
    (tmp_path / "prices.csv").write_text(PRICES)
    (tmp_path / "bench.csv").write_text(PROFILE)
    text = SCENARIO.replace(
        "     requests: {prompt_tokens: 500, output_tokens: 200}}\n",
        "     requests: {prompt_tokens: 500, output_tokens: 200},\n"
        "     slo: {ttft_p95_s: 1.0, tpot_p95_s: 0.05}}\n"
    ).replace("prices: {price_file: prices.csv}\n",
              "prices: {price_file: prices.csv}\nmeasurements: {serving: [bench.csv]}\n")
    assert "bench.csv" in text
    assert "slo:" in text
    path = tmp_path / "exact-mix-measured.yaml"
    path.write_text(text)
    return path


@pytest.mark.usefixtures("no_charts")
def test_measured_profiles_make_the_mix_exact(cli: Cli, measured_cards: Path,
                                              tmp_path: Path) -> None:
    code, text, err = cli("optimize", str(measured_cards), "--json", "--replications", "2",
                          "--workers", "1", "--out", str(tmp_path / "opt"))
    assert code == 0, err
    best = json.loads(text)["best"]
    fleet = best["plan"]["use"]["serve"]["fleet"]
    assert {e["gpu"]: e["traffic"] for e in fleet} == {"L40S": [0.9], "L4": [0.1]}
    hours = _phase_hours()
    assert best["cost_usd"]["mean"] == pytest.approx(MIX_USD_PER_HOUR * hours)
    pasted = tmp_path / "pasted.yaml"
    pasted.write_text(with_plans(measured_cards.read_text(),
                                 [(tmp_path / "opt" / "best-plan.yaml").read_text()]))
    code, text, err = cli("run", str(pasted), "--json", "--replications", "2", "--workers",
                          "1", "--out", str(tmp_path / "run"))
    assert code == 0, err
    document = json.loads(text)
    (plan,) = document["plans"]
    assert plan["cost_usd"]["mean"] == pytest.approx(MIX_USD_PER_HOUR * hours)
    assert plan["metrics"]["slo_attainment"] == pytest.approx(1.0)
    measured = document["inputs"]["measured_inputs"]
    assert [Path(f).name for f in measured["files"]["serving"]] == ["bench.csv"]
    used = measured["used"][plan["name"]]
    assert {(u["gpu"], u["basis"]) for u in used} == {("L40S", "measured"), ("L4", "measured")}
