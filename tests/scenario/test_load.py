"""Good scenario files: load → domain → resolved, and the same objects as code-built ones."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path

import pytest

from costsim.cli.scenario_names import known_names, load_scenario_file
from costsim.domain.phases import ExperimentsPhase, GenericJob, ModelJob, TrainingPhase
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.uncertainty import Fixed, LogNormal, Normal
from costsim.domain.workload import ParallelLayout, TrainingFramework
from costsim.errors import InputError, ScenarioError
from costsim.scenario import json_schema, load_scenario
from tests.domain.scenario_builders import lifecycle
from tests.scenario.conftest import HERE, Validate

GOOD = HERE / "good"


def test_the_lifecycle_file_builds_the_code_built_scenario() -> None:
    loaded = load_scenario(GOOD / "lifecycle.yaml", known_names())
    # GPU names as the user wrote them (a10g, the nvidia-smi name) become canonical names
    assert loaded.scenario == lifecycle()
    assert loaded.price_file is None
    assert loaded.sha256 == hashlib.sha256((GOOD / "lifecycle.yaml").read_bytes()).hexdigest()


def test_every_key_reaches_the_domain() -> None:
    scenario = load_scenario_file(GOOD / "everything.yaml").scenario
    assert scenario.budget_usd == 5e6  # a numeric string
    prototype, sweeps, train, serve = scenario.phases
    assert isinstance(prototype, ExperimentsPhase)
    assert isinstance(prototype.job, ModelJob)
    assert prototype.job.tokens == 5e7
    assert isinstance(sweeps, ExperimentsPhase)
    assert isinstance(sweeps.job, GenericJob)
    assert sweeps.job.gpu_hours == LogNormal(sigma=0.5, median=6)
    assert isinstance(train, TrainingPhase)
    assert train.after == ("prototype", "sweeps")
    assert train.framework is TrainingFramework.PYTORCH_FSDP
    assert train.layout == ParallelLayout(tp=2, dp=8, zero=1, sp=True)
    assert train.global_batch_tokens == 4_000_000
    assert [b.share for b in serve.requests] == [0.6, 0.4]  # type: ignore[union-attr]
    mixed, owned = scenario.plans
    assert mixed.use_of("train").entries[0].option is PurchaseOption.RESERVED_1Y_ALL_UPFRONT
    fleet = mixed.use_of("serve").entries
    assert [e.gpu for e in fleet] == ["L4", "H100"]
    assert fleet[0].autoscale is not None
    assert fleet[0].autoscale.max_replicas == 40
    assert mixed.commitments[1].term_years == 1
    assert mixed.commitments[1].payment is Payment.NO_UPFRONT
    assert owned.owned[0].ram_gib == 2048
    assert scenario.uncertainty.demand_growth_pct_per_month == Normal(mean=5, sd=3, low=-10,
                                                                      high=30)
    assert scenario.uncertainty.price_drift_pct_per_year == Fixed(value=-10)
    assert scenario.risk.min_slo_attainment == 0.99
    overrides = scenario.prices.overrides
    assert overrides.discount_pct == 3
    assert overrides.cloud_discount_pct == (("aws", 12),)
    assert scenario.prices.price_factor("H100") == pytest.approx(0.8)
    (custom,) = overrides.custom_offerings
    assert (custom.cloud, custom.gpu, custom.host_ram_gib) == ("colo", "A100", 128)
    # the inline quote and the price file's quote, both kept
    assert sorted(q.gpu for q in overrides.quoted_reservations) == ["H100", "L4"]
    csv_quote = next(q for q in overrides.quoted_reservations if q.gpu == "L4")
    assert csv_quote.recurring_usd_per_hour == 0.45
    assert csv_quote.effective_date == "2026-11-20"


def test_resolved_is_json_with_every_default() -> None:
    loaded = load_scenario_file(GOOD / "lifecycle.yaml")
    resolved = json.loads(json.dumps(loaded.resolved))
    assert resolved == loaded.resolved
    assert resolved["calendar"] == {"start": "2027-01-01", "horizon_months": 18,
                                    "end": "2028-07-01"}
    assert resolved["data"] == {"dataset_gb": 0.0, "checkpoints_retained": 1,
                                "egress_gb_per_month": 0.0}
    assert resolved["models"][0]["reference"] == "preset:llama-3-8b"
    assert resolved["phases"][0]["kind"] == "experiments"
    assert resolved["phases"][0]["job"]["gpu_hours"] == {"dist": "fixed", "value": 6.0}
    assert resolved["uncertainty"]["failure_rate_scale"] == {"dist": "fixed", "value": 1.0}
    entry = resolved["plans"][0]["uses"][1]["entries"][0]
    assert (entry["gpu"], entry["option"], entry["count"]) == ("H100", "on-demand", 16)


def test_validate_prints_one_ok_line_per_file(validate: Validate) -> None:
    code, out, err = validate(GOOD / "lifecycle.yaml", GOOD / "everything.yaml")
    assert code == 0
    assert err == ""
    assert [line.split(":")[0] for line in out.splitlines()] == [
        f"OK {GOOD / 'lifecycle.yaml'}", f"OK {GOOD / 'everything.yaml'}"]


def test_the_schema_states_types_ranges_and_numeric_strings(
        capsys: pytest.CaptureFixture[str]) -> None:
    from costsim.cli.main import main

    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema == json.loads(json.dumps(json_schema()))
    assert schema["additionalProperties"] is False
    horizon = schema["properties"]["horizon_months"]["anyOf"]
    assert horizon[0] == {"type": "integer", "minimum": 1, "maximum": 240}
    assert horizon[1]["type"] == "string"
    assert '"ge"' not in json.dumps(schema)
    assert set(schema["required"]) == {"name", "start", "horizon_months", "phases", "plans"}


def test_plans_that_cannot_work_still_validate(tmp_path: Path) -> None:
    """An SLO no GPU can meet, a model that does not fit: run's business, not validate's."""
    text = (GOOD / "lifecycle.yaml").read_text().replace("tpot_p95_s: 0.1", "tpot_p95_s: 0.001")
    text = text.replace("serve: {gpu: L4", "serve: {gpu: T4")
    path = tmp_path / "hopeless.yaml"
    path.write_text(text)
    assert load_scenario(path, known_names()).scenario.plans[0].name == "all-on-demand"


def test_a_price_file_with_a_bad_row_names_the_csv(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("cloud,region,instance_type,gpu,gpus_per_instance,"
                                    "effective_date,option,term\n"
                                    "aws,,,L4,,2026-11-20,reserved,2y\n")
    text = (GOOD / "lifecycle.yaml").read_text().replace(
        "budget_usd: 1.5e6", "budget_usd: 1.5e6\nprices: {price_file: q.csv}")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=r"q\.csv:2:8: term: "
                       r"option 'reserved' needs term 1y or 3y"):
        load_scenario_file(path)


def test_dates_are_checked_as_dates(tmp_path: Path) -> None:
    text = (GOOD / "lifecycle.yaml").read_text().replace("start: 2027-01-01",
                                                         "start: 2027-02-30")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=r"s\.yaml:3: start: "):
        load_scenario(path, known_names())
    assert date(2027, 1, 1) == lifecycle().calendar.start


def test_a_model_from_a_config_file_next_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "config.json").write_text(json.dumps(
        {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
         "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000}))
    text = (GOOD / "lifecycle.yaml").read_text().replace(
        "assistant: {preset: llama-3-8b}", "assistant: {arch: models/config.json}")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    loaded = load_scenario(path, known_names())
    model = loaded.scenario.model("assistant")
    assert model.reference == f"config:{tmp_path / 'models' / 'config.json'}"
    assert model.architecture.hidden_size == 256
    assert loaded.resolved["models"][0]["parameters"] == model.architecture.params().total


def test_clouds_and_regions_of_the_price_file_are_known_names(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text(
        "cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"
        "effective_date\nmycolo,rack-7,box,H100,8,20,2026-11-01\n")
    text = (GOOD / "lifecycle.yaml").read_text().replace(
        "budget_usd: 1.5e6", "budget_usd: 1.5e6\nprices: {price_file: rows.csv}")
    good = tmp_path / "good.yaml"
    good.write_text(text.replace("count: 16}", "count: 16, cloud: mycolo, region: rack-7}"))
    entry = load_scenario_file(good).scenario.plans[0].use_of("train").entries[0]
    assert (entry.cloud, entry.region) == ("mycolo", "rack-7")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("count: 16}", "count: 16, cloud: mycolo, region: rack-8}"))
    with pytest.raises(ScenarioError, match=r"bad\.yaml:\d+: plans\[0\]\.use\.train\.region: "
                                            r"unknown mycolo region 'rack-8'; did you mean "
                                            r"'rack-7'"):
        load_scenario_file(bad)


def test_names_with_commas_quotes_and_formula_marks_are_printable_text(tmp_path: Path) -> None:
    """Commas, quotes and a leading '=' are printable: a name may carry them (the CSV writer
    quotes them and keeps formulas text); line breaks and tabs are refused (tests/scenario/bad:
    name-with-line-break, name-with-tab, name-with-escape, model-key-with-bidi-override)."""
    name = '=HYPERLINK("x"), the "plan", ünïcode'
    text = (GOOD / "lifecycle.yaml").read_text().replace(
        "name: all-on-demand", f"name: '{name}'", 1)
    path = tmp_path / "names.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_scenario(path, known_names()).scenario.plans[0].name == name
    path.write_text(text.replace(f"name: '{name}'", 'name: "two\\nlines"'), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"plans\[0\]\.name: must be printable text on one "
                       r"line, without line breaks or tabs; 'two\\nlines' has a line break"):
        load_scenario(path, known_names())


def test_quotas_reach_the_domain_with_canonical_names(tmp_path: Path) -> None:
    text = (GOOD / "lifecycle.yaml").read_text() + (
        "quotas:\n"
        "  - {cloud: AWS, region: US-EAST-1, gpu: h100-sxm5, option: on-demand, max_gpus: 32}\n"
        "  - {cloud: gcp, gpu: L4, max_gpus: 0}\n")
    path = tmp_path / "quotas.yaml"
    path.write_text(text)
    first, second = load_scenario_file(path).scenario.quotas
    assert (first.cloud, first.region, first.gpu, first.option, first.max_gpus, first.index) == (
        "aws", "us-east-1", "H100", "on-demand", 32, 0)
    assert (second.region, second.option, second.index) == (None, None, 1)
