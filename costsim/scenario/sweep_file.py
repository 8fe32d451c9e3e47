"""Sweep files (``sweeps/*.yaml``): named variants of a scenario, and an optional grid.

```yaml
scenario: ../scenarios/lifecycle-assistant.yaml      # optional: the scenario it is written for
description: model size × peak load × H100 price     # optional
variants:                                            # each: a name and the keys it sets
  - {name: llama-3-8b, set: {}}                      # the file as written
  - name: codellama-34b
    set: {models.assistant.preset: codellama-34b, plans.all-on-demand.use.fine-tune.count: 64}
grid:                                                # every combination, like --set flags
  phases.serve.load.peak_requests_per_s: [20, 40, 80]
  prices.gpu_price_change_pct.H100: [-10, -25, -40]
```

The variants are every listed variant combined with every grid point (listed variants outer,
in file order; then the grid, its first key varying slowest), so the file above gives
2 × 3 × 3 = 18. Without ``variants`` the grid alone; without ``grid`` the listed variants.
Keys are key paths of the ``--set`` grammar; values are YAML scalars (the file's own YAML reads
them). Unknown keys, a key set twice, names used twice, and more than
:data:`~costsim.scenario.variant.MAX_VARIANTS` variants are refused with ``FILE:LINE``. The
same 1 MiB, safe-YAML, duplicate-key rules as scenario files apply (yaml_io).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationError

from costsim.errors import InputError, ScenarioError
from costsim.scenario.load import display_path, from_validation
from costsim.scenario.spec_common import Name, Spec
from costsim.scenario.variant import (
    MAX_VALUES,
    MAX_VARIANTS,
    Override,
    Variant,
    crossed,
    format_key,
    format_value,
    parse_key,
    same_value,
)
from costsim.scenario.yaml_io import (
    YamlDocument,
    decode_scenario_text,
    parse_yaml,
    read_scenario_bytes,
)


def _scalar(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        raise ValueError(f"expected a date YYYY-MM-DD without a time, got {value}")
    if value is not None and not isinstance(value, str | int | float | bool | dt.date):
        raise ValueError("a value is one scalar (a number, text, true/false, a date or null); "
                         f"a {'list' if isinstance(value, list) else 'mapping'} is not")
    return value


Scalar = Annotated[Any, AfterValidator(_scalar)]


class SweepVariantSpec(Spec):
    """One listed variant: its name and the key paths it sets."""

    name: Name = Field(description="the variant's name, as results show it")
    set: dict[str, Scalar] = Field(default_factory=dict, max_length=1000,
                                   description="key path → value ({}: the scenario as written)")


class SweepSpec(Spec):
    """A sweep file."""

    scenario: Name | None = Field(None, description="the scenario it is written for "
                                  "(relative to this file)")
    description: str | None = Field(None, max_length=2000, description="what it asks")
    variants: list[SweepVariantSpec] = Field(default_factory=list, max_length=MAX_VARIANTS,
                                             description="listed variants")
    grid: dict[str, list[Scalar]] = Field(default_factory=dict, max_length=100,
                                          description="key path → values, combined with "
                                          "every listed variant")


@dataclass(frozen=True, slots=True)
class SweepFile:
    """A loaded sweep file: the scenario it names (if any) and its variants."""

    path: Path
    scenario: Path | None
    description: str
    variants: tuple[Variant, ...]


def load_sweep(path: Path) -> SweepFile:
    """Read and check a sweep file.

    Raises:
        ScenarioError: the first problem, as ``FILE:LINE: key: rule``.
    """
    name = str(path)
    doc = parse_yaml(decode_scenario_text(read_scenario_bytes(path), name), name)
    if not isinstance(doc.data, dict):
        raise ScenarioError(f"{name}:1", "", "expected a mapping with variants and/or grid, "
                            f"got {type(doc.data).__name__}")
    try:
        spec = SweepSpec.model_validate(doc.data)
    except ValidationError as exc:
        raise from_validation(doc, lambda key: f"{name}:{doc.line_of(key)}", exc) from None
    if not spec.variants and not spec.grid:
        raise ScenarioError(f"{name}:1", "", "needs variants, a grid, or both")
    listed = _listed(doc, name, spec)
    axes = _grid(doc, name, spec)
    try:
        variants = crossed(listed, axes)
    except InputError as exc:  # too many, or a key both listed and in the grid (its line)
        raise ScenarioError(exc.source, exc.key_path, exc.problem) from None
    scenario = None if spec.scenario is None else path.parent / spec.scenario
    return SweepFile(path=path, scenario=scenario, description=spec.description or "",
                     variants=tuple(variants))


def load_sweep_file(path: Path) -> tuple[Variant, ...]:
    """The variants of the sweep file ``path`` (see the module's documentation)."""
    return load_sweep(path).variants


def _key(doc: YamlDocument, name: str, where: tuple[str | int, ...], text: str
         ) -> tuple[str, ...]:
    try:
        return parse_key(text, whole=text)
    except InputError as exc:
        raise ScenarioError(f"{name}:{doc.line_of(where)}", display_path(where),
                            exc.problem) from None


def _listed(doc: YamlDocument, name: str, spec: SweepSpec) -> list[Variant]:
    if not spec.variants:
        return [Variant(settings=())]
    seen: dict[str, int] = {}
    listed = []
    for index, item in enumerate(spec.variants):
        where = f"{name}:{doc.line_of(('variants', index))}"
        if item.name in seen:
            raise ScenarioError(where, display_path(("variants", index, "name")),
                                f"the name '{item.name}' is used twice (first in "
                                f"variants[{seen[item.name]}])")
        seen[item.name] = index
        keys: list[tuple[str, ...]] = []
        for text in item.set:
            parts = _key(doc, name, ("variants", index, "set", text), text)
            if parts in keys:
                at = ("variants", index, "set", text)
                raise ScenarioError(f"{name}:{doc.line_of(at)}", display_path(at),
                                    f"sets {format_key(parts)} twice")
            keys.append(parts)
        origins = tuple(f"{name}:{doc.line_of(('variants', index, 'set', text))} (variant "
                        f"'{item.name}')" for text in item.set)
        listed.append(Variant(settings=tuple((format_key(parts), value) for parts, value
                                             in zip(keys, item.set.values(), strict=True)),
                              name=item.name, origins=origins, named=len(keys)))
    return listed


def _grid(doc: YamlDocument, name: str, spec: SweepSpec) -> list[Override]:
    axes: list[Override] = []
    for text, values in spec.grid.items():
        where, key = f"{name}:{doc.line_of(('grid', text))}", display_path(("grid", text))
        parts = _key(doc, name, ("grid", text), text)
        if not values:
            raise ScenarioError(where, key, "needs at least one value")
        if len(values) > MAX_VALUES:
            raise ScenarioError(where, key, f"{len(values)} values; at most {MAX_VALUES}")
        for index, value in enumerate(values):
            if any(same_value(value, seen) for seen in values[:index]):
                raise ScenarioError(where, key, f"the value {format_value(value)} is given "
                                    "twice")
        if any(axis.parts == parts for axis in axes):
            raise ScenarioError(where, key, f"sets {format_key(parts)} twice")
        axes.append(Override(parts=parts, values=tuple(values), text=f"grid.{text}",
                             source=where))
    return axes
