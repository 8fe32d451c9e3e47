"""The key reference of scenario files (``scenarios/README.md``), generated from the schema.

One table per object of the file: key, type, unit, range, default, meaning. It is written from
:func:`costsim.scenario.load.json_schema`, the same models the loader validates with, so the
documentation cannot drift from what the loader accepts (a test compares it with the README).
"""

from __future__ import annotations

from typing import Any

from costsim.scenario.load import json_schema

# Units read off the key's name (DESIGN §5: units live in names).
_UNITS = (("_usd_per_hour", "$ per instance-hour"), ("usd_per_hour", "$ per hour"),
          ("_per_usd", "currency units per $"),
          ("_usd", "$"), ("_pct_per_year", "% per year"),
          ("_pct_per_month", "% per month"), ("_pct", "%"), ("_gib", "GiB (2^30 bytes)"),
          ("_gb_per_month", "GB (10^9 bytes) per month"), ("_gb", "GB (10^9 bytes)"),
          ("_tb", "TB (10^12 bytes)"), ("_gbps", "Gbit/s"), ("_per_s", "per second"),
          ("_per_minute", "per minute"), ("_per_day", "per day"), ("_s", "seconds"),
          ("_days", "days"),
          ("_months", "months"), ("_years", "years"), ("tokens", "tokens"),
          ("gpu_hours", "GPU-hours"))
# Where each object sits in the file.
_WHERE = {
    "ScenarioSpec": "top level", "AutoscaleSpec": "plans[].use.PHASE.autoscale",
    "CommitmentSpec": "plans[].commitments[]", "DataSpec": "data",
    "SavingsPlanSpec": "plans[].commitments[] with kind: savings-plan",
    "CapacityBlockSpec": "plans[].commitments[] with kind: capacity-block",
    "DiscountSpec": "prices.overrides[]", "ExperimentsSpec": "phases[] with kind: experiments",
    "FixedSpec": "a distribution: dist: fixed", "FleetSpec": "plans[].use.PHASE as a fleet",
    "GenericJobSpec": "phases[].job, generic", "LayoutSpec": "phases[].layout",
    "LoadSpec": "phases[].load", "LogNormalSpec": "a distribution: dist: lognormal",
    "ModelJobSpec": "phases[].job, on a model", "ModelSpec": "models.NAME",
    "NormalSpec": "a distribution: dist: normal", "OfferingSpec": "prices.offerings[]",
    "OwnedSpec": "plans[].owned[]", "PlanSpec": "plans[]", "PricesSpec": "prices",
    "QuotaSpec": "quotas[]", "QuoteSpec": "prices.quotes[]",
    "RequestBucketSpec": "phases[].requests[]",
    "RequestSizeSpec": "phases[].requests, one size", "RiskSpec": "risk",
    "ServingSpec": "phases[] with kind: serving", "SloSpec": "phases[].slo",
    "TrainingSpec": "phases[] with kind: training",
    "TriangularSpec": "a distribution: dist: triangular", "UncertaintySpec": "uncertainty",
    "UniformSpec": "a distribution: dist: uniform", "UseEntrySpec": "plans[].use.PHASE",
}


def _unit(key: str) -> str:
    return next((unit for suffix, unit in _UNITS if key.endswith(suffix)), "")


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(node: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in node:
        target = defs[_ref_name(node["$ref"])]
        if "enum" in target:
            return "one of " + ", ".join(f"`{v}`" for v in target["enum"])
        return f"[{_ref_name(node['$ref'])}](#{_ref_name(node['$ref']).lower()})"
    options = node.get("anyOf") or node.get("oneOf")
    if options:
        kinds = [_type(option, defs) for option in options if option.get("type") != "null"]
        if any(option.get("type") == "string" and "pattern" in option for option in options) \
                and any(k in ("number", "integer") for k in kinds):
            kinds = [k for k in kinds if k != "string"]  # the numeric-string form of a number
        return " or ".join(dict.fromkeys(kinds))
    if "const" in node:
        return f"`{node['const']}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    kind = node.get("type", "any")
    if kind == "array":
        return f"list of {_type(node.get('items', {}), defs)}"
    if kind == "object":
        return f"map of name → {_type(node.get('additionalProperties', {}), defs)}"
    if kind == "string" and node.get("format") == "date":
        return "date YYYY-MM-DD"
    return str(kind)


def _bounds(node: dict[str, Any]) -> str:
    for option in [node, *(node.get("anyOf") or [])]:
        for inner in [option, *(option.get("anyOf") or [])]:
            low = inner.get("minimum", inner.get("exclusiveMinimum"))
            high = inner.get("maximum", inner.get("exclusiveMaximum"))
            if low is not None or high is not None:
                left = "(" if "exclusiveMinimum" in inner else "["
                right = ")" if "exclusiveMaximum" in inner else "]"
                return (f"{left}{'-∞' if low is None else f'{low:g}'}, "
                        f"{'∞' if high is None else f'{high:g}'}{right}")
    items = [node.get("minItems", node.get("minProperties")),
             node.get("maxItems", node.get("maxProperties"))]
    if items[0] is not None or items[1] is not None:
        return f"{items[0] or 0}..{items[1] if items[1] is not None else '∞'} entries"
    return ""


def _default(key: str, node: dict[str, Any], required: list[str]) -> str:
    if key in required:
        return "required"
    if "default" not in node:
        return "—"
    value = node["default"]
    if value is None:
        return "none"
    if isinstance(value, dict):
        if value.get("dist") == "fixed":
            return f"{value['value']:g}"
        return "{}" if not value else "see its keys"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"`{value:g}`"
    return "[]" if value == [] else f"`{value}`"


def key_reference() -> str:
    """The Markdown key reference: one table per object, top level first."""
    schema = json_schema()
    defs: dict[str, Any] = schema["$defs"]
    objects = {"ScenarioSpec": schema,
               **{name: d for name, d in sorted(defs.items()) if "properties" in d}}
    parts = []
    for name, node in objects.items():
        parts.append(f'<a id="{name.lower()}"></a>\n\n### `{_WHERE.get(name, name)}` '
                     f"({name})\n\n{node.get('description', '').strip()}\n\n"
                     "| key | type | unit | range | default | meaning |\n"
                     "|---|---|---|---|---|---|")
        required = node.get("required", [])
        for key, prop in node["properties"].items():
            row = (f"`{key}`", _type(prop, defs), _unit(key), _bounds(prop),
                   _default(key, prop, required), prop.get("description", ""))
            parts.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"
