"""Which swept input moves cost most: each key path's main effect on a plan's mean cost.

For a key path and a plan, the variants are grouped by the value they give the path; each group's
mean cost is the average of its variants' mean costs (over every value of the other inputs — in a
full Cartesian sweep, a main effect as in a one-factor-at-a-time design averaged over the rest).
The effect's swing is the highest group minus the lowest: the tornado chart's bar.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from costsim.sweep.results import SweepResult, SweepRow


@dataclass(frozen=True, slots=True, kw_only=True)
class InputEffect:
    """A swept key path's effect on one plan's mean cost."""

    plan: str
    key: str
    low_value: Any  # the value whose variants cost least on average
    low_usd: float
    high_value: Any
    high_usd: float
    values: int  # distinct values swept

    @property
    def swing_usd(self) -> float:
        """How far the key moves the plan's mean cost."""
        return self.high_usd - self.low_usd


# The pseudo key path of a sweep file's variant names: a named variant (a bigger model served
# quantized) is one input that changes several keys together.
NAME_KEY = "variant"


def _setting(row: SweepRow, key: str) -> tuple[bool, Any]:
    """Whether the row's variant sets ``key``, and to what."""
    if key == NAME_KEY:
        return bool(row.name), row.name
    return key in row.overrides, row.overrides.get(key)


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def input_effects(result: SweepResult) -> tuple[InputEffect, ...]:
    """Each plan's effects, plans in sweep order, each plan's keys by swing (largest first);
    a sweep file's variant names count as one more input (``variant``). A key with one value
    (or none feasible) has no effect to show and is left out."""
    plans: dict[str, list[SweepRow]] = {}
    for row in result.rows:
        if row.result.feasible and row.result.cost_usd is not None:
            plans.setdefault(row.result.name, []).append(row)
    effects = []
    for plan, rows in plans.items():
        found = []
        named = [NAME_KEY] if any(row.name for row in rows) else []
        for key in [*named, *result.swept_keys]:
            groups: dict[str, tuple[Any, list[float]]] = {}
            for row in rows:
                present, value = _setting(row, key)
                if present and row.result.cost_usd is not None:
                    groups.setdefault(_text(value), (value, []))[1].append(
                        row.result.cost_usd.mean)
            if len(groups) < 2:
                continue
            means = sorted(((sum(c) / len(c), v) for v, c in groups.values()),
                           key=lambda pair: pair[0])
            (low_usd, low_value), (high_usd, high_value) = means[0], means[-1]
            found.append(InputEffect(plan=plan, key=key, low_value=low_value, low_usd=low_usd,
                                     high_value=high_value, high_usd=high_usd,
                                     values=len(groups)))
        effects += sorted(found, key=lambda e: (-e.swing_usd, e.key))
    return tuple(effects)
