"""The report's plain-words account of what each phase's performance figure rests on.

Read from ``plans[].performance_basis`` of the summary (docs/report.md "What the performance
figures rest on"): for each phase, whether its throughput or capacity is costsim's prior (and
how wide that prior is out of sample), the team's measurement, part of each, or the error the
scenario states, written for a finance reader with the P10–P90 factor range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FIGURES = {"training": "Training throughput of phase '{}'",
           "serving": "Serving capacity of phase '{}'",
           "experiments": "The experiment jobs' speed in phase '{}'"}
# where a team reads how to hand costsim its own measurements (DESIGN §12)
MEASURE_HOW = {"training": 'measure a short run and give it to costsim (docs/performance.md, '
                           '"Measured training runs")',
               "serving": 'measure it and give it to costsim (docs/performance.md, "Measured '
                          'serving profiles")'}
CHECKED_ON = {"training": "published training runs it had not been calibrated on",
              "serving": "benchmarks it had not seen"}


def factor_range(basis: Mapping[str, Any]) -> str:
    """``0.45×–2.23×``: the P10–P90 of the factor on the predicted figure."""
    return f"{basis['p10_factor']:.2f}×–{basis['p90_factor']:.2f}×"


def basis_sentence(basis: Mapping[str, Any]) -> str:
    """One phase's basis in plain words (a ``performance_basis`` item of the summary)."""
    kind, name = basis["kind"], basis["phase"]
    figure = FIGURES.get(kind, "The performance figure of phase '{}'").format(name)
    low, high = f"{basis['p10_factor']:.2f}×", f"{basis['p90_factor']:.2f}×"
    how = MEASURE_HOW.get(kind)
    if basis["basis"] == "measured":
        return (f"{figure} is the team's measurement ({basis['source'] or 'measurements'}); "
                f"costsim draws no model error on it.")
    if basis["basis"] == "stated":
        return (f"{figure} carries the error the scenario states (uncertainty.throughput_error):"
                f" the real value between {low} and {high} costsim's estimate 8 times in 10. It "
                f"replaces costsim's own out-of-sample error for such figures "
                f"(docs/performance.md), so the range is only as good as that statement.")
    if basis["basis"] == "mixed":
        part = (f"that part carries the scenario's stated error, between {low} and {high} 8 "
                f"times in 10" if basis["error"] == "stated" else
                f"on {CHECKED_ON.get(kind, 'its validation rows')}, such estimates put the "
                f"real value between {low} and {high} the estimate about 8 times in 10")
        return (f"{figure} is the team's measurement for part of its work and costsim's "
                f"estimate for the rest ({basis['predicted_share']:.0%} of the work): {part}. "
                + ("Measure the rest to narrow the range." if how else ""))
    if kind not in CHECKED_ON:  # experiment jobs: only the model's in-sample error is drawn
        return (f"{figure} carries only costsim's in-sample validation error: the real value "
                f"between {low} and {high} the estimate 8 times in 10. No out-of-sample check "
                f"covers experiment jobs, so the true range may be wider.")
    source = ("from published benchmarks" if kind == "serving" else "from its performance model")
    sentence = (f"{figure} is costsim's estimate {source}; checked on {CHECKED_ON[kind]}, such "
                f"estimates put the real value between {low} and {high} the estimate about 8 "
                f"times in 10, and every cost in this report includes that spread.")
    return sentence + (f" To narrow it, {how}." if how else "")


def basis_rows(plans: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The report's rows: one per distinct phase basis, with the plans it holds for (every
    plan that runs the phase alike shares one row), in plan then phase order."""
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for plan in plans:
        for basis in plan.get("performance_basis", []):
            key = tuple(sorted((k, v) for k, v in basis.items()))
            row = rows.setdefault(key, {**basis, "plans": [], "range": factor_range(basis),
                                        "sentence": basis_sentence(basis)})
            row["plans"].append(plan["name"])
    return list(rows.values())
