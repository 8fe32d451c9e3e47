"""scenarios/README.md documents every key: its reference section is the generated one."""

from __future__ import annotations

from pathlib import Path

from costsim.scenario.reference import key_reference
from costsim.scenario.spec import ScenarioSpec

README = Path(__file__).parents[2] / "scenarios" / "README.md"


def test_the_key_reference_is_the_generated_one() -> None:
    text = README.read_text(encoding="utf-8")
    start, end = "<!-- key-reference:start -->\n", "<!-- key-reference:end -->"
    shown = text[text.index(start) + len(start):text.index(end)]
    assert shown == key_reference(), "regenerate it: costsim schema --markdown"


def test_every_key_has_a_meaning_and_every_number_a_range() -> None:
    reference = key_reference()
    rows = [line for line in reference.splitlines() if line.startswith("| `")]
    assert len(rows) > 100
    for row in rows:
        key, kind, _unit, bounds, _default, meaning = (c.strip() for c in row.strip("|").split("|"))
        assert meaning, f"{key} has no meaning"
        distribution = "[FixedSpec]" in kind  # its parameters have ranges in their own tables
        if kind.startswith(("number", "integer")) and not distribution:
            assert bounds, f"{key} has no range"
    for key in ScenarioSpec.model_fields:
        assert f"| `{key}` |" in reference
