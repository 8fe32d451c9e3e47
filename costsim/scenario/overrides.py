"""Scenario variants for sweeps: the ``--set`` grammar, sweep files, and loading a variant.

A variant is the scenario file with some keys changed. :func:`load_variant` reads the file,
applies the variant's settings to its raw YAML mapping (:mod:`costsim.scenario.apply`) and
validates the result through the very pipeline a file goes through
(:func:`costsim.scenario.load.load_document`), so a variant is refused exactly when the same
edit made in the file would be, with the same key path and rule; the message names the file
and the ``--set`` (or sweep-file variant) that made the edit. Both grammars are documented in
docs/sweep.md.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from costsim.scenario.apply import Applied, apply_overrides, apply_settings
from costsim.scenario.build import KnownNames
from costsim.scenario.load import LoadedScenario, load_document, read_document
from costsim.scenario.sweep_file import SweepFile, load_sweep, load_sweep_file
from costsim.scenario.variant import (
    MAX_VALUES,
    MAX_VARIANTS,
    Override,
    Value,
    Variant,
    cartesian,
    crossed,
    format_key,
    format_value,
    parse_set,
    parse_value,
)
from costsim.scenario.yaml_io import KeyPath, YamlDocument

__all__ = ["MAX_VALUES", "MAX_VARIANTS", "Applied", "Override", "ScenarioVariants", "SweepFile",
           "Value", "Variant", "apply_overrides", "apply_settings", "cartesian", "crossed",
           "format_key",
           "format_value", "load_sweep", "load_sweep_file", "load_variant", "parse_set",
           "parse_value"]


class ScenarioVariants:
    """A scenario file read and parsed once, ready to load any number of its variants (YAML
    parsing is most of the cost of loading one: 80 % for the flagship)."""

    def __init__(self, path: Path) -> None:
        """Read and parse ``path`` (a ScenarioError if it is unreadable or not YAML)."""
        self.path = path
        data, self._doc = read_document(path)
        self.sha256 = hashlib.sha256(data).hexdigest()

    def load(self, variant: Variant, names: KnownNames) -> LoadedScenario:
        """The file with ``variant`` applied, validated like the file (see load_variant)."""
        name, doc = str(self.path), self._doc
        applied = apply_settings(doc.data, variant, source=name)

        def locate(key: KeyPath) -> str:
            # an error at or inside a setting's value, or on the object holding it (a rule
            # joining that object's keys), is that setting's; elsewhere, the file's line,
            # with the variant that was applied
            for index, landed in enumerate(applied.paths):
                if key[:len(landed)] == landed or (len(landed) > 1 and key == landed[:-1]):
                    return f"{name} with {variant.origin_of(index)}"
            return f"{name}:{doc.line_of(key)}{_with(variant)}"

        return load_document(YamlDocument(data=applied.data, lines=doc.lines), self.path,
                             names, sha256=self.sha256, locate=locate, variant=variant)


def load_variant(path: Path, variant: Variant, names: KnownNames) -> LoadedScenario:
    """The scenario file ``path`` with ``variant`` applied, validated exactly like the file.

    ``sha256`` stays the file's (what a report cites, with ``variant`` beside it). To load
    many variants of one file, read it once with :class:`ScenarioVariants`.

    Raises:
        ScenarioError: the file's own problems as ``FILE:LINE: key: rule``; a setting's
            problem as ``FILE with ORIGIN: key: rule, got value``, where ORIGIN is the
            ``--set`` or the sweep-file variant that made the edit.
    """
    return ScenarioVariants(path).load(variant, names)


def _with(variant: Variant) -> str:
    """`` with variant 'NAME' (KEY=VALUE, ...)`` for a message, or nothing for no settings."""
    settings = ", ".join(f"{key}={format_value(value)}" for key, value in variant.settings)
    name = f"variant '{variant.name}' " if variant.name else ""
    return f" with {name}({settings})" if settings else (f" with {name.strip()}" if name else "")
