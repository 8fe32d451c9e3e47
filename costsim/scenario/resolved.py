"""The resolved scenario: the domain objects as JSON, every default filled in.

Written from the domain objects (not the file), so it shows what the simulator was given: the
canonical GPU names, the exact purchase options, the distributions with their defaults. A model
is shown by its reference (``preset:llama-3-8b``) and parameter count, not its full
architecture. ``summary.json`` carries it as ``inputs``, so ``costsim diff`` can say which
inputs changed between two runs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from enum import Enum
from typing import Any

from costsim.domain.architecture import Architecture
from costsim.domain.scenario import Scenario, ScenarioModel


def jsonable(value: Any) -> Any:
    """A domain value as JSON types (dataclass → object, with ``kind``/``dist`` tags)."""
    if isinstance(value, ScenarioModel):
        return {"name": value.name, "reference": value.reference,
                "parameters": value.architecture.params().total}
    if isinstance(value, Architecture):  # a measured point's model: its name is enough here
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        kind = getattr(type(value), "kind", None)
        if isinstance(kind, Enum):
            out["kind"] = kind.value
        elif type(value).__module__.endswith("uncertainty") and type(value).__name__ != \
                "Uncertainty":
            out["dist"] = type(value).__name__.lower()
        for field in dataclasses.fields(value):
            out[field.name] = jsonable(getattr(value, field.name))
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [jsonable(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def resolved_scenario(scenario: Scenario) -> dict[str, Any]:
    """The scenario as a JSON-able dict with every default filled in."""
    out: dict[str, Any] = jsonable(scenario)
    if not scenario.measurements.serving_files and not scenario.measurements.training_files:
        del out["measurements"]  # a scenario without measured inputs reads as it always did
    if not scenario.servers:
        del out["servers"]  # likewise a scenario without servers of its own
    if not scenario.quotas:
        del out["quotas"]  # likewise a scenario without quotas
    for plan in out["plans"]:  # likewise plans without savings plans or capacity blocks
        for key in ("savings_plans", "capacity_blocks"):
            if not plan[key]:
                del plan[key]
            for item in plan.get(key, ()):
                del item["index"]  # the file position, for error messages only
    if scenario.currency.is_usd:
        del out["currency"]  # likewise a scenario shown in USD
    out["calendar"]["end"] = scenario.calendar.end.isoformat()
    return out
