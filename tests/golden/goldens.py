"""Golden summaries of the shipped scenarios: what ``costsim run --json`` says about each file in
``scenarios/`` at a fixed seed and a small replication count, normalized so that only a change in
results shows. Left out: what DESIGN §7 exempts (``wall_s``, ``generated_at``, ``*_path`` and
``*_dir`` keys), and provenance that is not a result (the costsim version, the scenario file's
SHA-256). Money is compared to the cent, other numbers to 9 significant digits, beyond which
float summation order is noise.

Regenerate on purpose, after a change in results that is meant:
``python scripts/update_goldens.py`` (then review the diff of ``tests/golden/*.summary.json`` like
code).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS_DIR = ROOT / "scenarios"
GOLDEN_DIR = Path(__file__).resolve().parent
SEED = 0
REPLICATIONS = 20
GENERATED_AT = "2000-01-01T00:00:00Z"  # dropped by normalize(); fixed anyway
# Not results: the run's timing (DESIGN §7), and provenance that changes without any result
# changing (a version bump; an edited comment changes the scenario file's SHA-256).
_VOLATILE = ("wall_s", "generated_at", "costsim_version", "scenario_sha256")


def shipped_scenarios() -> list[Path]:
    """Every runnable scenario shipped in scenarios/."""
    return sorted(SCENARIOS_DIR.glob("*.yaml"))


def golden_path(scenario: Path) -> Path:
    """tests/golden/<scenario stem>.summary.json."""
    return GOLDEN_DIR / f"{scenario.stem}.summary.json"


def _number(value: float, money: bool) -> float | None:
    if not math.isfinite(value):
        return None
    if money:
        return round(value, 2) + 0.0  # + 0.0: no "-0.0"
    return float(f"{value:.9g}")


def normalize(value: Any, money: bool = False) -> Any:
    """``value`` without the volatile keys, money (keys ending ``_usd`` and what they hold)
    rounded to the cent, other floats to 9 significant digits."""
    if isinstance(value, dict):
        return {key: normalize(item, money or key.endswith("_usd"))
                for key, item in value.items()
                if key not in _VOLATILE and not key.endswith(("_path", "_dir"))}
    if isinstance(value, list | tuple):
        return [normalize(item, money) for item in value]
    if isinstance(value, float):
        return _number(value, money)
    return value


def summary_of(scenario: Path) -> dict[str, Any]:
    """The summary ``costsim run --json --seed 0 --replications 20`` prints for ``scenario``
    (the report itself is not written: it is made from this summary)."""
    from costsim.cli.run_pipeline import simulate
    from costsim.cli.scenario_names import load_scenario_file
    from costsim.report import summary_json

    args = argparse.Namespace(seed=SEED, replications=REPLICATIONS, plan=None, baseline=None,
                              workers=1)
    run = simulate(load_scenario_file(scenario), args)
    # through JSON, as `--json` and summary.json write it (tuples become lists, NaN null)
    text = json.dumps(summary_json(run, generated_at=GENERATED_AT), default=str)
    loaded: dict[str, Any] = json.loads(text)
    return loaded


# ``costsim optimize --json`` is kept for the smallest shipped scenarios (one phase each): its
# answer changes whenever the search does, so the goldens show that change in review too.
OPTIMIZE_SCENARIOS = ("seed-startup-4090",)


def optimize_scenarios() -> list[Path]:
    """The shipped scenarios whose ``optimize --json`` has a golden."""
    return [SCENARIOS_DIR / f"{stem}.yaml" for stem in OPTIMIZE_SCENARIOS]


def optimize_golden_path(scenario: Path) -> Path:
    """tests/golden/<scenario stem>.optimize.json."""
    return GOLDEN_DIR / f"{scenario.stem}.optimize.json"


def optimize_of(scenario: Path) -> dict[str, Any]:
    """What ``costsim optimize --json --seed 0 --replications 20`` prints for ``scenario``
    (without ``report_dir``; the report folder is made from this document)."""
    from costsim.cli.optimize_cmd import risk_limits, run_optimizer
    from costsim.cli.scenario_names import load_scenario_file
    from costsim.report.optimize_json import optimize_json
    from costsim.scenario.dump import jsonable_plan

    args = argparse.Namespace(seed=SEED, replications=REPLICATIONS, objective="mean", top=None,
                              exhaustive=False, workers=1, max_deadline_risk=None,
                              max_budget_risk=None, min_slo_attainment=None)
    loaded = load_scenario_file(scenario)
    limits = risk_limits(loaded.scenario, args)
    result, wall_s = run_optimizer(loaded, args, limits)
    document = optimize_json(result, plan_block=jsonable_plan, scenario=loaded.scenario.name,
                             scenario_sha256=loaded.sha256, costsim_version="",
                             price_book_date=_price_book_date(), seed=SEED,
                             replications=REPLICATIONS, limits=limits, wall_s=wall_s,
                             generated_at=GENERATED_AT)
    loaded_back: dict[str, Any] = json.loads(json.dumps(document, default=str))
    return loaded_back


def _price_book_date() -> str:
    from costsim.catalog.price_tables import price_book_date

    return price_book_date()


def golden_text(scenario: Path, summary: dict[str, Any] | None = None) -> str:
    """The golden file's content for ``scenario`` (from ``summary`` when it is at hand)."""
    document = summary if summary is not None else summary_of(scenario)
    return json.dumps(normalize(document), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Where two normalized summaries differ, as ``key.path: old -> new`` lines."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(old.keys() | new.keys()):
            found += differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        found = []
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            found += differences(a, b, f"{path}[{index}]")
        return found
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]
