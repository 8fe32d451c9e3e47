"""Time the budget split on the shipped scenario: every server type, and HGX H100 only.

Run: python benchmarks/bench_budget_split.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from costsim.cli.scenario_names import load_scenario_file
from costsim.optimize.budget_split import optimize_budget_split

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "budget-split-pretrain-8b.yaml"


def main() -> None:
    """Print wall time, configurations scored and the choice for each server set."""
    scenario = load_scenario_file(SCENARIO).scenario
    for label, servers in (("every server", None), ("hgx-h100-8", ["hgx-h100-8"])):
        start = time.perf_counter()
        result = optimize_budget_split(scenario, servers=servers)
        wall = time.perf_counter() - start
        best = result.best
        print(f"{label}: {wall:.1f} s, {result.configurations:,} configurations scored "
              f"({result.configurations / wall:,.0f}/s); chose {best.servers} x {best.server}, "
              f"{best.tokens_per_s:,.0f} tokens/s for ${best.capex_usd:,.0f}")


if __name__ == "__main__":
    main()
