"""Before/after speed table of issue 20: CPU and wall per plan-replication, fixed cost, events
per second, optimize and sweep totals, for two source trees side by side.

Each measurement is one fresh ``python -m costsim ...`` subprocess with ``PYTHONPATH`` set to
the tree measured, so imports, chart drawing and process start-up count as a user pays them.
CPU is the subprocess's (and its own children's: a sweep's Dask workers) user + system time,
read with ``resource.getrusage(RUSAGE_CHILDREN)`` around it; wall is ``time.perf_counter``.
A ``run`` is measured at two replication counts ``n1 < n2`` on one worker (``--workers 1``,
every chart): ``per replication = (cost(n2) - cost(n1)) / (n2 - n1)`` and ``fixed cost =
cost(n1) - n1 * per replication``; per plan-replication divides by the plans simulated (from
the run's ``summary.json``). Events per second are the simulator's own count (``stats.events``
of ``summary.json``, read through the result, never by patching simpy) over the CPU seconds the
extra replications took.

Cases (the same input files for both trees: those of the tree this script is in):

- ``flagship``: ``run scenarios/lifecycle-assistant.yaml`` (6 plans, every chart);
- ``1200-per-day``: ``run benchmarks/scenarios/lifecycle-1200-arrivals.yaml``, the flagship with
  1,200 experiment arrivals a day (the per-job work dominates);
- ``optimize-seed``: ``optimize scenarios/seed-startup-4090.yaml --top 8`` (total);
- ``optimize-flagship``: ``optimize scenarios/lifecycle-assistant.yaml --top 8`` (total);
- ``sweep``: ``sweep scenarios/lifecycle-assistant.yaml`` over 4 H100 price changes × 50
  replications on one local worker (total, and its CPU over the simulation's own: 4 × 50 ×
  the flagship's CPU per replication, measured in the same run).

Goals (issue 20; CPU seconds on one worker, full run) are printed beside the "after" figures.
The machine these run on is usually shared: CPU seconds move less than wall under load, and
each figure is the median of ``--repeat`` runs.

Run: ``python benchmarks/bench_speed.py --before /work/wt-base --after .`` (``--quick`` for
fewer replications: the goals on totals are then not judged; ``--cases flagship,sweep`` for a
subset; without ``--before`` only the after tree is measured).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "scenarios" / "lifecycle-assistant.yaml"
BUSY = ROOT / "benchmarks" / "scenarios" / "lifecycle-1200-arrivals.yaml"
SEED = ROOT / "scenarios" / "seed-startup-4090.yaml"
SWEEP_SET = "prices.gpu_price_change_pct.H100=-10,-20,-30,-40"
SWEEP_VARIANTS = 4
CASES = ("flagship", "1200-per-day", "optimize-seed", "optimize-flagship", "sweep")
# Issue 20's goals (CPU s, one worker).
GOAL_PER_PLAN_REP_MS = 1.3
GOAL_FIXED_S = 3.0
GOAL_BUSY_RATIO = 1 / 8
GOAL_OPTIMIZE_SEED_S = 15.0
GOAL_OPTIMIZE_FLAGSHIP_S = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """One subprocess: its CPU and wall seconds and the JSON it printed."""

    cpu_s: float
    wall_s: float
    document: dict[str, object]


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Replication counts of this invocation."""

    flagship_reps: tuple[int, int]
    busy_reps: tuple[int, int]
    optimize_reps: int | None  # None: the command's default (the goals' setting)
    sweep_reps: int
    repeat: int


FULL = Settings(flagship_reps=(10, 110), busy_reps=(2, 6), optimize_reps=None, sweep_reps=50,
                repeat=1)
QUICK = Settings(flagship_reps=(2, 32), busy_reps=(1, 3), optimize_reps=20, sweep_reps=10,
                 repeat=1)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def costsim(tree: Path, args: Sequence[str]) -> Sample:
    """Run ``python -m costsim ARGS --json`` with ``tree`` first on the path, in a scratch
    folder (Dask and default report folders land there); return its CPU, wall and JSON."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tree.resolve())
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as scratch:
        command = [sys.executable, "-m", "costsim", *args, "--out", f"{scratch}/out", "--json"]
        cpu0, wall0 = _children_cpu_s(), time.perf_counter()
        done = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True,
                              check=False)
        wall, cpu = time.perf_counter() - wall0, _children_cpu_s() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"bench_speed: {' '.join(command)} (PYTHONPATH={tree}) exited "
                         f"{done.returncode}:\n{done.stderr[-2000:]}")
    return Sample(cpu_s=cpu, wall_s=wall, document=json.loads(done.stdout))


def median_sample(repeat: int, measure: Callable[[], Sample]) -> Sample:
    """The median CPU and wall of ``repeat`` runs (the last run's document)."""
    samples = [measure() for _ in range(repeat)]
    return Sample(cpu_s=statistics.median(s.cpu_s for s in samples),
                  wall_s=statistics.median(s.wall_s for s in samples),
                  document=samples[-1].document)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCost:
    """A ``run`` split into a fixed cost and a cost per replication."""

    plans: int
    fixed_cpu_s: float
    fixed_wall_s: float
    per_rep_cpu_s: float
    per_rep_wall_s: float
    events_per_cpu_s: float | None

    @property
    def per_plan_rep_cpu_ms(self) -> float:
        return self.per_rep_cpu_s / self.plans * 1000

    @property
    def per_plan_rep_wall_ms(self) -> float:
        return self.per_rep_wall_s / self.plans * 1000


def _events(document: dict[str, object]) -> int | None:
    stats = document.get("stats")
    events = stats.get("events") if isinstance(stats, dict) else None
    return events if isinstance(events, int) else None


def run_cost(tree: Path, scenario: Path, reps: tuple[int, int], repeat: int) -> RunCost:
    """Fixed and per-replication cost of ``run SCENARIO --workers 1`` from two counts."""
    n1, n2 = reps
    small, large = (median_sample(repeat, lambda n=n: costsim(
        tree, ["run", str(scenario), "--workers", "1", "--replications", str(n)]))
        for n in (n1, n2))
    per_cpu = (large.cpu_s - small.cpu_s) / (n2 - n1)
    per_wall = (large.wall_s - small.wall_s) / (n2 - n1)
    plans = large.document.get("plans")
    e1, e2 = _events(small.document), _events(large.document)
    rate = (None if e1 is None or e2 is None or large.cpu_s <= small.cpu_s
            else (e2 - e1) / (large.cpu_s - small.cpu_s))
    return RunCost(plans=len(plans) if isinstance(plans, list) else 1,
                   fixed_cpu_s=small.cpu_s - n1 * per_cpu,
                   fixed_wall_s=small.wall_s - n1 * per_wall,
                   per_rep_cpu_s=per_cpu, per_rep_wall_s=per_wall, events_per_cpu_s=rate)


def optimize_total(tree: Path, scenario: Path, settings: Settings) -> Sample:
    """``optimize SCENARIO --top 8 --workers 1`` as a whole."""
    extra = [] if settings.optimize_reps is None else ["--replications",
                                                       str(settings.optimize_reps)]
    return median_sample(settings.repeat, lambda: costsim(
        tree, ["optimize", str(scenario), "--top", "8", "--workers", "1", *extra]))


def sweep_total(tree: Path, settings: Settings) -> Sample:
    """The 4-variant sweep of the flagship on one local worker, as a whole."""
    return median_sample(settings.repeat, lambda: costsim(
        tree, ["sweep", str(FLAGSHIP), "--set", SWEEP_SET, "--workers", "1",
               "--replications", str(settings.sweep_reps)]))


@dataclass(slots=True)
class Table:
    """Rows of (what, before, after, goal) text."""

    rows: list[tuple[str, str, str, str]]

    def add(self, what: str, before: str, after: str, goal: str = "") -> None:
        self.rows.append((what, before, after, goal))

    def render(self) -> str:
        header = ("measure", "before", "after", "goal (after)")
        widths = [max(len(row[i]) for row in [header, *self.rows]) for i in range(4)]
        lines = [" | ".join(cell.ljust(w) for cell, w in zip(header, widths, strict=True)),
                 "-+-".join("-" * w for w in widths)]
        lines += [" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                  for row in self.rows]
        return "\n".join(lines)


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _check(value: float | None, limit: float, text: str, judged: bool = True) -> str:
    if value is None:
        return text
    if not judged:
        return f"{text} (not judged: --quick)"
    return f"{text} {'met' if value <= limit else 'NOT met'}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="the tree before (default: none)")
    parser.add_argument("--after", type=Path, default=Path("."), help="the tree after")
    parser.add_argument("--quick", action="store_true", help="fewer replications")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per measurement, median taken (default 1)")
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated subset of {','.join(CASES)}")
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    settings = Settings(flagship_reps=base.flagship_reps, busy_reps=base.busy_reps,
                        optimize_reps=base.optimize_reps, sweep_reps=base.sweep_reps,
                        repeat=args.repeat or base.repeat)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"--cases: unknown {', '.join(unknown)}; choose from {', '.join(CASES)}")
    trees = {"before": args.before, "after": args.after}
    judged = not args.quick
    table = Table(rows=[])
    load0 = os.getloadavg()[0]

    def both(measure: Callable[[Path], object]) -> dict[str, object | None]:
        return {side: None if tree is None else measure(tree) for side, tree in trees.items()}

    flagship: dict[str, object | None] = {}
    if "flagship" in cases:
        flagship = both(lambda t: run_cost(t, FLAGSHIP, settings.flagship_reps,
                                           settings.repeat))
        costs = {k: v if isinstance(v, RunCost) else None for k, v in flagship.items()}
        b, a = costs["before"], costs["after"]
        n1, n2 = settings.flagship_reps
        table.add(f"flagship: plans (runs at {n1} and {n2} replications)",
                  _fmt(b and b.plans, "d"), _fmt(a and a.plans, "d"))
        table.add("flagship: CPU ms per plan-replication", _fmt(b and b.per_plan_rep_cpu_ms,
                  ".2f"), _fmt(a and a.per_plan_rep_cpu_ms, ".2f"),
                  _check(a and a.per_plan_rep_cpu_ms, GOAL_PER_PLAN_REP_MS,
                         f"<= {GOAL_PER_PLAN_REP_MS} ms"))
        table.add("flagship: wall ms per plan-replication", _fmt(b and b.per_plan_rep_wall_ms,
                  ".2f"), _fmt(a and a.per_plan_rep_wall_ms, ".2f"))
        table.add("flagship: fixed cost, CPU s (every chart)", _fmt(b and b.fixed_cpu_s, ".2f"),
                  _fmt(a and a.fixed_cpu_s, ".2f"),
                  _check(a and a.fixed_cpu_s, GOAL_FIXED_S, f"<= {GOAL_FIXED_S} s"))
        table.add("flagship: fixed cost, wall s", _fmt(b and b.fixed_wall_s, ".2f"),
                  _fmt(a and a.fixed_wall_s, ".2f"))
        table.add("flagship: simulator events per CPU s", _fmt(b and b.events_per_cpu_s, ",.0f"),
                  _fmt(a and a.events_per_cpu_s, ",.0f"))
    if "1200-per-day" in cases:
        busy = both(lambda t: run_cost(t, BUSY, settings.busy_reps, settings.repeat))
        b2 = busy["before"] if isinstance(busy["before"], RunCost) else None
        a2 = busy["after"] if isinstance(busy["after"], RunCost) else None
        ratio = None if b2 is None or a2 is None else a2.per_rep_cpu_s / b2.per_rep_cpu_s
        table.add("1,200/day: CPU s per replication (all plans)",
                  _fmt(b2 and b2.per_rep_cpu_s, ".3f"), _fmt(a2 and a2.per_rep_cpu_s, ".3f"),
                  "" if ratio is None else _check(ratio, GOAL_BUSY_RATIO,
                                                  f"after/before {ratio:.3f} <= 1/8"))
        table.add("1,200/day: wall s per replication", _fmt(b2 and b2.per_rep_wall_s, ".3f"),
                  _fmt(a2 and a2.per_rep_wall_s, ".3f"))
        table.add("1,200/day: simulator events per CPU s",
                  _fmt(b2 and b2.events_per_cpu_s, ",.0f"),
                  _fmt(a2 and a2.events_per_cpu_s, ",.0f"))
    for case, scenario, goal in (("optimize-seed", SEED, GOAL_OPTIMIZE_SEED_S),
                                 ("optimize-flagship", FLAGSHIP, GOAL_OPTIMIZE_FLAGSHIP_S)):
        if case not in cases:
            continue
        result = both(lambda t, s=scenario: optimize_total(t, s, settings))
        b3 = result["before"] if isinstance(result["before"], Sample) else None
        a3 = result["after"] if isinstance(result["after"], Sample) else None
        table.add(f"{case} --top 8: CPU s", _fmt(b3 and b3.cpu_s, ".1f"),
                  _fmt(a3 and a3.cpu_s, ".1f"),
                  _check(a3 and a3.cpu_s, goal, f"<= {goal:g} s", judged))
        table.add(f"{case} --top 8: wall s", _fmt(b3 and b3.wall_s, ".1f"),
                  _fmt(a3 and a3.wall_s, ".1f"))
    if "sweep" in cases:
        result = both(lambda t: sweep_total(t, settings))
        for side in ("before", "after"):
            sample = result[side]
            cost = flagship.get(side)
            if isinstance(sample, Sample) and isinstance(cost, RunCost):
                simulation = SWEEP_VARIANTS * settings.sweep_reps * cost.per_rep_cpu_s
                result[side] = (sample, sample.cpu_s / simulation)
            elif isinstance(sample, Sample):
                result[side] = (sample, None)
        rows = {side: value if isinstance(value, tuple) else None
                for side, value in result.items()}
        b4, a4 = rows["before"], rows["after"]
        what = f"sweep {SWEEP_VARIANTS}x{settings.sweep_reps}"
        table.add(f"{what}: CPU s", _fmt(b4 and b4[0].cpu_s, ".1f"),
                  _fmt(a4 and a4[0].cpu_s, ".1f"))
        table.add(f"{what}: wall s", _fmt(b4 and b4[0].wall_s, ".1f"),
                  _fmt(a4 and a4[0].wall_s, ".1f"))
        table.add(f"{what}: CPU / simulation CPU (needs flagship)",
                  _fmt(b4 and b4[1], ".2f"), _fmt(a4 and a4[1], ".2f"))
    print(f"before: {args.before or '-'}   after: {args.after}   "
          f"{'quick' if args.quick else 'full'}, median of {settings.repeat}; "
          f"load average {load0:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(table.render())


if __name__ == "__main__":
    main()
