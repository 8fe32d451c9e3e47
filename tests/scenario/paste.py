"""Pasting plan blocks into a scenario file's text, as a person does with ``costsim optimize``'s
block (shared by tests/scenario/test_dump.py and tests/cli/test_optimize_cmd.py)."""

from __future__ import annotations

from collections.abc import Sequence


def with_plans(text: str, blocks: Sequence[str]) -> str:
    """The scenario text with its ``plans:`` list (the last key of the shipped and test
    scenarios) replaced by ``blocks``."""
    head, sep, _ = text.partition("\nplans:\n")
    assert sep, "the scenario's plans: list is its last key"
    return head + sep + "".join(blocks)
