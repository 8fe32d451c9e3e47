"""The catalog's names for the scenario loader, and loading a scenario with its price file.

``costsim.scenario`` knows no catalog (DESIGN §4); the commands that read scenario files
(``validate``, ``run``, ``compare``) fill :class:`KnownNames` here and merge the scenario's
``prices.price_file`` through the same reader as ``costsim prices --price-file``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

from costsim.domain.architecture import Architecture
from costsim.domain.measurements import (
    RunDetails,
    ServingFileContext,
    ServingPoint,
    TrainingPoint,
)
from costsim.scenario import KnownNames, LoadedScenario, load_scenario
from costsim.scenario.overrides import ScenarioVariants, Variant, load_variant
from costsim.scenario.resolved import resolved_scenario


def _canonical_gpu(name: str) -> str:
    from costsim.catalog.gpus import canonical_gpu_name

    return canonical_gpu_name(name, source="")


def _load_model(preset: str | None, arch_path: Path | None) -> tuple[Architecture, str]:
    from costsim.catalog.models import load_architecture_file, load_preset

    if preset is not None:
        found = load_preset(preset, source="")
        return found.architecture, f"preset:{found.name}"
    assert arch_path is not None
    return load_architecture_file(arch_path), f"config:{arch_path}"


def _read_serving(path: Path, context: ServingFileContext) -> tuple[ServingPoint, ...]:
    from costsim.catalog.serving_profiles import read_serving_profile

    return read_serving_profile(path, context)


def _read_training(path: Path, details: RunDetails) -> tuple[TrainingPoint, ...]:
    from costsim.catalog.training_profiles import read_training_profile

    return read_training_profile(path, details)


def known_names() -> KnownNames:
    """The names a scenario may use, from the shipped catalog."""
    from costsim.catalog.price_tables import billing_rules, shipped_offerings
    from costsim.catalog.servers import OWNED_CLOUD, server_names

    rules = billing_rules()
    regions = frozenset((o.cloud, o.region) for o in shipped_offerings())
    return KnownNames(canonical_gpu=_canonical_gpu, load_model=_load_model,
                      servers=frozenset(server_names()),
                      clouds=frozenset(c for c in rules if c != OWNED_CLOUD),
                      marketplaces=frozenset(c for c, r in rules.items() if r.marketplace),
                      regions=regions, read_serving=_read_serving,
                      read_training=_read_training)


def load_scenario_file(path: Path) -> LoadedScenario:
    """Load ``path`` with the catalog's names and merge its price file's rows and quotes
    into the scenario's price overrides (the file's rows replace shipped rows of the same key);
    clouds and regions are checked against the book and the file together."""
    return _with_price_file(lambda names: load_scenario(path, names))


def load_variant_file(path: Path, variant: Variant) -> LoadedScenario:
    """:func:`load_scenario_file` for the scenario ``path`` with a sweep variant applied
    (validated exactly like the file; a variant may change the price file too)."""
    return _with_price_file(lambda names: load_variant(path, variant, names))


def iter_variant_files(path: Path, variants: Iterable[Variant]) -> Iterator[LoadedScenario]:
    """:func:`load_variant_file` for each variant in order, reading and parsing ``path``
    once; lazily, so a caller keeps only what it needs of each."""
    scenario = ScenarioVariants(path)
    for variant in variants:
        yield _with_price_file(partial(scenario.load, variant))


def _with_price_file(load: Callable[[KnownNames], LoadedScenario]) -> LoadedScenario:
    from costsim.catalog.api_prices import api_rows_of_price_file
    from costsim.catalog.price_file import load_price_file_entries

    names = _reading_each_file_once(known_names())
    loaded = load(names)
    if loaded.price_file is None:
        return loaded
    price_file = loaded.price_file
    api_rows = api_rows_of_price_file(price_file)
    if api_rows is not None:  # a file of pay-per-token API rows: no clouds or regions to add
        loaded = load(replace(names, with_price_file=True))  # so the book's are checked now
        scenario = loaded.scenario
        overrides = replace(scenario.prices.overrides, api_prices=api_rows)
        with_api = replace(scenario, prices=replace(scenario.prices, overrides=overrides))
        return replace(loaded, scenario=with_api, resolved=resolved_scenario(with_api))
    offerings, quotes = load_price_file_entries(price_file, loaded.scenario.currency)
    # again, now that the file's clouds and regions are known names too
    loaded = load(replace(
        names, clouds=names.clouds | {o.cloud for o in offerings},
        regions=names.regions | {(o.cloud, o.region) for o in offerings},
        with_price_file=True))
    scenario = loaded.scenario
    overrides = scenario.prices.overrides
    merged = replace(overrides,
                     custom_offerings=(*offerings, *overrides.custom_offerings),
                     quoted_reservations=(*quotes, *overrides.quoted_reservations))
    merged_scenario = replace(scenario, prices=replace(scenario.prices, overrides=merged))
    return replace(loaded, scenario=merged_scenario,
                   resolved=resolved_scenario(merged_scenario))


def _reading_each_file_once(names: KnownNames) -> KnownNames:
    """``names`` whose measurement readers keep what they read: a scenario with a price file is
    built twice (the second time with the file's clouds), and its measurement files need
    reading only once."""
    serving: dict[tuple[Path, ServingFileContext], tuple[ServingPoint, ...]] = {}
    training: dict[tuple[Path, RunDetails], tuple[TrainingPoint, ...]] = {}

    def read_serving(path: Path, context: ServingFileContext) -> tuple[ServingPoint, ...]:
        if (path, context) not in serving:
            serving[path, context] = _read_serving(path, context)
        return serving[path, context]

    def read_training(path: Path, details: RunDetails) -> tuple[TrainingPoint, ...]:
        if (path, details) not in training:
            training[path, details] = _read_training(path, details)
        return training[path, details]

    return replace(names, read_serving=read_serving, read_training=read_training)
