"""``costsim optimize --budget-split``: the owned cluster for the scenario's training phases —
server type and count, system RAM, NVMe, CPU cores and NICs per server — beside the plan
search (docs/optimizer.md "Budget split").

The split runs before the search (seconds, and a scenario it cannot answer is refused before
minutes of simulation); its answer joins the search's: the ``budget_split`` key of
optimize.json (with the cluster as a scenario plan block), its charts in the report folder, and
lines in the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from costsim.cli.numbers import percent, usd_amount, usd_estimate
from costsim.cli.optimize_table import wrap_line
from costsim.units import SECONDS_PER_DAY

if TYPE_CHECKING:
    from costsim.domain.scenario import Scenario
    from costsim.optimize.budget_split_result import BudgetSplitResult, RuleCheck
    from costsim.report.plot.style import Chart


@dataclass(frozen=True, slots=True)
class SplitAnswer:
    """The budget split as optimize shows it."""

    result: BudgetSplitResult
    section: dict[str, Any]  # the budget_split key of optimize.json
    block: str  # the cluster as a plans: item
    complete: bool  # the block says how every phase runs (else: training phases only)


def budget_split(scenario: Scenario) -> SplitAnswer:
    """The split for ``scenario`` (its budget; the most throughput within it, or the least
    capex meeting every training deadline when it has none).

    Raises:
        InputError: no training phase, neither a budget nor deadlines, or no cluster fits.
    """
    from costsim.optimize.budget_split import optimize_budget_split
    from costsim.report.budget_split import budget_split_json
    from costsim.scenario.dump import jsonable_plan, plan_yaml

    result = optimize_budget_split(scenario)
    covered = {use.phase for use in result.plan.uses}
    complete = covered == {phase.name for phase in scenario.phases}
    section = {**budget_split_json(result), "plan": jsonable_plan(result.plan),
               "plan_covers_every_phase": complete}
    return SplitAnswer(result=result, section=section, block=plan_yaml(result.plan),
                       complete=complete)


def split_charts(answer: SplitAnswer) -> list[Chart]:
    """The split's charts (spend by part group against the seed rule, sensitivity)."""
    from costsim.report.budget_split import budget_split_charts

    return budget_split_charts(answer.result)


def _rule(check: RuleCheck) -> str:
    # share rules are bounded within [0, 1] (60–70 % of the budget); ratio rules lie above 1
    # (RAM 1.5–2× VRAM)
    if check.high <= 1:
        measured, band = percent(check.measured), f"{check.low:.0%}–{check.high:.0%}"
    else:
        measured, band = f"{check.measured:.2f}×", f"{check.low:g}–{check.high:g}×"
    verdict = "holds" if check.holds else "does not hold"
    return f"  {check.rule}: {measured} (rule {band}): {verdict}"


def split_lines(answer: SplitAnswer) -> list[str]:
    """The split in a few lines: the cluster, what it delivers, the spend by part group, the
    seed's rules against it, and its plan block."""
    from costsim.optimize.budget_split_result import SplitObjective
    from costsim.report.budget_split import GROUP_LABELS

    result = answer.result
    best, parts = result.best, result.best.parts
    goal = ("the most training throughput within " + usd_estimate(result.budget_usd or 0.0)
            if result.objective is SplitObjective.THROUGHPUT
            else "the least capex that finishes every training phase by its deadline")
    lines = [wrap_line(line) for line in (
        f"Budget split ({goal}; {result.configurations:,} configurations rated): "
        f"{best.servers} × {best.server} ({best.gpus} {best.gpu}), per server "
        f"{parts.ram_gib:,} GiB RAM, {parts.nvme_tb:g} TB NVMe, {parts.cpu_cores} CPU cores, "
        f"{parts.nic_gbps:g} Gb/s of NICs: capex {usd_amount(best.capex_usd)}, "
        f"{best.tokens_per_s:,.0f} tokens/s delivered, "
        f"{best.wall_time_s / SECONDS_PER_DAY:,.1f} days of training.",
        "  Spend by part group: " + ", ".join(
            f"{GROUP_LABELS[share.group]} {percent(share.share)}" for share in result.shares
            if share.usd) + ".",
        *(_rule(check) for check in result.rules),
        "The cluster as a plan block" + ("" if answer.complete else
                                         " (training phases only: add the other phases' use)")
        + ":")]
    return [*lines, answer.block.rstrip("\n")]
