"""A sweep's charts: the cost distribution of every variant and plan, and a tornado chart per
plan of which swept input moves its mean cost most (:mod:`costsim.sweep.effects`)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from costsim.domain.currency import USD, Currency
from costsim.report.plot.figure import Entry, Marker, Place
from costsim.report.plot.style import (
    STAR,
    Chart,
    new_figure,
    plan_colors,
    ranked,
    usd,
    usd_axis,
)
from costsim.sweep.effects import NAME_KEY, input_effects
from costsim.sweep.results import SweepResult

# Inches per drawn row (a variant × plan, or an input of the tornado), and the most a figure
# grows to: past it, rows get thinner rather than the file unreadably tall.
ROW_IN = 0.28
MAX_HEIGHT_IN = 40.0
# Key paths in words (readable_key): the scenario's sections whose second part is a name, the
# unit suffixes of DESIGN §5 names, and the acronyms written in capitals.
SECTIONS = {"phases": "phase", "plans": "plan", "models": "model", "fleet": "fleet"}
UNIT_WORDS = (("_pct_per_year", " %/yr"), ("_pct_per_month", " %/month"), ("_pct", " %"),
              ("_usd_per_hour", " (USD/h)"), ("_usd", " (USD)"), ("_per_s", "/s"), ("_gib", " GiB"),
              ("_months", " (months)"), ("_days", " (days)"), ("_hours", " (h)"), ("_s", " (s)"))
ACRONYMS = {"gpu": "GPU", "gpus": "GPUs", "slo": "SLO", "ttft": "TTFT", "cpu": "CPU",
            "nvme": "NVMe", "ram": "RAM"}
# One setting of a variant label: "<key suffix>=" at the start or after ", ".
SETTING = re.compile(r"(^|, )([^=,\s][^=,]*?)=")
# matplotlib's "--" line style, whose dashes scale with the line's width (points on, off).
DASHED = (3.7, 1.6)


def sweep_charts(result: SweepResult, money: Currency = USD) -> list[Chart]:
    """The charts this sweep has data for (labels in the display currency ``money``)."""
    return [chart for chart in (cost_distribution(result, money), tornado(result, money))
            if chart is not None]


def readable_key(key: str) -> str:
    """A scenario key path in words: ``phases.serve.load.peak_requests_per_s`` → "peak
    requests/s (phase serve)", ``prices.gpu_price_change_pct.H100`` → "GPU price change %
    (H100)"; the sweep file's variant names → "variant (sweep file)"."""
    if key == NAME_KEY:
        return "variant (sweep file)"
    parts = key.split(".")
    field, where = parts[-1], ""
    if parts[0] in SECTIONS and len(parts) > 2:
        where = f"{SECTIONS[parts[0]]} {parts[1]}"
    elif parts[0] == "prices" and len(parts) == 3:  # prices.<field>.<GPU or cloud>
        field, where = parts[1], parts[2]
    words = field
    for suffix, unit in UNIT_WORDS:
        if words.endswith(suffix):
            words = words[: -len(suffix)] + unit
            break
    words = " ".join(ACRONYMS.get(w, w) for w in words.split("_"))
    return f"{words} ({where})" if where else words


def readable_label(label: str, keys: Sequence[str]) -> str:
    """A variant's label (``llama-2-13b, peak_requests_per_s=40, H100=-25``: each setting by
    its shortest unique key suffix) with every key suffix in words, found among ``keys``."""
    def words(match: re.Match[str]) -> str:
        tail = match.group(2)
        full = [k for k in keys if k == tail or k.endswith("." + tail)]
        return f"{match.group(1)}{readable_key(full[0] if len(full) == 1 else tail)} = "
    return SETTING.sub(words, label)


def _recommended_by_variant(result: SweepResult) -> dict[int, str]:
    """Each variant's recommended plan: ``run``'s rule (the feasible plan with the lowest
    mean cost within the scenario's risk limits)."""
    best: dict[int, tuple[float, str]] = {}
    for row in result.rows:
        cost = row.result.cost_usd
        if not row.result.feasible or cost is None or row.limit_breaches:
            continue
        if row.variant not in best or (cost.mean, row.result.name) < best[row.variant]:
            best[row.variant] = (cost.mean, row.result.name)
    return {variant: name for variant, (_, name) in best.items()}


def _plan_order(result: SweepResult) -> list[str]:
    """The plans cheapest first by their mean cost averaged over the variants (infeasible
    everywhere: last)."""
    costs: dict[str, list[float]] = {}
    for row in result.rows:
        costs.setdefault(row.result.name, [])
        if row.result.feasible and row.result.cost_usd is not None:
            costs[row.result.name].append(row.result.cost_usd.mean)
    return ranked(costs, lambda plan: _mean(costs[plan]) if costs[plan] else None)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def cost_distribution(result: SweepResult, money: Currency = USD) -> Chart | None:
    """P10–P90 of each variant's cost per plan, P50 as a tick, the mean as a dot; plans in
    each variant cheapest first (over all variants), each variant's recommended plan starred."""
    rows = [r for r in result.rows if r.result.feasible and r.result.cost_usd is not None]
    if not rows:
        return None
    plans = _plan_order(result)
    colors = plan_colors(list(dict.fromkeys(r.result.name for r in result.rows)))
    variants = list(dict.fromkeys((r.variant, r.label) for r in result.rows))
    slot = {v: i for i, (v, _) in enumerate(variants)}
    chosen = _recommended_by_variant(result)
    title = "Cost of each plan in each variant"
    figure = new_figure(11.0, min(MAX_HEIGHT_IN, 2.0 + ROW_IN * len(rows)))
    (panel,) = figure.add_panels()
    step = 1.0 / (len(plans) + 1)
    for plan in plans:
        mine = [r for r in rows if r.result.name == plan]
        if not mine:
            continue
        offset = (plans.index(plan) + 1) * step - 0.5
        y = [slot[r.variant] + offset for r in mine]
        costs = [r.result.cost_usd for r in mine if r.result.cost_usd is not None]
        panel.segments(y, [c.p10 for c in costs], [c.p90 for c in costs], colors[plan],
                       width_pt=2.5, label=plan)
        panel.points([c.p50 for c in costs], y, Marker.TICK, size_pt=8.0, face="#000000")
        panel.points([c.mean for c in costs], y, Marker.DISC, size_pt=4.0, face=colors[plan],
                     edge="#000000", edge_width_pt=0.5)
        starred = [(c.mean, yy) for r, c, yy in zip(mine, costs, y, strict=True)
                   if chosen.get(r.variant) == plan]
        if starred:
            panel.points([m for m, _ in starred], [yy for _, yy in starred], Marker.STAR,
                         size_pt=13.0, face=colors[plan], edge="#000000", edge_width_pt=0.8,
                         z=4.0)
    keys = result.swept_keys
    panel.y.set_ticks(range(len(variants)), [readable_label(label, keys)
                                             for _, label in variants])
    panel.y.tick_pt = 7.0
    panel.y.limits(-0.5, len(variants) - 0.5)
    panel.y.inverted = True
    usd_axis(panel.x, money)
    panel.x.label = (f"Economic cost over the horizon ({money.code}): line P10–P90, tick P50, "
                     "dot mean")
    star = Entry(f"{STAR} recommended in the variant\n(cheapest within the risk limits)",
                 kind="marker", marker=Marker.STAR, marker_pt=11.0, face="#BBBBBB",
                 edge="#000000", edge_width_pt=1.0)
    panel.add_legend([*panel.entries(), star], place=Place.RIGHT,
                     title="plans, cheapest first", size_pt=8.0)
    panel.title = title
    panel.title_bold = False
    return Chart("sweep_cost_distribution", title, figure)


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def tornado(result: SweepResult, money: Currency = USD) -> Chart | None:
    """Per plan (cheapest first over the variants), each swept input's swing of the mean cost
    (lowest to highest group mean), largest first, around the plan's mean over every variant;
    the panel of the plan recommended in the most variants starred."""
    effects = input_effects(result)
    if not effects:
        return None
    order = _plan_order(result)
    plans = sorted(dict.fromkeys(e.plan for e in effects), key=order.index)
    colors = plan_colors(list(dict.fromkeys(r.result.name for r in result.rows)))
    chosen = list(_recommended_by_variant(result).values())
    wins = {plan: chosen.count(plan) for plan in plans}
    top = max(plans, key=lambda plan: (wins[plan], -order.index(plan)))
    heights = [1.0 + ROW_IN * 1.6 * sum(e.plan == p for e in effects) for p in plans]
    figure = new_figure(10.0, min(MAX_HEIGHT_IN, 0.6 + sum(heights)),
                        "Which swept input moves cost most: the swing of each plan's mean cost\n"
                        "(dashed: the plan's mean over the variants; plans cheapest first)")
    panels = figure.add_panels(len(plans), heights=heights)
    for panel, plan in zip(panels, plans, strict=True):
        mine = [e for e in effects if e.plan == plan]
        positions = range(len(mine))
        panel.hbars(positions, [e.swing_usd for e in mine], colors[plan],
                    base=[e.low_usd for e in mine], thickness=0.6)
        means = [r.result.cost_usd.mean for r in result.rows
                 if r.result.name == plan and r.result.cost_usd is not None]
        panel.vline(_mean(means), "#000000", width_pt=0.8,
                    dash=tuple(d * 0.8 for d in DASHED))
        for y, effect in zip(positions, mine, strict=True):
            panel.label(effect.low_usd, y, _value(effect.low_value), dx_pt=-4, ha="right",
                        size_pt=7.0)
            panel.label(effect.high_usd, y,
                        f"{_value(effect.high_value)} (+{usd(effect.swing_usd, money)})",
                        dx_pt=4, ha="left", size_pt=7.0)
        panel.y.set_ticks(positions, [readable_key(e.key) for e in mine])
        panel.y.tick_pt = 8.0
        panel.y.inverted = True
        # room for the value labels at both ends (bars start at their base, so an automatic
        # margin would not move the left edge)
        low, high = min(e.low_usd for e in mine), max(e.high_usd for e in mine)
        pad = 0.3 * (high - low) if high > low else 0.05 * max(abs(high), 1.0)
        panel.x.limits(low - pad, high + pad)
        usd_axis(panel.x, money)
        won = (f"recommended in {wins[plan]} of {result.variants} variants"
               if wins[plan] else "recommended in no variant")
        starred = plan == top and wins[plan] > 0
        panel.title = f"{STAR} {plan} ({won})" if starred else f"{plan} ({won})"
        panel.title_pt = 9.0
        panel.title_bold = starred
    return Chart("sweep_tornado", "Which swept input moves cost most", figure)
