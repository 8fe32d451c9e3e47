"""A sweep's variants, each loaded and validated exactly like a scenario file: the Cartesian
product of ``--set`` overrides, a sweep file's list, or (neither given) the file as written.

The grammar is the scenario layer's (:mod:`costsim.scenario.overrides`, docs/sweep.md); this
module gives it the catalog's names, merges the price file the same way as ``run``, and hands
the sweep engine resolved domain objects, never paths.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from costsim.cli.scenario_names import load_scenario_file, load_with_price_file
from costsim.errors import InputError

if TYPE_CHECKING:
    from costsim.scenario import LoadedScenario
    from costsim.sweep.tasks import SweepVariant


def _variant(label: str, overrides: dict[str, object], loaded: LoadedScenario) -> SweepVariant:
    from costsim.sweep.tasks import SweepVariant

    return SweepVariant(label=label, overrides=overrides, scenario=loaded.scenario,
                        resolved=loaded.resolved,
                        referenced_sha256=dict(getattr(loaded, "referenced_sha256", {})))


def load_variants(path: Path, sets: list[str], sweep_file: Path | None
                  ) -> tuple[LoadedScenario, tuple[SweepVariant, ...]]:
    """The scenario as written and the sweep's variants, each validated.

    Raises:
        InputError: both ``--set`` and ``--sweep-file`` given; a bad override or sweep file;
            a variant that breaks a scenario rule (the message names the flag or file, the key
            path, the rule and the value).
    """
    if sets and sweep_file is not None:
        raise InputError("--sweep-file", str(sweep_file), "give the variants either with --set "
                         "or in a sweep file, not both")
    base = load_scenario_file(path)
    if not sets and sweep_file is None:
        return base, (_variant("", {}, base),)
    from costsim.scenario.overrides import cartesian, load_sweep_file, load_variant, parse_set

    variants = (load_sweep_file(sweep_file) if sweep_file is not None
                else cartesian([parse_set(text) for text in sets]))
    loaded = []
    for variant in variants:
        found = load_with_price_file(partial(load_variant, path, variant))
        loaded.append(_variant(variant.label, dict(variant.as_dict()), found))
    return base, tuple(loaded)
