"""Two saved runs compared, Infracost-style (docs/report.md, ``diff --json``).

Each plan present in both ``summary.json`` documents gets the same rows as ``compare`` (OLD as
the baseline, NEW as the plan); plans only in one run are listed as ``added``/``removed``; and
the inputs the runs rested on (the resolved scenario, the prices and defaults used) are walked
side by side, so a reviewer sees *why* a figure moved. The scenario's changes are named by the
file's own key paths (``inputs.scenario_file``). Paths are dotted; list items are named by their
``name`` (or ``key``) where every item has a distinct one, else by position (``[2]``, with the
fields that identify the item: ``cloud aws``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from costsim.domain.currency import Currency, currency_json, currency_of
from costsim.errors import InputError, ScenarioError
from costsim.report.compare import plan_delta
from costsim.report.summary import JsonDict

PROVENANCE_KEYS = ("scenario", "scenario_sha256", "costsim_version", "price_book_date", "seed",
                   "replications", "generated_at")
ID_FIELDS = ("name", "key")
SCENARIO_FILE = "scenario_file"
# The inputs that are not the scenario: what each plan and the engines relied on.
RUN_INPUT_KEYS = ("prices_used", "defaults_used", "measured_inputs")
# Fields that say which item of an unnamed list a change is in (a discount's cloud, a quote's
# GPU and term): shown beside its positional path.
ITEM_FIELDS = ("cloud", "region", "instance_type", "gpu", "server", "term", "payment", "phase")


def diff_json(old: Mapping[str, Any], new: Mapping[str, Any], *,
              sources: tuple[str, str] = ("OLD", "NEW")) -> JsonDict:
    """NEW against OLD (two ``summary.json`` documents).

    Raises:
        InputError: a document is not a summary (no ``plans`` list, a plan without a name or
            with a malformed cost or ledger), naming ``sources`` and the key path.
    """
    old_plans = _plans(old, sources[0])
    new_plans = _plans(new, sources[1])
    inputs_old = _inputs(old)
    inputs_new = _inputs(new)
    order = _phase_names(inputs_new) or _phase_names(inputs_old)
    return {
        # the display currency of the later run (amounts stay USD); a change of it is one
        # of the inputs changed
        **currency_json(document_currency(new, sources[1])),
        "old": {key: old.get(key) for key in PROVENANCE_KEYS},
        "new": {key: new.get(key) for key in PROVENANCE_KEYS},
        "added": [name for name in new_plans if name not in old_plans],
        "removed": [name for name in old_plans if name not in new_plans],
        "plans": [plan_delta(old_plans[name], plan, order)
                  for name, plan in new_plans.items() if name in old_plans],
        "inputs_changed": scenario_inputs_changed(inputs_old, inputs_new),
    }


def document_currency(document: Mapping[str, Any], source: str) -> Currency:
    """The display currency a summary names at its top (USD when it names none).

    Raises:
        InputError: a currency or rate that is not valid, naming ``source``.
    """
    try:
        return currency_of(document)
    except ScenarioError as exc:
        raise InputError(source, exc.key_path, exc.problem) from None


def scenario_inputs_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[JsonDict]:
    """The inputs that changed, the scenario's named by its own key paths.

    Where both runs carry the file as written (``inputs.scenario_file``), the scenario's
    changes are walked there, so a path is one its author wrote (``prices.overrides[0].
    discount_pct``, ``plans.reserved.use.train.count``), not the resolved document's
    (``prices.overrides.cloud_discount_pct[0][1]``); the prices, defaults and measurements used
    follow under their own keys. Summaries written before that key are walked whole.
    """
    file_old, file_new = old.get(SCENARIO_FILE), new.get(SCENARIO_FILE)
    if not (isinstance(file_old, Mapping) and isinstance(file_new, Mapping)):
        return inputs_changed({k: v for k, v in old.items() if k != SCENARIO_FILE},
                              {k: v for k, v in new.items() if k != SCENARIO_FILE})
    used_old = {k: v for k, v in old.items() if k in RUN_INPUT_KEYS}
    used_new = {k: v for k, v in new.items() if k in RUN_INPUT_KEYS}
    return [*inputs_changed(file_old, file_new), *inputs_changed(used_old, used_new)]


def inputs_changed(old: Any, new: Any, path: str = "") -> list[JsonDict]:
    """Every leaf that differs between two JSON documents, as ``{path, old, new}``; a key or
    named item only on one side is reported whole, with null on the other."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        changes: list[JsonDict] = []
        for key in [*old, *(k for k in new if k not in old)]:
            changes += inputs_changed(old.get(key), new.get(key), _join(path, str(key)))
        return changes
    if isinstance(old, list) and isinstance(new, list):
        return _list_changes(old, new, path)
    if old == new and isinstance(old, bool) == isinstance(new, bool):  # 5 == 5.0, True != 1
        return []
    if isinstance(old, float) and isinstance(new, float) and math.isnan(old) and math.isnan(new):
        return []
    return [{"path": path, "old": old, "new": new}]


def _list_changes(old: list[Any], new: list[Any], path: str) -> list[JsonDict]:
    field = _id_field(old, new)
    if field is None:
        changes: list[JsonDict] = []
        for index in range(max(len(old), len(new))):
            old_item = old[index] if index < len(old) else None
            new_item = new[index] if index < len(new) else None
            item = _item_words(new_item) or _item_words(old_item)
            changes += [{**change, "item": item} if item and "item" not in change else change
                        for change in inputs_changed(old_item, new_item, f"{path}[{index}]")]
        return changes
    old_items = {item[field]: item for item in old}
    new_items = {item[field]: item for item in new}
    return inputs_changed(old_items, new_items, path)


def _item_words(item: Any) -> str:
    """``cloud aws, gpu H100``: what identifies an unnamed list item ("" when nothing does)."""
    if not isinstance(item, Mapping):
        return ""
    return ", ".join(f"{key} {item[key]}" for key in ITEM_FIELDS
                     if isinstance(item.get(key), str | int) and not isinstance(item[key], bool))


def _id_field(old: list[Any], new: list[Any]) -> str | None:
    """``name`` or ``key`` when every item on both sides has a distinct string one."""
    items = [*old, *new]
    if not items or not all(isinstance(item, Mapping) for item in items):
        return None
    for field in ID_FIELDS:
        if all(isinstance(item.get(field), str) for item in items) and all(
                len({item[field] for item in side}) == len(side) for side in (old, new)):
            return field
    return None


def _inputs(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    inputs = doc.get("inputs")
    return inputs if isinstance(inputs, Mapping) else {}


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _phase_names(inputs: Mapping[str, Any]) -> list[str]:
    phases = inputs.get("phases")
    if not isinstance(phases, list):
        return []
    return [p["name"] for p in phases if isinstance(p, Mapping) and isinstance(p.get("name"), str)]


def _plans(doc: Mapping[str, Any], source: str) -> dict[str, Mapping[str, Any]]:
    """The plans of a summary by name, after checking what the deltas read."""
    if not isinstance(doc, Mapping):
        raise InputError(source, "", "must be a summary.json document (a JSON object), "
                         f"got {type(doc).__name__}")
    plans = doc.get("plans")
    if not isinstance(plans, list):
        raise InputError(source, "plans", "must be a list of plans (is this a summary.json "
                         f"written by costsim run?), got {type(plans).__name__}")
    by_name: dict[str, Mapping[str, Any]] = {}
    for index, plan in enumerate(plans):
        where = f"plans[{index}]"
        if not isinstance(plan, Mapping) or not isinstance(plan.get("name"), str):
            raise InputError(source, f"{where}.name", "every plan must have a name (a string)")
        if plan["name"] in by_name:
            raise InputError(source, f"{where}.name", f"plan {plan['name']!r} appears twice")
        _check_cost(plan.get("cost_usd"), source, f"{where}.cost_usd")
        _check_ledger(plan.get("ledger", []), source, f"{where}.ledger")
        by_name[plan["name"]] = plan
    return by_name


def _check_cost(cost: Any, source: str, where: str) -> None:
    if cost is None:
        return
    if not isinstance(cost, Mapping) or not _is_amount(cost.get("mean")):
        raise InputError(source, f"{where}.mean", f"must be a finite number, got {cost!r}")


def _check_ledger(ledger: Any, source: str, where: str) -> None:
    if not isinstance(ledger, Sequence) or isinstance(ledger, str):
        raise InputError(source, where, f"must be a list of ledger lines, got {ledger!r}")
    for index, line in enumerate(ledger):
        if not isinstance(line, Mapping):
            raise InputError(source, f"{where}[{index}]", f"must be an object, got {line!r}")
        for key in ("phase", "category"):
            if not isinstance(line.get(key), str):
                raise InputError(source, f"{where}[{index}].{key}",
                                 f"must be a string, got {line.get(key)!r}")
        if not _is_amount(line.get("amount_usd")):
            raise InputError(source, f"{where}[{index}].amount_usd",
                             f"must be a finite number, got {line.get('amount_usd')!r}")


def _is_amount(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and abs(value) < 1e15)
