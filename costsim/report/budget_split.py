"""The budget split for ``costsim optimize --budget-split``: its JSON (the ``budget_split`` key)
and its charts, and the run report's chart of each plan's spend by part group."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

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
from costsim.report.chart_style import (
    Chart,
    names_width_in,
    new_figure,
    percent_axis,
    plan_label,
    ranked,
    subplots,
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


def _shares_panel(axes: Any, shares: tuple[GroupShare, ...], title: str,
                  loc: str = "center", money: Currency = USD) -> None:
    groups = [s for s in shares if s.group is not SpendGroup.OPERATIONS or s.usd]
    positions = np.arange(len(groups))
    axes.barh(positions, [s.share for s in groups],
              color=[GROUP_COLORS[s.group] for s in groups])
    for y, share in zip(positions, groups, strict=True):
        rule = RULE_RANGES.get(share.group)
        if rule is not None:
            axes.plot(rule, [y, y], color="black", linewidth=6, alpha=0.25,
                      solid_capstyle="butt")
        axes.annotate(f"{share.share:.1%} ({usd(share.usd, money)})", (max(share.share, 0.0), y),
                      xytext=(6, -3), textcoords="offset points", fontsize=8)
    axes.set_yticks(positions, [GROUP_LABELS[s.group] for s in groups])
    axes.invert_yaxis()
    axes.set_xlim(0, 1.15)
    percent_axis(axes, "x")
    axes.set_title(title, loc=loc)


def budget_split_charts(result: BudgetSplitResult) -> list[Chart]:
    """The optimum's spend by part group against the seed rule, and the sensitivity of
    throughput and capex to each part's amount around the optimum."""
    best = result.best
    figure = new_figure(9.0, 3.2)
    (axes,) = subplots(figure)
    _shares_panel(axes, result.shares, f"Where the money goes: {best.servers} × {best.server}")
    axes.set_xlabel("share of the cluster's purchase price (grey bands: the seed rule, "
                    "GPUs 60–70 %, memory + storage 20–30 %)")
    shares_chart = Chart("budget_split_shares", "Budget split against the seed rule", figure)

    by_part: dict[str, list[SensitivityPoint]] = defaultdict(list)
    for point in result.sensitivity:
        by_part[point.part].append(point)
    figure = new_figure(10.0, 2.6 * len(by_part))
    panels = subplots(figure, rows=len(by_part))
    for axes, (part, points) in zip(panels, by_part.items(), strict=True):
        amounts = [p.amount for p in points]
        rates = [p.tokens_per_s / 1e3 for p in points]
        axes.plot(amounts, rates, marker="o", color="#0072B2", label="delivered tokens/s")
        over = [p for p in points if not p.within_budget]
        if over:
            axes.scatter([p.amount for p in over], [p.tokens_per_s / 1e3 for p in over],
                         marker="x", color="#D55E00", zorder=3, label="over the budget")
        for point in points:
            if point.chosen:
                axes.scatter([point.amount], [point.tokens_per_s / 1e3], s=90,
                             facecolors="none", edgecolors="black", zorder=4, label="chosen")
        axes.set_ylim(bottom=0)  # from 0: a 0.05 % gain must not look like a cliff
        axes.set_ylabel("thousand tokens/s")
        axes.set_xlabel(PART_LABELS.get(part, part))
        if part != "servers":
            axes.set_xscale("log", base=2)
        capex = axes.twinx()
        capex.plot(amounts, [p.capex_usd for p in points], linestyle="--", color="#999999",
                   label="capex")
        capex.yaxis.set_major_formatter(lambda value, _pos: usd(value))
        capex.set_ylabel("capex", color="#666666")
        capex.grid(False)
        axes.legend(loc="lower right", fontsize=7)
    panels[0].set_title("Throughput (solid) and capex (dashed) with one part changed, the "
                        "rest as chosen")
    sensitivity_chart = Chart("budget_split_sensitivity", "Budget split sensitivity", figure)
    return [shares_chart, sensitivity_chart]


def spend_split_chart(run: RunResult) -> Chart | None:
    """Each simulated plan's economic cost by part group (rented instance-hours split by the
    equivalent server's BOM; optimize/spend_split.py), with the seed rule's bands; plans
    cheapest first, the recommended plan starred."""
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
    figure = new_figure(names_width_in(s.plan + " (recommended): $999k" for s in splits),
                        1.8 + 0.5 * len(splits) * len(SpendGroup))
    panels = subplots(figure, rows=len(splits), sharex=True)
    for axes, split in zip(panels, splits, strict=True):
        _shares_panel(axes, split.shares, f"{plan_label(split.plan, chosen)}: "
                      f"{usd(split.total_usd, run.scenario.currency)}", loc="left",
                      money=run.scenario.currency)
        if split.plan == chosen:
            axes.set_title(axes.get_title(loc="left"), loc="left", fontweight="bold")
    panels[-1].set_xlabel("share of the plan's economic cost (grey bands: the seed rule)")
    title = "Spend by part group of each plan (cheapest first)"
    figure.suptitle(title, fontweight="bold")
    return Chart("spend_split", title, figure)
