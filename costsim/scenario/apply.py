"""Apply a variant's settings to a scenario file's raw mapping, before validation.

Each key path is walked through the mapping as YAML gave it: a mapping's key by name, a list's
item by its ``name`` (``phases.train``, ``plans.reserve-serving``) or else by its index
(``commitments.0``). A path that names nothing is refused with "did you mean".

Which paths may create a key the file lacks (docs/sweep.md, "What a path may name"):
- a key the scenario schema declares at that place (``budget_usd``, ``load.growth_pct_per_month``,
  ``prices``), creating the mappings above it as needed (``prices.gpu_price_change_pct.H100``
  in a file without ``prices``);
- an entry of ``prices.gpu_price_change_pct`` (GPU → %): the price what-if.
Nothing else is created: not a key the schema does not know (a typo), not a list item, not an
entry of another name → value map (``models``, a plan's ``use``): a variant changes the
scenario's numbers and names, it does not invent phases, plans or models.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from costsim.errors import ScenarioError, name_key, printable, suggest
from costsim.scenario.load import json_schema
from costsim.scenario.variant import Value, Variant, format_key, parse_key
from costsim.scenario.yaml_io import KeyPath

# Name → value maps whose new entries a variant may create (as a schema path: object keys,
# "*" for a map entry, "[]" for a list item).
GROWING_MAPS = frozenset({("prices", "gpu_price_change_pct")})


@dataclass(frozen=True, slots=True)
class Applied:
    """The mapping with the settings applied, and where each setting landed in file terms
    (``("phases", 2, "load", "peak_requests_per_s")``), in the variant's order."""

    data: dict[str, Any]
    paths: tuple[KeyPath, ...]


@functools.cache
def _schema() -> dict[str, Any]:
    return json_schema()


def _alternatives(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A schema node's concrete alternatives ($ref followed, anyOf/oneOf flattened)."""
    if "$ref" in node:
        return _alternatives(_schema()["$defs"][str(node["$ref"]).rsplit("/", 1)[-1]])
    for key in ("anyOf", "oneOf"):
        if key in node:
            return [alt for option in node[key] for alt in _alternatives(option)]
    return [node]


def _matching(alternatives: list[Mapping[str, Any]], value: Any) -> list[Mapping[str, Any]]:
    """The object alternatives a mapping can be: its ``kind``/``dist`` tag picks among them."""
    objects = [alt for alt in alternatives if "properties" in alt]
    if not isinstance(value, dict):
        return objects
    for tag in ("kind", "dist"):
        tagged = [alt for alt in objects
                  if alt["properties"].get(tag, {}).get("const") == value.get(tag)]
        if tag in value and tagged:
            return tagged
    return objects


def _declared(alternatives: list[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Key → the schemas of its value, over every alternative that declares it."""
    keys: dict[str, list[Mapping[str, Any]]] = {}
    for alt in alternatives:
        for key, child in alt.get("properties", {}).items():
            keys.setdefault(key, []).extend(_alternatives(child))
    return keys


def _map_values(alternatives: list[Mapping[str, Any]]) -> list[Mapping[str, Any]] | None:
    """The schemas of a name → value map's values (None: no alternative is such a map)."""
    found = [alt["additionalProperties"] for alt in alternatives
             if isinstance(alt.get("additionalProperties"), dict)]
    return [a for child in found for a in _alternatives(child)] if found else None


def _items(alternatives: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [a for alt in alternatives if isinstance(alt.get("items"), dict)
            for a in _alternatives(alt["items"])]


class _Walk:
    """One setting's walk: builds its messages."""

    def __init__(self, key: str, origin: str, source: str) -> None:
        self.key, self.origin, self.source = key, origin, source

    def error(self, problem: str) -> ScenarioError:
        where = f"{self.source} with {self.origin}" if self.source else self.origin
        return ScenarioError(where, printable(self.key), problem)


def _hint(part: str, known: list[str]) -> str:
    found = suggest(part, known)
    if found:
        return f"; did you mean {' or '.join(repr(h) for h in found)}?"
    shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
    return f" (there: {shown})" if known else ""


def _existing_key(node: dict[Any, Any], part: str, entry: bool) -> Any:
    """The key of ``node`` that ``part`` names; an ``entry`` of a name → value map is also
    found the way the catalog finds names (case, spaces, '-' and '_' ignored), so that
    ``gpu_price_change_pct.h100`` changes the file's ``H100`` instead of adding a second."""
    if part in node:
        return part
    # YAML may have read a key as a number or bool (1y:, on:): match its text
    found = next((key for key in node if str(key) == part), None)
    if found is None and entry:
        found = next((key for key in node if name_key(str(key)) == name_key(part)), None)
    return found


def _item_index(node: list[Any], part: str) -> int | None:
    for index, item in enumerate(node):
        if isinstance(item, dict) and str(item.get("name")) == part:
            return index
    if part.isdigit() and int(part) < len(node):
        return int(part)
    return None


def _place(data: dict[str, Any], parts: tuple[str, ...], value: Value, walk: _Walk) -> KeyPath:
    """Set ``value`` at ``parts`` in ``data`` (in place); return its path in file terms."""
    node: Any = data
    schema = _alternatives(_schema())  # the alternatives of the current node
    schema_path: list[str] = []
    path: list[str | int] = []
    for depth, part in enumerate(parts):
        here = format_key(parts[:depth]) or "the top level"
        if isinstance(node, dict):
            objects = _matching(schema, node)
            declared, values = _declared(objects), _map_values(schema)
            key = _existing_key(node, part, entry=values is not None)
            if key is None and part not in declared and not (
                    values is not None and tuple(schema_path) in GROWING_MAPS):
                if values is None:
                    known = sorted({*map(str, node), *declared})
                    raise walk.error(f"{part!r} names no key of {here}{_hint(part, known)}")
                raise walk.error(f"{part!r} names no entry of {here}"
                                 f"{_hint(part, sorted(map(str, node)))}; a variant changes "
                                 "the file's entries here, it does not add one")
            key = part if key is None else key
            schema = declared.get(part, values or [])
            schema_path.append(part if part in declared else "*")
        elif isinstance(node, list):
            key = _item_index(node, part)
            if key is None:
                names = [str(item["name"]) for item in node
                         if isinstance(item, dict) and "name" in item]
                hint = _hint(part, names) if suggest(part, names) else ""
                raise walk.error(f"{part!r} names no item of {here} (by name: "
                                 f"{', '.join(names) or 'none has a name'}; by index: 0 to "
                                 f"{len(node) - 1}){hint}")
            schema = _items(schema)
            schema_path.append("[]")
        else:
            raise walk.error(f"{here} is a value ({printable(repr(node))}), not a mapping or "
                             "list: the path cannot go inside it")
        path.append(key)
        if depth == len(parts) - 1:
            node[key] = value
        else:
            if isinstance(node, dict) and node.get(key) is None:
                node[key] = {}  # an object the file leaves out (or writes as null)
            node = node[key]
    return tuple(path)


def apply_settings(raw: Mapping[str, Any], variant: Variant, *, source: str = "") -> Applied:
    """:func:`apply_overrides`, also saying where each setting landed.

    Raises:
        ScenarioError: a path that names nothing or cannot be created, or two settings
            landing on the same place; the message names ``source`` (the scenario file),
            the setting's origin, the key path and the rule.
    """
    data = copy.deepcopy(dict(raw))
    paths: list[KeyPath] = []
    for index, (key, value) in enumerate(variant.settings):
        walk = _Walk(key, variant.origin_of(index), source)
        path = _place(data, parse_key(key), value, walk)
        if path in paths:
            other = variant.settings[paths.index(path)][0]
            raise walk.error(f"sets the same place as {other} (one is by name, the other by "
                             "index?); set it once")
        paths.append(path)
    return Applied(data=data, paths=tuple(paths))


def apply_overrides(raw: Mapping[str, Any], variant: Variant, *, source: str = ""
                    ) -> dict[str, Any]:
    """A deep copy of the raw scenario mapping with the variant's settings applied in order
    (``raw`` itself is not changed). ``source`` names the file in messages."""
    return apply_settings(raw, variant, source=source).data
