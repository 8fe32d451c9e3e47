"""``costsim optimize``: search for the cheapest plan, print it ranked against the others with
the YAML block to paste into the scenario, and write the report folder (DESIGN §7,
docs/optimizer.md "Command").

The CLI orchestrates (DESIGN §4): the scenario layer loads the file and serializes the chosen
plan back into it, the optimizer knows neither, the report draws and writes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from costsim.cli.common import EXIT_OK, examples, print_json
from costsim.cli.flags import range_argtype
from costsim.cli.ranges import describe
from costsim.cli.run_cmd import interrupted, utc_now
from costsim.cli.sim_flags import (
    add_report_folder_flags,
    add_scenario_arg,
    add_simulation_flags,
)
from costsim.errors import InputError

if TYPE_CHECKING:
    from costsim.domain.scenario import RiskLimits, Scenario
    from costsim.optimize.result import OptimizeResult
    from costsim.scenario import LoadedScenario

OBJECTIVES = ("mean", "p50", "p90")  # costsim.optimize.result.Objective (test_optimize_cmd)
DEFAULT_TOP_K = 72  # costsim.optimize.search.DEFAULT_TOP_K (tests/cli/test_optimize_cmd.py)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``costsim optimize``."""
    opt = commands.add_parser(
        "optimize", help="find the cheapest plan for a scenario and print it as a plan block",
        description=(
            "Search the plans a scenario could use (GPU type and count, layout, on-demand, "
            "spot, reserved and owned capacity, the serving GPU mix): screen every candidate "
            "analytically, simulate the best --top of them and the scenario's own plans on the "
            "same random futures as `run`, and choose the lowest --objective cost among the "
            "feasible plans within the limits (the scenario's risk limits, and the flags "
            "below). Prints the ranked plans, the chosen one with a sentence on why, and its "
            "YAML block to paste under the scenario's plans: (running it gives the same cost "
            "at the same seed); writes a report folder: optimize.json, best-plan.yaml, "
            "optimize.html and charts (time-cost Pareto front, reservation cost curves)."),
        epilog=examples("costsim optimize scenarios/seed-startup-4090.yaml --replications 20",
                        "costsim optimize scenarios/lifecycle-assistant.yaml --objective p90 "
                        "--max-deadline-risk 0.05 --top 4 --replications 50",
                        "costsim optimize scenarios/buy-vs-rent-8xh100.yaml --exhaustive "
                        "--replications 20 --out reports/buy-or-rent --force --json",
                        "costsim optimize scenarios/budget-split-pretrain-8b.yaml --budget-split "
                        "--replications 20"),
    )
    add_scenario_arg(opt)
    opt.add_argument("--objective", choices=OBJECTIVES, default="mean",
                     help="the statistic of a plan's simulated cost to minimize: "
                          f"{' | '.join(OBJECTIVES)} (default mean)")
    opt.add_argument("--max-deadline-risk", type=range_argtype("--max-deadline-risk"),
                     metavar="P",
                     help=f"highest P(a deadline missed) a chosen plan may have, "
                          f"{describe('--max-deadline-risk')} (default: the scenario's "
                          "risk.max_p_deadline_missed, else no limit)")
    opt.add_argument("--max-budget-risk", type=range_argtype("--max-budget-risk"),
                     metavar="P",
                     help=f"highest P(cost over budget_usd), {describe('--max-budget-risk')}; "
                          "needs the scenario's budget_usd (default: the scenario's "
                          "risk.max_p_over_budget, else no limit)")
    opt.add_argument("--min-slo-attainment", type=range_argtype("--min-slo-attainment"),
                     metavar="Y",
                     help=f"lowest share of requests served within the SLO, "
                          f"{describe('--min-slo-attainment')} (default: the scenario's "
                          "risk.min_slo_attainment, else no limit)")
    opt.add_argument("--top", type=range_argtype("--top"), metavar="K",
                     help=f"finalists of the analytic screen to simulate, beside the "
                          f"scenario's own plans, {describe('--top')} (default {DEFAULT_TOP_K})")
    opt.add_argument("--exhaustive", action="store_true",
                     help="simulate every candidate instead of the screen's finalists: slow, "
                          "for checking the screen on small scenarios (default off)")
    opt.add_argument("--budget-split", action="store_true",
                     help="also choose an owned cluster for the scenario's training phases: "
                          "server type (shipped, or declared in servers:) and count, system "
                          "RAM, NVMe, CPU cores and NICs per server, for the most throughput "
                          "within budget_usd (or the least capex meeting every deadline); adds "
                          "budget_split to the JSON and "
                          "its charts to the report (default off)")
    add_simulation_flags(opt, baseline=False)
    add_report_folder_flags(opt, "<scenario file name>-optimize-<UTC time>")
    opt.add_argument("--json", action="store_true",
                     help="print optimize.json (with report_dir) on stdout instead of the "
                          "table; the report is written all the same (default: the table)")
    opt.set_defaults(handler=_optimize)


def risk_limits(scenario: Scenario, args: argparse.Namespace) -> RiskLimits:
    """The scenario's risk limits with the flags' in their place where given.

    Raises:
        InputError: --max-budget-risk for a scenario without a budget.
    """
    from costsim.domain.scenario import RiskLimits

    risk = scenario.risk
    if args.max_budget_risk is not None and scenario.budget_usd is None:
        raise InputError("--max-budget-risk", "", "the scenario sets no budget_usd, so no plan "
                         "has a P(over budget); add budget_usd to the scenario or drop the flag")

    def pick(flag: float | None, own: float | None) -> float | None:
        return own if flag is None else flag

    return RiskLimits(max_p_over_budget=pick(args.max_budget_risk, risk.max_p_over_budget),
                      max_p_deadline_missed=pick(args.max_deadline_risk,
                                                 risk.max_p_deadline_missed),
                      min_slo_attainment=pick(args.min_slo_attainment, risk.min_slo_attainment))


def run_optimizer(loaded: LoadedScenario, args: argparse.Namespace, limits: RiskLimits
                  ) -> tuple[OptimizeResult, float]:
    """The optimizer's answer and its wall time, with the progress bar on stderr."""
    from costsim import __version__
    from costsim.catalog.price_tables import price_book_date
    from costsim.cli.progress import RunProgress
    from costsim.cli.run_pipeline import default_workers
    from costsim.cli.work_notice import announce
    from costsim.optimize.result import Objective
    from costsim.optimize.search import optimize_scenario
    from costsim.sim.work import estimate_work

    start = time.perf_counter()
    top = {} if args.top is None else {"top_k": args.top}
    workers = args.workers or default_workers()
    # the scenario's plans and the screen's finalists (--exhaustive: every candidate, not
    # known before the screen: at least as many)
    finalists = DEFAULT_TOP_K if args.top is None else args.top
    estimate = estimate_work(loaded.scenario, replications=args.replications, workers=workers,
                             extra_plans=finalists)
    announce("optimize", estimate, at_least=args.exhaustive)
    with RunProgress(None, args.replications, expected_s=estimate.seconds) as progress:
        result = optimize_scenario(
            loaded.scenario, seed=args.seed, replications=args.replications,
            objective=Objective(args.objective), limits=limits, exhaustive=args.exhaustive,
            progress=progress, workers=workers,
            clock=time.perf_counter, scenario_sha256=loaded.sha256,
            costsim_version=__version__, price_book_date=price_book_date(),
            inputs=loaded.inputs, **top)
    return result, time.perf_counter() - start


def _optimize(args: argparse.Namespace) -> int:
    from costsim import __version__
    from costsim.catalog.price_tables import price_book_date
    from costsim.cli.optimize_split import budget_split, split_charts, split_lines
    from costsim.cli.optimize_table import render_optimize
    from costsim.cli.report_folder import check_out_dir, default_out_dir, staged_out_dir
    from costsim.cli.scenario_names import load_scenario_file
    from costsim.scenario.dump import jsonable_plan, plan_yaml

    now = utc_now()
    out: Path = (args.out if args.out is not None
                 else default_out_dir(args.scenario, now, "optimize"))
    check_out_dir(out, args.force)  # refuse before minutes of search, not after
    loaded = load_scenario_file(args.scenario)
    limits = risk_limits(loaded.scenario, args)
    # seconds, and refused (no training phase, no budget) before minutes of search
    split = budget_split(loaded.scenario) if args.budget_split else None
    try:
        result, wall_s = run_optimizer(loaded, args, limits)
        from costsim.report.optimize_json import optimize_json
        from costsim.report.optimize_write import write_optimize_report

        document = optimize_json(
            result, plan_block=jsonable_plan, scenario=loaded.scenario.name,
            scenario_sha256=loaded.sha256, costsim_version=__version__,
            price_book_date=price_book_date(), seed=args.seed,
            replications=args.replications, limits=limits, wall_s=wall_s,
            generated_at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            sections=None if split is None else {"budget_split": split.section},
            currency=loaded.scenario.currency)
        block = None if result.best is None else plan_yaml(result.best.candidate.plan)
        with staged_out_dir(out, args.force) as staging:
            write_optimize_report(result, document, staging, best_plan_yaml=block,
                                  extra_charts=[] if split is None else split_charts(split))
    except KeyboardInterrupt:
        return interrupted("optimize")
    if args.json:
        print_json({**document, "report_dir": str(out)})
    else:
        print(render_optimize(document, block, scenario_file=str(args.scenario),
                              report_dir=str(out),
                              extra_lines=[] if split is None else split_lines(split)))
    return EXIT_OK
