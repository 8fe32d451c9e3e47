"""A sweep's variants, each loaded and validated exactly like a scenario file: the Cartesian
product of ``--set`` overrides, a sweep file's variants, or (neither given) the file as written.

The grammar is the scenario layer's (:mod:`costsim.scenario.overrides`, docs/sweep.md); this
module loads each variant as ``run`` loads a file (price file merged) and hands the sweep engine
resolved domain objects, never paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from costsim.cli.scenario_names import iter_variant_files, load_scenario_file
from costsim.errors import InputError

if TYPE_CHECKING:
    from costsim.scenario import LoadedScenario
    from costsim.sweep.tasks import SweepVariant

AS_WRITTEN = "as written"  # the label of the variant that changes nothing (Variant.label's)


def _variant(loaded: LoadedScenario) -> SweepVariant:
    from costsim.sweep.tasks import SweepVariant

    variant = loaded.variant
    return SweepVariant(
        label=variant.label if variant is not None else AS_WRITTEN,
        name=variant.name if variant is not None else "",
        overrides=variant.as_dict() if variant is not None else {},
        scenario=loaded.scenario, resolved=loaded.resolved,
        referenced_sha256=dict(loaded.referenced_sha256))


def load_variants(path: Path, sets: list[str], sweep_file: Path | None
                  ) -> tuple[LoadedScenario, tuple[SweepVariant, ...]]:
    """The scenario as written and the sweep's variants, every one validated before anything
    is simulated: the product of ``sets``, a sweep file's variants, or both crossed.

    Raises:
        InputError: a sweep file written for another scenario; a bad override or sweep file;
            a variant that breaks a scenario rule (the message names the flag or file, the key
            path, the rule and the value).
    """
    from costsim.scenario.overrides import cartesian, crossed, load_sweep, parse_set

    base = load_scenario_file(path)
    if sweep_file is not None:
        found = load_sweep(sweep_file)
        if found.scenario is not None and found.scenario.resolve() != path.resolve():
            raise InputError("--sweep-file", str(sweep_file), f"is written for the scenario "
                             f"{found.scenario}, not {path}")
        # --set flags with a sweep file: every listed variant × the flags' product
        variants = crossed(found.variants, [parse_set(text) for text in sets])
    elif sets:
        variants = cartesian([parse_set(text) for text in sets])
    else:
        return base, (_variant(base),)
    return base, tuple(_variant(loaded) for loaded in iter_variant_files(path, variants))
