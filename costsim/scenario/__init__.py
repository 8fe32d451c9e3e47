"""Scenario files: YAML text → validated frozen domain objects (yaml and pydantic only here).

``load_scenario(path, names)`` reads, validates and builds a scenario (DESIGN §8); the catalog's
names come in through :class:`KnownNames`, so this layer imports only the domain.
"""

from costsim.scenario.build import KnownNames
from costsim.scenario.load import LoadedScenario, json_schema, load_scenario

__all__ = ["KnownNames", "LoadedScenario", "json_schema", "load_scenario"]
