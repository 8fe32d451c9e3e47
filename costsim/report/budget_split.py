"""The budget split for ``costsim optimize --budget-split``: its JSON (the ``budget_split`` key)
and its charts, and the run report's chart of each plan's spend by part group."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from costsim.domain.currency import USD, Currency
from costsim.errors import CostsimError
from costsim.optimize.budget_split_parts import (
    GPU_SHARE_RULE,
    MEMORY_STORAGE_SHARE_RULE,
)
from costsim.optimize.budget_split_result import (
    BudgetSplitResult,
    GroupShare,
    SensitivityPoint,
    SpendGroup,
)
from costsim.optimize.spend_split import spend_split
from costsim.report.plot.figure import Marker, Panel, Place, Segments
from costsim.report.plot.style import (
    Chart,
    names_width_in,
    new_figure,
    percent_axis,
    plan_label,
    ranked,
    usd,
)
from costsim.sim.run_result import RunResult

GROUP_LABELS = {
    SpendGroup.GPU: "GPUs", SpendGroup.MEMORY_STORAGE: "memory + storage",
    SpendGroup.CPU: "CPU", SpendGroup.NETWORK_OTHER: "network + other",
    SpendGroup.OPERATIONS: "operations",
}
GROUP_COLORS = {
    SpendGroup.GPU: "#0072B2", SpendGroup.MEMORY_STORAGE: "#E69F00", SpendGroup.CPU: "#009E73",
    SpendGroup.NETWORK_OTHER: "#CC79A7", SpendGroup.OPERATIONS: "#999999",
}
# The seed rule's range per group (docs/optimizer.md "Budget split"); CPU and the rest share
# the remainder.
RULE_RANGES = {SpendGroup.GPU: GPU_SHARE_RULE, SpendGroup.MEMORY_STORAGE:
               MEMORY_STORAGE_SHARE_RULE}
# The seed rule's bands: thick translucent black strokes across the bars (6 pt, a quarter
# opaque: grey over the background, darker over a bar).
RULE_WIDTH_PT, RULE_ALPHA = 6.0, 0.25
# matplotlib's "--" (3.7 and 1.6 line widths) at its default 1.5 pt line
CAPEX_DASH = (3.7 * 1.5, 1.6 * 1.5)
CHOSEN_RING_PT = math.sqrt(90.0)  # the chosen point's ring, 90 pt² as a scatter marker
PART_LABELS = {"servers": "servers", "ram_gib": "system RAM per server (GiB)",
               "nvme_tb": "NVMe per server (TB)", "cpu_cores": "CPU cores per server",
               "nic_gbps": "compute NICs per server (Gb/s)"}


def _shares_json(shares: tuple[GroupShare, ...]) -> list[dict[str, Any]]:
    return [{"group": s.group.value, "usd": s.usd, "share": s.share} for s in shares]


def budget_split_json(result: BudgetSplitResult) -> dict[str, Any]:
    """The ``budget_split`` key of ``optimize --json`` (docs/optimizer.md "Budget split")."""
    best = result.best
    parts = best.parts
    return {
        "scenario": result.scenario,
        "objective": result.objective.value,
        "budget_usd": result.budget_usd,
        "best": {
            "server": best.server, "gpu": best.gpu, "gpus_per_server": best.gpus_per_server,
            "servers": best.servers, "gpus": best.gpus,
            "parts": {"ram_gib": parts.ram_gib, "nvme_tb": parts.nvme_tb,
                      "cpu_cores": parts.cpu_cores, "nic_gbps": parts.nic_gbps},
            "capex_usd": best.capex_usd, "tokens_per_s": best.tokens_per_s,
            "wall_time_s": best.wall_time_s,
            "phases": [{"phase": p.phase, "tokens": p.tokens,
                        "steady_tokens_per_s": p.steady_tokens_per_s,
                        "delivered_tokens_per_s": p.delivered_tokens_per_s,
                        "wall_time_s": p.wall_time_s, "deadline_s": p.deadline_s,
                        "cpu_factor": p.cpu_factor, "read_factor": p.read_factor,
                        "goodput": p.goodput, "ram_need_gib": p.ram_need_gib,
                        "ram_to_vram_needed": p.ram_to_vram_needed,
                        "ram_to_vram_with_offload": p.ram_to_vram_with_offload,
                        "nvme_need_tb": p.nvme_need_tb, "layout": p.layout}
                       for p in best.phases],
        },
        "bom_per_server": [{"component": line.component, "kind": line.kind,
                            "quantity": line.quantity, "unit": line.unit,
                            "unit_price_usd": line.unit_price_usd,
                            "amount_usd": line.amount_usd, "source": line.source,
                            "estimate": line.estimate} for line in result.bom],
        "shares": _shares_json(result.shares),
        "rules": [{"rule": r.rule, "low": r.low, "high": r.high, "measured": r.measured,
                   "holds": r.holds} for r in result.rules],
        "sensitivity": [{"part": p.part, "amount": p.amount, "chosen": p.chosen,
                         "capex_usd": p.capex_usd, "tokens_per_s": p.tokens_per_s,
                         "within_budget": p.within_budget,
                         "meets_deadlines": p.meets_deadlines} for p in result.sensitivity],
        "configurations": result.configurations,
        "skipped": list(result.skipped),
    }


def _shown(shares: tuple[GroupShare, ...]) -> list[GroupShare]:
    """The groups a shares panel draws: operations only when it costs something (owned
    servers)."""
    return [s for s in shares if s.group is not SpendGroup.OPERATIONS or s.usd]


def _shares_panel(panel: Panel, shares: tuple[GroupShare, ...], title: str,
                  money: Currency = USD) -> None:
    groups = _shown(shares)
    positions = range(len(groups))
    panel.hbars(positions, [s.share for s in groups], [GROUP_COLORS[s.group] for s in groups])
    ruled = [(y, RULE_RANGES[s.group]) for y, s in zip(positions, groups, strict=True)
             if s.group in RULE_RANGES]
    if ruled:
        panel.add(Segments(ys=tuple(float(y) for y, _ in ruled),
                           x0s=tuple(rule[0] for _, rule in ruled),
                           x1s=tuple(rule[1] for _, rule in ruled), color="#000000",
                           width_pt=RULE_WIDTH_PT, alpha=RULE_ALPHA))
    for y, share in zip(positions, groups, strict=True):
        # on a white box: a share just short of its rule's band has its label over the band
        panel.label(max(share.share, 0.0), y, f"{share.share:.1%} ({usd(share.usd, money)})",
                    dx_pt=6, box="#ffffff")
    panel.y.set_ticks(positions, [GROUP_LABELS[s.group] for s in groups])
    panel.y.inverted = True
    panel.x.limits(0, 1.15)
    percent_axis(panel.x)
    panel.title = title
    panel.title_bold = False


def budget_split_charts(result: BudgetSplitResult) -> list[Chart]:
    """The optimum's spend by part group against the seed rule, and the sensitivity of
    throughput and capex to each part's amount around the optimum (amounts other than the
    server count on a log-2 axis)."""
    best = result.best
    figure = new_figure(9.0, 3.2)
    (panel,) = figure.add_panels()
    _shares_panel(panel, result.shares, f"Where the money goes: {best.servers} × {best.server}")
    panel.x.label = ("share of the cluster's purchase price (grey bands: the seed rule, "
                     "GPUs 60–70 %, memory + storage 20–30 %)")
    shares_chart = Chart("budget_split_shares", "Budget split against the seed rule", figure)

    by_part: dict[str, list[SensitivityPoint]] = defaultdict(list)
    for point in result.sensitivity:
        by_part[point.part].append(point)
    figure = new_figure(10.0, 2.6 * len(by_part))
    panels = figure.add_panels(len(by_part))
    for panel, (part, points) in zip(panels, by_part.items(), strict=True):
        _sensitivity_panel(panel, part, points)
    panels[0].title = ("Throughput (solid) and capex (dashed) with one part changed, the "
                       "rest as chosen")
    panels[0].title_bold = False
    sensitivity_chart = Chart("budget_split_sensitivity", "Budget split sensitivity", figure)
    return [shares_chart, sensitivity_chart]


def capex_tick(amount_usd: float) -> str:
    """A capex tick label: :func:`usd`, with a fourth significant digit where three would
    round the tick ($2.425M, not $2.42M beside $2.4M and $2.45M: capex moves by a few
    tenths of a percent along a part's ladder, so its ticks can be 25k apart at $2.4M)."""
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(amount_usd) >= limit:
            scaled = amount_usd / limit
            if not math.isclose(float(f"{scaled:.3g}"), scaled, rel_tol=1e-9):
                return f"{'-' if scaled < 0 else ''}${abs(scaled):.4g}{suffix}"
            break
    return usd(amount_usd)


def _sensitivity_panel(panel: Panel, part: str, points: list[SensitivityPoint]) -> None:
    amounts = [p.amount for p in points]
    panel.line(amounts, [p.tokens_per_s / 1e3 for p in points], "#0072B2", marker=Marker.DISC,
               label="delivered tokens/s")
    over = [p for p in points if not p.within_budget]
    if over:
        panel.points([p.amount for p in over], [p.tokens_per_s / 1e3 for p in over],
                     Marker.CROSS, face="#D55E00", label="over the budget")
    chosen = [p for p in points if p.chosen]
    if chosen:
        panel.points([p.amount for p in chosen], [p.tokens_per_s / 1e3 for p in chosen],
                     Marker.RING, size_pt=CHOSEN_RING_PT, face=None, edge="#000000",
                     edge_width_pt=1.5, label="chosen", z=4.0)
    panel.y.limits(0)  # from 0: a 0.05 % gain must not look like a cliff
    panel.y.label = "thousand tokens/s"
    panel.x.label = PART_LABELS.get(part, part)
    if part == "servers":
        panel.x.integer = True
    else:
        panel.x.log, panel.x.base, panel.x.subs = True, 2.0, (1.0,)
    capex = panel.twin("capex", label_color="#666666")
    capex.format = capex_tick
    panel.line(amounts, [p.capex_usd for p in points], "#999999", dash=CAPEX_DASH,
               right=True)
    panel.add_legend(place=Place.LOWER_RIGHT, size_pt=7.0)


def spend_split_chart(run: RunResult) -> Chart | None:
    """Each simulated plan's economic cost by part group (rented instance-hours split by the
    equivalent server's BOM; optimize/spend_split.py), with the seed rule's bands; plans
    cheapest first, the recommended plan starred (its title bold)."""
    splits = []
    for plan in ranked(run.plans, lambda p: None if p.cost_usd is None else p.cost_usd.mean):
        if plan.ledger is None or plan.ledger.cost_usd <= 0:
            continue
        try:
            splits.append(spend_split(plan))
        except CostsimError:
            continue
    if not splits:
        return None
    chosen = run.recommendation.plan
    money = run.scenario.currency
    title = "Spend by part group of each plan (cheapest first)"
    figure = new_figure(names_width_in(s.plan + " (recommended): $999k" for s in splits),
                        1.8 + 0.5 * len(splits) * len(SpendGroup), title=title)
    # panel heights in proportion to their bars: every bar equally thick
    panels = figure.add_panels(len(splits), share_x=True,
                               heights=[len(_shown(s.shares)) for s in splits])
    for panel, split in zip(panels, splits, strict=True):
        _shares_panel(panel, split.shares, f"{plan_label(split.plan, chosen)}: "
                      f"{usd(split.total_usd, money)}", money=money)
        panel.title_left = True
        panel.title_bold = split.plan == chosen
    panels[-1].x.label = "share of the plan's economic cost (grey bands: the seed rule)"
    return Chart("spend_split", title, figure)
