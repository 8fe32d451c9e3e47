"""Applying variants to a scenario file, and validating each exactly like the file."""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.cli.scenario_names import (
    iter_variant_files,
    known_names,
    load_scenario_file,
    load_variant_file,
)
from costsim.domain.phases import ServingPhase, TrainingPhase
from costsim.errors import ScenarioError
from costsim.scenario import LoadedScenario, load_scenario
from costsim.scenario.load import load_mapping
from costsim.scenario.overrides import (
    Applied,
    ScenarioVariants,
    Value,
    Variant,
    apply_overrides,
    apply_settings,
    cartesian,
    format_value,
    load_variant,
    parse_set,
)
from costsim.scenario.yaml_io import parse_yaml
from tests.scenario.conftest import HERE

GOOD = HERE / "good"
LIFECYCLE = GOOD / "lifecycle.yaml"


def _raw(path: Path = LIFECYCLE) -> dict[str, Any]:
    data = parse_yaml(path.read_text(encoding="utf-8"), str(path)).data
    assert isinstance(data, dict)
    return data


def _variant(*sets: str) -> Variant:
    (variant,) = cartesian([parse_set(text) for text in sets])
    return variant


def test_list_items_are_addressed_by_name_or_by_index() -> None:
    raw = _raw()
    by_name = apply_overrides(raw, _variant("phases.train.tokens=4e10",
                                            "plans.all-on-demand.use.train.count=32"))
    by_index = apply_overrides(raw, _variant("phases.1.tokens=4e10",
                                             "plans.0.use.train.count=32"))
    assert by_name == by_index
    assert by_name["phases"][1]["tokens"] == "4e10"
    assert by_name["plans"][0]["use"]["train"]["count"] == 32
    assert raw["phases"][1]["tokens"] == "2e10"  # the input mapping is not changed


def test_an_item_named_like_an_index_is_found_by_name_first() -> None:
    raw = {"plans": [{"name": "a"}, {"name": "0"}]}
    assert apply_overrides(raw, _variant("plans.0.cloud=aws"))["plans"][1]["cloud"] == "aws"


def test_commitments_are_addressed_by_index_inside_a_named_plan() -> None:
    raw = _raw(Path("scenarios/lifecycle-assistant.yaml"))
    edited = apply_overrides(raw, _variant("plans.reserved-base.commitments.0.count=2"))
    assert edited["plans"][3]["commitments"][0]["count"] == 2


def test_the_price_what_if_creates_the_price_keys_the_file_lacks() -> None:
    raw = _raw()
    assert "prices" not in raw
    loaded = load_variant(LIFECYCLE, _variant("prices.gpu_price_change_pct.H100=-25"),
                          known_names())
    assert loaded.scenario.prices.price_factor("H100") == pytest.approx(0.75)
    assert loaded.scenario.prices.price_factor("L4") == 1


def test_a_declared_key_the_file_leaves_out_is_created() -> None:
    loaded = load_variant(LIFECYCLE, _variant("discount_rate_pct_per_year=8",
                                              "phases.serve.load.diurnal=true"), known_names())
    assert loaded.scenario.discount_rate_pct_per_year == 8
    serve = loaded.scenario.phase("serve")
    assert isinstance(serve, ServingPhase)
    assert serve.load.diurnal is True


@pytest.mark.parametrize(("text", "problem"), [
    ("phases.serv.tokens=1", "'serv' names no item of phases (by name: prototype, train, "
     "serve; by index: 0 to 2); did you mean 'serve'?"),
    ("phases.5.tokens=1", "'5' names no item of phases (by name: prototype, train, serve; "
     "by index: 0 to 2)"),
    ("phases.serve.load.peak_request_per_s=1", "'peak_request_per_s' names no key of "
     "phases.serve.load; did you mean 'peak_requests_per_s'?"),
    ("budgett_usd=1", "'budgett_usd' names no key of the top level; did you mean "
     "'budget_usd'?"),
    ("models.big.preset=llama-3-70b", "'big' names no entry of models (there: assistant); a "
     "variant changes the file's entries here, it does not add one"),
    ("plans.all-on-demand.use.serve.gpu.name=x", "plans.all-on-demand.use.serve.gpu is a "
     "value ('L4'), not a mapping or list: the path cannot go inside it"),
])
def test_a_path_that_names_nothing_is_an_error_naming_file_flag_key_and_rule(
        text: str, problem: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_variant(LIFECYCLE, _variant(text), known_names())
    error = caught.value
    assert error.source == f"{LIFECYCLE} with --set {text}"
    assert error.key_path == text.split("=")[0]
    assert error.problem == problem


def test_two_settings_landing_on_one_place_are_refused() -> None:
    with pytest.raises(ScenarioError, match=r"sets the same place as phases\.train\.tokens"):
        apply_overrides(_raw(), _variant("phases.train.tokens=1", "phases.1.tokens=2"))


def _file_error(tmp_path: Path, old: str, new: str) -> ScenarioError:
    path = tmp_path / "edited.yaml"
    text = LIFECYCLE.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path, known_names())
    return caught.value


def _variant_error(*sets: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        load_variant(LIFECYCLE, _variant(*sets), known_names())
    return caught.value


@pytest.mark.parametrize(("setting", "old", "new"), [
    # a range (pydantic), a type, an unknown name (the build), a domain rule
    ("phases.serve.load.peak_requests_per_s=2e9", "peak_requests_per_s: 40",
     "peak_requests_per_s: 2e9"),
    ("horizon_months=0", "horizon_months: 18", "horizon_months: 0"),
    ("budget_usd=true", "budget_usd: 1.5e6", "budget_usd: true"),
    ("plans.all-on-demand.use.serve.gpu=H1000", "serve: {gpu: L4", "serve: {gpu: H1000"),
    ("models.assistant.preset=llama-3-9b", "preset: llama-3-8b", "preset: llama-3-9b"),
    ("phases.train.task=pretrain", "task: finetune", "task: pretrain"),
    ("plans.all-on-demand.use.train.option=reserved", "count: 16}", "count: 16, "
     "option: reserved}"),
])
def test_an_override_breaking_a_rule_reads_like_the_same_edit_in_the_file(
        tmp_path: Path, setting: str, old: str, new: str) -> None:
    in_file = _file_error(tmp_path, old, new)
    by_set = _variant_error(setting)
    assert (by_set.key_path, by_set.problem) == (in_file.key_path, in_file.problem)
    assert by_set.source == f"{LIFECYCLE} with --set {setting}"
    assert in_file.source.startswith(f"{tmp_path / 'edited.yaml'}:")


def test_an_error_outside_the_settings_names_the_files_line_and_the_variant() -> None:
    # min above the file's max: the rule breaks at max, which the variant did not set
    error = _variant_error("plans.all-on-demand.use.serve.autoscale.min=100")
    assert error.key_path == "plans[0].use.serve.autoscale.max"
    assert error.source == (f"{LIFECYCLE}:26 with "
                            "(plans.all-on-demand.use.serve.autoscale.min=100)")
    assert "got 64" in error.problem


def test_the_cli_helper_validates_each_variant_and_keeps_the_file_hash() -> None:
    variants = cartesian([parse_set("phases.serve.load.peak_requests_per_s=20,80"),
                          parse_set("prices.gpu_price_change_pct.H100=-10,-40")])
    loaded = [load_variant_file(LIFECYCLE, variant) for variant in variants]
    peaks = []
    for item in loaded:
        serve = item.scenario.phase("serve")
        assert isinstance(serve, ServingPhase)
        peaks.append(serve.load.peak_requests_per_s)
    assert peaks == [20, 20, 80, 80]
    assert [item.scenario.prices.price_factor("H100") for item in loaded] == pytest.approx(
        [0.9, 0.6, 0.9, 0.6])
    assert {item.sha256 for item in loaded} == {hashlib.sha256(LIFECYCLE.read_bytes())
                                                .hexdigest()}
    assert [item.variant for item in loaded] == list(variants)
    # the resolved scenario tells the variants apart (a cache keys on it)
    assert len({json.dumps(item.resolved, sort_keys=True) for item in loaded}) == 4


def test_the_empty_variant_is_the_file_as_written() -> None:
    assert load_variant_file(LIFECYCLE, Variant(settings=())).scenario == \
        load_scenario_file(LIFECYCLE).scenario


def test_referenced_files_carry_the_hash_of_their_bytes(tmp_path: Path) -> None:
    config = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
              "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "rows.csv").write_text(
        "cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"
        "effective_date\nmycolo,rack-7,box,H100,8,20,2026-11-01\n")
    text = LIFECYCLE.read_text().replace("assistant: {preset: llama-3-8b}",
                                         "assistant: {arch: config.json}")
    path = tmp_path / "s.yaml"
    path.write_text(text.replace("budget_usd: 1.5e6",
                                 "budget_usd: 1.5e6\nprices: {price_file: rows.csv}"))
    loaded = load_scenario_file(path)
    digest = {name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
              for name in ("config.json", "rows.csv")}
    assert loaded.referenced_sha256 == (
        (str(tmp_path / "config.json"), digest["config.json"]),
        (str(tmp_path / "rows.csv"), digest["rows.csv"]))
    # editing a referenced file changes its hash, though the scenario's bytes stay the same
    config["vocab_size"] = 2000
    (tmp_path / "config.json").write_text(json.dumps(config))
    again = load_variant_file(path, Variant(settings=()))
    assert again.sha256 == loaded.sha256
    assert again.referenced_sha256[0][1] != digest["config.json"]
    assert load_scenario_file(LIFECYCLE).referenced_sha256 == ()


def test_a_variant_can_switch_the_price_file(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text(
        "cloud,region,instance_type,gpu,gpus_per_instance,on_demand_usd_per_hour,"
        "effective_date\nmycolo,rack-7,box,H100,8,20,2026-11-01\n")
    path = tmp_path / "s.yaml"
    path.write_text(LIFECYCLE.read_text().replace(
        "count: 16}", "count: 16, cloud: mycolo, region: rack-7}"))
    # without the price file the cloud is unknown; the variant adds it
    with pytest.raises(ScenarioError, match="unknown cloud 'mycolo'"):
        load_scenario_file(path)
    loaded = load_variant_file(path, _variant("prices.price_file=rows.csv"))
    assert loaded.price_file == tmp_path / "rows.csv"
    entry = loaded.scenario.plans[0].use_of("train").entries[0]
    assert (entry.cloud, entry.region) == ("mycolo", "rack-7")


def test_the_training_phase_takes_a_swept_token_count() -> None:
    loaded = load_variant(LIFECYCLE, _variant("phases.train.tokens=4e10"), known_names())
    train = loaded.scenario.phase("train")
    assert isinstance(train, TrainingPhase)
    assert train.tokens == 4e10


_SCALARS = st.one_of(
    st.integers(min_value=-10, max_value=10**13), st.floats(allow_nan=False, width=32),
    st.booleans(), st.none(), st.dates(),
    st.text(alphabet="abcdefxyz0123456789.e-_ ", min_size=1, max_size=8).map(str.strip)
    .filter(bool))


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(["horizon_months", "budget_usd"]), value=_SCALARS)
def test_any_value_set_is_accepted_or_refused_exactly_as_in_the_file(key: str,
                                                                      value: Value) -> None:
    text = format_value(value)
    # a string goes into the file quoted, as its author would write it: `--set` text such as
    # `-` or `- a` is a plain string on the command line but a YAML sequence in a file
    in_yaml = json.dumps(value) if isinstance(value, str) else text
    original = {"horizon_months": "horizon_months: 18", "budget_usd": "budget_usd: 1.5e6"}[key]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "edited.yaml"
        path.write_text(LIFECYCLE.read_text(encoding="utf-8").replace(
            original, f"{key}: {in_yaml}"), encoding="utf-8")
        try:
            in_file: LoadedScenario | ScenarioError = load_scenario(path, known_names())
        except ScenarioError as exc:
            in_file = exc
    try:
        by_set: LoadedScenario | ScenarioError = load_variant(
            LIFECYCLE, _variant(f"{key}={text}"), known_names())
    except ScenarioError as exc:
        by_set = exc
    if isinstance(in_file, ScenarioError):
        assert isinstance(by_set, ScenarioError)
        assert (by_set.key_path, by_set.problem) == (in_file.key_path, in_file.problem)
    else:
        assert isinstance(by_set, LoadedScenario)
        assert by_set.scenario == in_file.scenario


def test_many_variants_of_one_file_load_as_each_alone() -> None:
    variants = cartesian([parse_set("phases.serve.load.peak_requests_per_s=20,80"),
                          parse_set("plans.0.use.train.count=8,32")])
    together = list(iter_variant_files(LIFECYCLE, variants))
    alone = [load_variant_file(LIFECYCLE, variant) for variant in variants]
    assert [item.scenario for item in together] == [item.scenario for item in alone]
    reader = ScenarioVariants(LIFECYCLE)
    assert reader.load(variants[3], known_names()).scenario == alone[3].scenario


def test_a_mapping_goes_through_the_files_pipeline(tmp_path: Path) -> None:
    raw = _raw()
    assert load_mapping(raw, LIFECYCLE, known_names()).scenario == \
        load_scenario(LIFECYCLE, known_names()).scenario
    raw["horizon_months"] = 0
    with pytest.raises(ScenarioError) as caught:
        load_mapping(raw, tmp_path / "generated.yaml", known_names())
    assert str(caught.value).startswith(f"{tmp_path / 'generated.yaml'}: horizon_months: "
                                        "must be greater than or equal to 1")


def test_a_price_change_for_a_gpu_the_file_already_changes_replaces_it() -> None:
    everything = GOOD / "everything.yaml"  # gpu_price_change_pct: {H100: -20, L4: 5}
    loaded = load_variant_file(everything, _variant("prices.gpu_price_change_pct.h100=-40"))
    assert loaded.scenario.prices.gpu_price_change_pct == (("H100", -40), ("L4", 5))


def test_two_names_of_one_gpu_in_the_price_changes_are_refused() -> None:
    # an alias the catalog knows: in a file, one of the two would otherwise be ignored
    error = _variant_error("prices.gpu_price_change_pct.H100=-10",
                           "prices.gpu_price_change_pct.H100-SXM=-20")
    assert error.key_path == "prices.gpu_price_change_pct.H100-SXM"
    assert error.problem == "names the same GPU (H100) as 'H100'; give each GPU once"


_PARTS = st.sampled_from(["phases", "plans", "serve", "train", "load", "use", "0", "2", "9",
                          "count", "tokens", "peak_requests_per_s", "prices",
                          "gpu_price_change_pct", "H100", "models", "assistant", "preset",
                          "nothing", "autoscale", "max", "budget_usd", "risk"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_PARTS, min_size=1, max_size=6), _SCALARS)
def test_any_path_applies_or_is_one_scenario_error(parts: list[str], value: Value) -> None:
    raw = _raw()
    variant = Variant(settings=((".".join(parts), value),), origins=("--set x",))
    try:
        applied: Applied | None = apply_settings(raw, variant, source="s.yaml")
    except ScenarioError as exc:
        applied, message = None, str(exc)
    if applied is None:
        assert message.startswith(f"s.yaml with --set x: {'.'.join(parts)}: ")
        return
    (landed,) = applied.paths
    node: Any = applied.data
    for part in landed:
        node = node[part]
    assert node is value or (type(node) is type(value) and node == value)
    # whatever was set, loading it gives a scenario or one ScenarioError, never a crash
    with contextlib.suppress(ScenarioError):
        load_variant(LIFECYCLE, variant, known_names())
