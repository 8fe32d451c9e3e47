"""A scenario's own servers (``servers:``): loading, ranges and name clashes (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.cli.scenario_names import load_scenario_file
from tests.scenario.conftest import Validate

HEAD = """\
name: own box
start: 2027-01-01
horizon_months: 12
phases:
  - {name: jobs, kind: experiments, duration_months: 6, arrivals_per_day: 2,
     job: {gpu_memory_gib: 12, gpu_hours: 4}}
"""
SERVER = """\
servers:
  {name}:
    gpu: a100-40gb
    gpu_count: 2
    interconnect: nvlink
    cpu_cores: 32
    ram_gib: 128
    nvme_tb: 3.84
    nic_gbps: 100
    power_kw: 1.3
    life_years: 4
    residual_pct: {residual}
{price}
"""
BOM = """\
    bom:
      - {kind: gpu, item: 2 × A100, amount_usd: 25000, source: list, effective_date: 2022-07-01}
      - {kind: chassis, item: chassis, amount_usd: 4500, source: est, estimate: true}"""
PLAN = """\
plans:
  - name: buy
    owned: [{{server: {server}, count: 1, purchase: 2027-01-01{extra}}}]
    use: {{jobs: {{gpu: A100, count: 2, option: owned}}}}
"""


def _write(tmp_path: Path, *, name: str = "my-box", residual: object = 15, price: str = BOM,
           server: str = "my-box", extra: str = "") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + SERVER.format(name=name, residual=residual, price=price)
                    + PLAN.format(server=server, extra=extra))
    return path


def test_a_declared_server_loads_with_its_bom(tmp_path: Path) -> None:
    scenario = load_scenario_file(_write(tmp_path)).scenario
    (box,) = scenario.servers
    assert (box.name, box.gpu, box.gpu_count, box.interconnect) == ("my-box", "A100", 2,
                                                                      "nvlink")
    assert [(line.kind, line.amount_usd, line.effective_date, line.estimate)
            for line in box.bom] == [("gpu", 25000.0, "2022-07-01", False),
                                     ("chassis", 4500.0, "", True)]
    assert scenario.plans[0].owned[0].server == "my-box"


def test_capex_usd_is_one_bom_line(tmp_path: Path) -> None:
    scenario = load_scenario_file(_write(tmp_path, price="    capex_usd: 31000")).scenario
    (line,) = scenario.servers[0].bom
    assert line.amount_usd == 31000.0


@pytest.mark.parametrize(("changes", "message"), [
    ({"name": "rtx4090-4", "server": "rtx4090-4"}, "is a shipped server's"),
    ({"residual": 95}, "residual_pct"),
    ({"price": BOM + "\n    capex_usd: 1000"}, "exactly one of capex_usd and bom"),
    ({"price": ""}, "exactly one of capex_usd and bom"),
    ({"extra": ", ram_gib: 256"}, "set ram_gib there"),
    ({"server": "my-bx"}, "did you mean 'my-box'"),
    ({"price": "    capex_usd: -5"}, "capex_usd"),
])
def test_bad_servers_exit_2_with_one_line(tmp_path: Path, validate: Validate,
                                          changes: dict[str, str], message: str) -> None:
    code, out, err = validate(_write(tmp_path, **changes))
    assert code == 2, out
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
