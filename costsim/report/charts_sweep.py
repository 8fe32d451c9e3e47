"""A sweep's charts: the cost distribution of every variant and plan, and a tornado chart per
plan of which swept input moves its mean cost most (:mod:`costsim.sweep.effects`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from costsim.report.chart_style import Chart, new_figure, plan_colors, subplots, usd, usd_axis
from costsim.sweep.effects import input_effects
from costsim.sweep.results import SweepResult

# Inches per drawn row (a variant × plan, or an input of the tornado), and the most a figure
# grows to: past it, rows get thinner rather than the file unreadably tall.
ROW_IN = 0.28
MAX_HEIGHT_IN = 40.0


def sweep_charts(result: SweepResult) -> list[Chart]:
    """The charts this sweep has data for."""
    return [chart for chart in (cost_distribution(result), tornado(result)) if chart is not None]


def cost_distribution(result: SweepResult) -> Chart | None:
    """P10–P90 of each variant's cost per plan, P50 as a tick, the mean as a dot."""
    rows = [r for r in result.rows if r.result.feasible and r.result.cost_usd is not None]
    if not rows:
        return None
    plans = list(dict.fromkeys(r.result.name for r in result.rows))
    colors = plan_colors(plans)
    variants = list(dict.fromkeys((r.variant, r.label) for r in result.rows))
    slot = {v: i for i, (v, _) in enumerate(variants)}
    figure = new_figure(10.0, min(MAX_HEIGHT_IN, 1.5 + ROW_IN * len(rows)))
    (axes,) = subplots(figure)
    step = 1.0 / (len(plans) + 1)
    for plan in plans:
        mine = [r for r in rows if r.result.name == plan]
        if not mine:
            continue
        offset = (plans.index(plan) + 1) * step - 0.5
        y = np.array([slot[r.variant] + offset for r in mine])
        costs = [r.result.cost_usd for r in mine if r.result.cost_usd is not None]
        axes.hlines(y, [c.p10 for c in costs], [c.p90 for c in costs], color=colors[plan],
                    linewidth=2.5, label=plan)
        axes.plot([c.p50 for c in costs], y, "|", color="black", markersize=8)
        axes.plot([c.mean for c in costs], y, "o", color=colors[plan], markersize=4,
                  markeredgecolor="black", markeredgewidth=0.5)
    axes.set_yticks(range(len(variants)), [label for _, label in variants], fontsize=7)
    axes.invert_yaxis()
    usd_axis(axes, "x")
    axes.set_xlabel("Economic cost over the horizon (USD): line P10–P90, tick P50, dot mean")
    axes.legend(loc="best", fontsize=7)
    axes.set_title("Cost of each plan in each variant")
    return Chart("sweep_cost_distribution", "Cost of each plan in each variant", figure)


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def tornado(result: SweepResult) -> Chart | None:
    """Per plan, each swept input's swing of the mean cost (lowest to highest group mean),
    largest first, around the plan's mean over every variant."""
    effects = input_effects(result)
    if not effects:
        return None
    plans = list(dict.fromkeys(e.plan for e in effects))
    colors = plan_colors(list(dict.fromkeys(r.result.name for r in result.rows)))
    heights = [1.0 + ROW_IN * 1.6 * sum(e.plan == p for e in effects) for p in plans]
    figure = new_figure(10.0, min(MAX_HEIGHT_IN, 0.6 + sum(heights)))
    panels = subplots(figure, rows=len(plans))
    for axes, plan in zip(panels, plans, strict=True):
        mine = [e for e in effects if e.plan == plan]
        positions = np.arange(len(mine))
        axes.barh(positions, [e.swing_usd for e in mine], left=[e.low_usd for e in mine],
                  color=colors[plan], height=0.6)
        means = [r.result.cost_usd.mean for r in result.rows
                 if r.result.name == plan and r.result.cost_usd is not None]
        axes.axvline(float(np.mean(means)), color="black", linewidth=0.8, linestyle="--")
        for y, effect in zip(positions, mine, strict=True):
            axes.annotate(_value(effect.low_value), (effect.low_usd, y), xytext=(-4, 0),
                          textcoords="offset points", ha="right", va="center", fontsize=7)
            axes.annotate(f"{_value(effect.high_value)} (+{usd(effect.swing_usd)})",
                          (effect.high_usd, y), xytext=(4, 0), textcoords="offset points",
                          ha="left", va="center", fontsize=7)
        axes.set_yticks(positions, [e.key for e in mine], fontsize=8)
        axes.invert_yaxis()
        # room for the value labels at both ends (bars are sticky at their base, so margins
        # alone would not move the left edge)
        low, high = min(e.low_usd for e in mine), max(e.high_usd for e in mine)
        pad = 0.3 * (high - low) if high > low else 0.05 * max(abs(high), 1.0)
        axes.set_xlim(low - pad, high + pad)
        usd_axis(axes, "x")
        axes.set_title(f"{plan}: mean cost by swept input (dashed: mean over the variants)",
                       fontsize=9)
    figure.suptitle("Which swept input moves cost most", fontweight="bold")
    return Chart("sweep_tornado", "Which swept input moves cost most", figure)
