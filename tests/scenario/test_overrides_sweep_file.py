"""Sweep files: listed variants × grid, checked like scenario files; the shipped example."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsim.cli.scenario_names import iter_variant_files, load_variant_file
from costsim.domain.phases import ServingPhase
from costsim.errors import InputError, ScenarioError
from costsim.scenario.overrides import (
    MAX_VARIANTS,
    Variant,
    cartesian,
    crossed,
    load_sweep,
    load_sweep_file,
    parse_set,
)

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "sweeps" / "lifecycle-what-if.yaml"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_listed_variants_are_crossed_with_the_grid(tmp_path: Path) -> None:
    path = _write(tmp_path, """\
variants:
  - {name: as-written, set: {}}
  - name: big
    set: {models.assistant.preset: llama-2-13b, phases.serve.quant: int8}
grid:
  phases.serve.load.peak_requests_per_s: [20, 40]
  prices.gpu_price_change_pct.H100: [-10, -25, -40]
""")
    variants = load_sweep_file(path)
    assert len(variants) == 2 * 2 * 3
    assert variants[0] == Variant(settings=(("phases.serve.load.peak_requests_per_s", 20),
                                            ("prices.gpu_price_change_pct.H100", -10)),
                                  name="as-written")
    assert variants[6].as_dict() == {"models.assistant.preset": "llama-2-13b",
                                     "phases.serve.quant": "int8",
                                     "phases.serve.load.peak_requests_per_s": 20,
                                     "prices.gpu_price_change_pct.H100": -10}
    assert variants[6].label == "big, peak_requests_per_s=20, H100=-10"
    assert variants[6].origin_of(0) == f"{path}:4 (variant 'big')"
    assert variants[6].origin_of(3) == f"{path}:7 grid.prices.gpu_price_change_pct.H100"


def test_a_grid_alone_is_the_same_product_as_set_flags(tmp_path: Path) -> None:
    path = _write(tmp_path, "grid:\n  a.b: [1, 2]\n  c: ['x,y', 2027-01-01]\n")
    assert load_sweep_file(path) == cartesian([parse_set("a.b=1,2"),
                                               parse_set("c='x,y',2027-01-01")])


def test_the_scenario_it_names_is_relative_to_the_sweep_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "scenario: ../s.yaml\ndescription: d\ngrid: {a: [1]}\n")
    sweep = load_sweep(path)
    assert sweep.scenario == tmp_path / ".." / "s.yaml"
    assert sweep.description == "d"


@pytest.mark.parametrize(("text", "where", "rule"), [
    ("variant:\n  - {name: a, set: {}}\n", ":1: variant", "unknown key; did you mean "
     "'variants'?"),
    ("variants:\n  - {name: a, sett: {x: 1}}\n", ":2: variants[0].sett", "unknown key; did "
     "you mean 'set'?"),
    ("variants:\n  - {name: a, set: {x: [1, 2]}}\n", ":2: variants[0].set.x", "a value is "
     "one scalar"),
    ("variants:\n  - {name: a, set: {}}\n  - {name: a, set: {x: 1}}\n", ":3: variants[1].name",
     "the name 'a' is used twice (first in variants[0])"),
    ("variants:\n  - {name: a, set: {x..y: 1}}\n", ":2: variants[0].set.x..y", "has an empty "
     "part"),
    ("variants:\n  - {name: a, set: {x.y: 1, \"x.'y'\": 2}}\n", ":2: variants[0].set.x.'y'",
     "sets x.y twice"),
    ("grid:\n  a: []\n", ":2: grid.a", "needs at least one value"),
    ("grid:\n  a: [1, 1]\n", ":2: grid.a", "the value 1 is given twice"),
    ("grid:\n  a: 1\n", ":2: grid.a", "must be a valid list"),
    ("variants:\n  - {name: a, set: {x: 1}}\ngrid:\n  x: [1, 2]\n", ":4 grid.x: x is also "
     "set by", "sweep.yaml:2 (variant 'a'); a key is either in a listed variant or swept"),
    ("description: nothing\n", ":1", "needs variants, a grid, or both"),
    ("- a\n", ":1", "expected a mapping with variants and/or grid, got list"),
    ("grid:\n  a: [1]\n  a: [2]\n", ":3: grid.a", "duplicate key (first given on line 2)"),
])
def test_a_bad_sweep_file_is_one_error_with_file_line_key_and_rule(
        tmp_path: Path, text: str, where: str, rule: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_sweep_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}{where}"), message
    assert rule in message


def test_a_sweep_over_the_variant_limit_is_refused(tmp_path: Path) -> None:
    values = ", ".join(map(str, range(200)))
    path = _write(tmp_path, f"grid:\n  a: [{values}]\n  b: [{values}]\n")
    with pytest.raises(ScenarioError, match=f"40,000 variants; at most {MAX_VARIANTS:,}"):
        load_sweep_file(path)


@pytest.mark.parametrize("path", sorted((ROOT / "sweeps").glob("*.yaml")),
                         ids=lambda path: path.name)
def test_every_shipped_sweep_file_names_its_scenario_and_every_variant_validates(
        path: Path) -> None:
    sweep = load_sweep(path)
    assert sweep.scenario is not None, "a shipped sweep file names its scenario"
    assert sweep.description, "a shipped sweep file says what it asks"
    loaded = list(iter_variant_files(sweep.scenario, sweep.variants))
    assert len(loaded) == len(sweep.variants)
    assert len({json.dumps(item.resolved, sort_keys=True) for item in loaded}) == len(loaded)


def test_the_example_sweep_crosses_model_size_peak_load_and_h100_price() -> None:
    sweep = load_sweep(EXAMPLE)
    assert sweep.scenario is not None
    assert sweep.scenario.resolve() == (ROOT / "scenarios" / "lifecycle-assistant.yaml")
    assert len(sweep.variants) == 2 * 3 * 3
    peaks, presets, h100 = set(), set(), set()
    for loaded in iter_variant_files(sweep.scenario, sweep.variants):
        serve = loaded.scenario.phase("serve")
        assert isinstance(serve, ServingPhase)
        peaks.add(serve.load.peak_requests_per_s)
        presets.add(loaded.scenario.model("assistant").reference)
        h100.add(round(loaded.scenario.prices.price_factor("H100"), 6))
    assert peaks == {20, 40, 80}
    assert presets == {"preset:llama-3-8b", "preset:llama-2-13b"}
    assert h100 == {0.9, 0.75, 0.6}


def test_listed_variants_cross_with_set_flags_too(tmp_path: Path) -> None:
    path = _write(tmp_path, "variants:\n  - {name: a, set: {x: 1}}\n  - {name: b, set: {x: 2}}\n")
    variants = crossed(load_sweep_file(path), [parse_set("y=10,20")])
    assert [(v.name, v.as_dict()) for v in variants] == [
        ("a", {"x": 1, "y": 10}), ("a", {"x": 1, "y": 20}),
        ("b", {"x": 2, "y": 10}), ("b", {"x": 2, "y": 20})]
    assert variants[1].label == "a, y=20"
    with pytest.raises(InputError, match=r"^--set x=5: x is also set by .*sweep\.yaml:2 "):
        crossed(load_sweep_file(path), [parse_set("x=5")])
    with pytest.raises(InputError, match="2 × 100 × 100 = 20,000 variants"):
        crossed(load_sweep_file(path), [parse_set("y=" + ",".join(map(str, range(100)))),
                                        parse_set("z=" + ",".join(map(str, range(100))))])


def test_a_sweep_file_variant_breaking_a_rule_names_the_scenario_and_its_line(
        tmp_path: Path) -> None:
    path = _write(tmp_path, "variants:\n  - name: tiny\n    set:\n"
                            "      phases.serve.quant: int9\n")
    (variant,) = load_sweep_file(path)
    scenario = ROOT / "scenarios" / "lifecycle-assistant.yaml"
    with pytest.raises(ScenarioError) as caught:
        load_variant_file(scenario, variant)
    error = caught.value
    assert error.source == f"{scenario} with {path}:4 (variant 'tiny')"
    assert error.key_path == "phases[2].quant"
    assert error.problem.startswith("must be one of none, int8, int4, nf4, fp8, got 'int9'")
