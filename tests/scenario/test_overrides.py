"""The --set grammar: key paths, values read like YAML scalars, quoting, errors, cartesian."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.errors import CostsimError, InputError
from costsim.scenario.overrides import (
    MAX_VARIANTS,
    Override,
    Variant,
    cartesian,
    format_key,
    format_value,
    parse_set,
    parse_value,
)


def test_values_are_read_like_yaml_scalars_in_the_file() -> None:
    override = parse_set("a.b=20,0.5,true,2027-03-01,null,llama-3-8b,5e7,1_000")
    assert override.parts == ("a", "b")
    assert override.values == (20, 0.5, True, dt.date(2027, 3, 1), None, "llama-3-8b",
                               "5e7",  # as in the file: PyYAML reads an unsigned exponent as text
                               1000)
    assert [type(v) for v in override.values[:4]] == [int, float, bool, dt.date]


def test_a_quoted_value_holds_commas_and_stays_text() -> None:
    override = parse_set("""phases.serve.name='a, b','it''s',"x,\\"y\\"",'20'""")
    assert override.values == ("a, b", "it's", 'x,"y"', "20")


def test_spaces_around_keys_and_values_are_ignored() -> None:
    assert parse_set(" a.b = 1 , 2 ").values == (1, 2)
    assert parse_set(" a.b = 1 , 2 ").parts == ("a", "b")


def test_a_quoted_key_part_may_hold_a_dot() -> None:
    override = parse_set("plans.'v1.2'.use.serve.count=4")
    assert override.parts == ("plans", "v1.2", "use", "serve", "count")
    assert override.key == "plans.'v1.2'.use.serve.count"
    assert parse_set(override.key + "=4").parts == override.parts


@pytest.mark.parametrize(("text", "rule"), [
    ("phases.serve.load.peak_requests_per_s", "no '='"),
    ("phases.serve.load.peak_requests_per_s=", "no value after '='"),
    ("phases.serve.load.peak_requests_per_s=  ", "no value after '='"),
    ("=20", "the key path before '=' is empty"),
    ("phases..load=20", "has an empty part"),
    (".phases=20", "has an empty part"),
    ("phases.=20", "has an empty part"),
    ("a=1,,2", "value 2 is empty"),
    ("a=1,2,", "value 3 is empty"),
    ("a='x", "not closed"),
    ("a='x'y", "text after a closing quote"),
    ("a=20,20", "the value 20 is given twice"),
])
def test_bad_text_is_one_input_error_naming_the_flag_the_text_and_the_rule(
        text: str, rule: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_set(text)
    assert isinstance(caught.value, CostsimError)  # the CLI turns it into exit 2
    message = str(caught.value)
    assert message.startswith(f"--set {text}: ")
    assert rule in message
    assert "\n" not in message


def test_the_flag_name_in_messages_is_the_callers() -> None:
    with pytest.raises(InputError, match=r"^--vary a: no '='"):
        parse_set("a", source="--vary")


def test_equal_values_of_different_types_are_different_values() -> None:
    assert parse_set("a=1,1.0,true,'1'").values == (1, 1.0, True, "1")


finite = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.one_of(st.integers(), finite, st.booleans(), st.none(), st.dates(),
                    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20))


@given(scalars)
def test_format_value_reads_back_as_the_same_value(value: object) -> None:
    text = format_value(value)  # type: ignore[arg-type]
    override = parse_set(f"a={text}")
    assert override.values == (value,)
    assert type(override.values[0]) is type(value)


@given(st.lists(scalars, min_size=1, max_size=5, unique_by=lambda v: (type(v), v)))
def test_a_list_of_values_reads_back_in_order(values: list[object]) -> None:
    text = ",".join(format_value(v) for v in values)  # type: ignore[arg-type]
    assert list(parse_set(f"k={text}").values) == values


@given(st.lists(st.text(min_size=1, max_size=8).filter(lambda t: t.strip() == t and t),
                min_size=1, max_size=4))
def test_format_key_reads_back_as_the_same_parts(parts: list[str]) -> None:
    assert parse_set(format_key(parts) + "=1").parts == tuple(parts)


def test_parse_value_of_an_impossible_date_is_text() -> None:
    assert parse_value("2027-02-30") == "2027-02-30"


def test_cartesian_is_the_product_in_the_order_given() -> None:
    peak = parse_set("phases.serve.load.peak_requests_per_s=20,40,80")
    price = parse_set("prices.gpu_price_change_pct.H100=-10,-25")
    variants = cartesian([peak, price])
    assert len(variants) == 6
    assert [v.as_dict() for v in variants[:3]] == [
        {"phases.serve.load.peak_requests_per_s": 20, "prices.gpu_price_change_pct.H100": -10},
        {"phases.serve.load.peak_requests_per_s": 20, "prices.gpu_price_change_pct.H100": -25},
        {"phases.serve.load.peak_requests_per_s": 40, "prices.gpu_price_change_pct.H100": -10}]
    assert variants[-1].label == "peak_requests_per_s=80, H100=-25"
    assert len(set(variants)) == 6


def test_no_override_is_one_variant_the_file_as_written() -> None:
    (variant,) = cartesian([])
    assert variant.settings == ()
    assert variant.label == "as written"


def test_the_same_key_path_twice_is_an_error() -> None:
    with pytest.raises(InputError, match=r"already set by --set a\.b=1"):
        cartesian([parse_set("a.b=1"), parse_set("a . b=2")])


def test_a_product_over_the_limit_is_refused_before_building_it() -> None:
    big = [parse_set("a=" + ",".join(map(str, range(100)))),
           parse_set("b=" + ",".join(map(str, range(100)))),
           parse_set("c=1,2")]
    with pytest.raises(InputError, match=rf"100 × 100 × 2 = 20,000 variants; at most "
                                         rf"{MAX_VARIANTS:,}"):
        cartesian(big)


def test_as_dict_is_json_and_labels_use_the_shortest_unique_key_suffix() -> None:
    variant = Variant(settings=(("plans.a.commitments.0.count", 2),
                                ("plans.b.commitments.0.count", 4),
                                ("start", dt.date(2027, 2, 1))))
    assert json.loads(json.dumps(variant.as_dict())) == {
        "plans.a.commitments.0.count": 2, "plans.b.commitments.0.count": 4,
        "start": "2027-02-01"}
    assert variant.label == "a.commitments.0.count=2, b.commitments.0.count=4, start=2027-02-01"


def test_variants_are_frozen_and_their_origins_are_not_their_identity() -> None:
    one = Variant(settings=(("a", 1),), origins=("--set a=1,2",))
    other = Variant(settings=(("a", 1),), origins=("sweeps/x.yaml:3",))
    assert one == other
    assert hash(one) == hash(other)
    with pytest.raises(AttributeError):
        one.name = "x"  # type: ignore[misc]
    assert Override(parts=("a",), values=(1,)).key == "a"


def test_a_quoted_key_part_may_hold_quotes_and_equals_signs() -> None:
    assert parse_set("a.'x''=y'.b=1").parts == ("a", "x'=y", "b")
    assert parse_set('a."x\\"=y".b=1').parts == ("a", 'x"=y', "b")
    assert parse_set(format_key(["x'=", "b"]) + "=1").parts == ("x'=", "b")


@given(st.text(max_size=60))
def test_any_text_parses_or_is_one_input_error(text: str) -> None:
    try:
        override: Override | None = parse_set(text)
    except InputError as exc:
        override, message = None, str(exc)
    if override is None:
        assert message.startswith("--set ")
        assert "\n" not in message
    else:
        assert override.parts
        assert all(override.parts)
        assert override.values
