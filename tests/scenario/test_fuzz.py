"""Fuzz: any value at any key of a good scenario gives exit 0 or 2 — never a traceback."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costsim.cli.main import main
from tests.scenario.conftest import HERE

BASE = yaml.safe_load((HERE / "good" / "everything.yaml").read_text(encoding="utf-8"))


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


PATHS = [p for p in _paths(BASE) if p and p[:2] != ("prices", "price_file")]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["5e7", "1_000", "-0", "nan", "1e400", "H100", "on-demand", "reserved",
                     "2027-13-01", "2027-02-30", "", " ", "1y", "train", "<script>", "\u202e"]),
    st.text(max_size=20),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(st.sampled_from(PATHS), VALUES), min_size=1, max_size=3))
def test_any_value_anywhere_is_accepted_or_refused_cleanly(
        changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    data = copy.deepcopy(BASE)
    for path, value in changes:
        try:
            _set(data, path, value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change replaced a parent of this path
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        (Path(folder) / "quotes.csv").write_bytes((HERE / "good" / "quotes.csv").read_bytes())
        try:
            code = main(["validate", str(path)])
        except SystemExit as exc:  # argparse never gets here with a path, but be exact
            code = int(exc.code or 0)
    assert code in (0, 2)
