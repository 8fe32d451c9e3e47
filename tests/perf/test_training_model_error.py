"""The training model's out-of-sample error: costsim/data/training_model_error.csv holds each
held-out run's band at each scanned σε (ratios and inside flags, no figures), and
``training_error_sigma`` in costsim/data/allin_loss.csv is what scripts/training_model_error.py's
estimator (validation/ERROR_BANDS_PLAN.md) makes of it."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim.catalog.perf_defaults import allin_loss_defaults
from scripts.allin_check import heldout_runs, scenario_mapping
from scripts.training_model_error import (
    DATA_CSV,
    DEFAULTS_CSV,
    FIELDS,
    FIT_HALF_SIGMA,
    SETS,
    SOURCE_OF,
    Band,
    bands_text,
    by_sigma,
    chosen,
    coverage,
    defaults_text,
    estimate,
    grid,
    leave_one_set_out,
    median_spread,
    read_bands,
    simulate_at,
    smallest_sigma,
    source_coverage,
)

ROOT = Path(__file__).resolve().parents[2]


def _band(set_name: str, run: str, sigma: float, inside: bool | None,
          spread: float | None = 2.0) -> Band:
    return Band(set=set_name, run_id=run, scale="small", figure="all-in", sigma=sigma,
                pub_p50=1.0, p90_p10=spread, inside=inside)


def _runs_inside_from(thresholds: dict[tuple[str, str], float],
                      sigmas: list[float]) -> list[Band]:
    """Runs that are inside from their own σε threshold up (a run of threshold inf never)."""
    return [_band(name, run, sigma, sigma >= threshold)
            for sigma in sigmas for (name, run), threshold in thresholds.items()]


def test_the_grid_starts_at_the_fit_half_value_in_steps_of_a_hundredth() -> None:
    sigmas = grid()
    assert sigmas[:3] == [0.2299, 0.2399, 0.2499]
    assert sigmas[-1] <= 3.0
    assert all(b - a == pytest.approx(0.01) for a, b in itertools.pairwise(sigmas))


def test_the_estimator_picks_the_first_grid_value_reaching_80_percent() -> None:
    """Ten runs inside from σε = 0.1 k (k = 1..10): 8 of 10 first at 0.8; nothing reaches 80 %
    when three runs are never inside; runs the simulator cannot run are counted out."""
    sigmas = [round(0.1 * k, 1) for k in range(1, 11)]
    thresholds = {("a", f"r{k}"): 0.1 * k - 1e-9 for k in range(1, 11)}
    bands = _runs_inside_from(thresholds, sigmas)
    assert estimate(bands) == 0.8
    never = {**thresholds, ("a", "r8"): float("inf"), ("a", "r9"): float("inf"),
             ("a", "r10"): float("inf")}
    assert estimate(_runs_inside_from(never, sigmas)) is None
    unsimulable = [*bands, *(_band("a", "x", s, None, None) for s in sigmas)]
    assert estimate(unsimulable) == 0.8
    assert coverage(b for b in unsimulable if b.sigma == 0.8) == (8, 10)
    # the first value that reaches the target, even when a later one falls back below it
    counts = {0.1: (7, 10), 0.2: (8, 10), 0.3: (7, 10)}
    assert smallest_sigma([0.1, 0.2, 0.3], lambda s: counts[s][0] / counts[s][1]) == 0.2


def test_leave_one_set_out_estimates_on_the_others_and_covers_the_left_out() -> None:
    """Set a's five runs are inside from 0.2 on, set b's from 0.5 on: without b, σε = 0.2 (all
    of a), at which b has 0/5; without a, σε = 0.5, at which a has 5/5."""
    sigmas = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    thresholds = {**{("a", f"a{k}"): 0.2 for k in range(5)},
                  **{("b", f"b{k}"): 0.5 for k in range(5)}}
    folds = {f.left_out: f for f in leave_one_set_out(_runs_inside_from(thresholds, sigmas))}
    assert (folds["a"].sigma, folds["a"].inside, folds["a"].runs) == (0.5, 5, 5)
    assert (folds["b"].sigma, folds["b"].inside, folds["b"].runs) == (0.2, 0, 5)


@given(st.lists(st.floats(0.0, 1.0), min_size=5, max_size=20))
def test_when_every_run_stays_inside_once_inside_coverage_never_falls(
        thresholds: list[float]) -> None:
    """If each run's band holds its figure from some σε on, pooled coverage is monotone and the
    estimate is the 80 % quantile of the thresholds (rounded up to the grid)."""
    sigmas = [round(0.05 * k, 2) for k in range(0, 21)]
    bands = _runs_inside_from({("a", f"r{i}"): t for i, t in enumerate(thresholds)}, sigmas)
    counts = [coverage(part)[0] for part in by_sigma(bands).values()]
    assert counts == sorted(counts)
    sigma = estimate(bands)
    assert sigma is not None
    assert sum(t <= sigma for t in thresholds) >= 0.8 * len(thresholds)
    below = [s for s in sigmas if s < sigma]
    assert all(sum(t <= s for t in thresholds) < 0.8 * len(thresholds) for s in below)


def test_bands_round_trip_through_the_file_format(tmp_path: Path) -> None:
    bands = [_band("heldout", "H01", 0.2299, True), _band("heldout4", "H4-05", 0.2299, None,
                                                          None)]
    path = tmp_path / "bands.csv"
    path.write_text(bands_text(bands), encoding="utf-8")
    assert read_bands(path) == bands


@pytest.fixture(scope="module")
def shipped() -> list[Band]:
    return read_bands()


def test_the_file_holds_every_held_out_run_at_every_scanned_sigma(shipped: list[Band]) -> None:
    """33 runs (13 + 8 + 7 + 5) at each σε from the fit-half value up; H4-05 (RTX 4090s, rented
    only on marketplaces) never simulable, every other run always."""
    table = by_sigma(shipped)
    assert list(table)[:2] == [FIT_HALF_SIGMA, 0.2399]
    assert list(table) == grid()[:len(table)]
    for part in table.values():
        assert [b.set for b in part].count("heldout") == 13
        assert {b.set for b in part} == set(SETS)
        assert len(part) == 33
        assert [b.run_id for b in part if b.inside is None] == ["H4-05"]


def test_the_file_holds_ratios_and_flags_only() -> None:
    """No column of a figure (GPU-hours, GPUs, tokens): heldout/'s sources are reserved."""
    assert FIELDS == ("set", "run_id", "scale", "figure", "sigma", "pub_p50", "p90_p10",
                      "inside", "reason")
    with DATA_CSV.open(encoding="utf-8", newline="") as handle:
        cells = {cell for row in csv.reader(handle) for cell in row}
    figures = {row[key] for row in heldout_runs()
               for key in ("published_gpu_hours", "gpus", "tokens")}
    assert not figures & cells


def test_the_shipped_sigma_is_what_the_estimator_gives(shipped: list[Band]) -> None:
    """Byte for byte (--check): allin_loss.csv's training_error_sigma row is the script's;
    the grid start is the fit-half value, and the estimate reaches 80 % of the pooled runs
    with each source weighted once (the run-weighted estimate, wider, is reported beside)."""
    current = DEFAULTS_CSV.read_text(encoding="utf-8")
    assert defaults_text(shipped, current) == current
    sigma = chosen(shipped)
    assert allin_loss_defaults().training_error_sigma == pytest.approx(sigma, abs=5e-5)
    assert sigma >= FIT_HALF_SIGMA
    inside, runs = coverage(by_sigma(shipped)[sigma])
    assert runs == 32
    assert source_coverage(by_sigma(shipped)[sigma]) >= 0.8
    assert inside < 0.8 * runs  # by run count the same band holds fewer: sources cluster
    by_runs = estimate(shipped, weighting="runs")
    assert by_runs is not None
    assert by_runs > sigma
    assert median_spread(by_sigma(shipped)[sigma]) > 2


def test_source_weighting_counts_each_source_once() -> None:
    """Five runs of one source all outside and three sources with one run inside: by run 3/8,
    by source 3/4; a run the source map does not name is its own source."""
    def band(run_id: str, inside: bool) -> Band:
        return Band(set="s", run_id=run_id, scale="small", figure="all-in", sigma=0.3,
                    pub_p50=1.0, p90_p10=2.0, inside=inside)

    bands = [band(run, False) for run in ("H2-04", "H2-05", "H2-06", "H2-07", "H2-08")]
    bands += [band(run, True) for run in ("H07", "H08", "x-unnamed")]
    assert coverage(bands) == (3, 8)
    assert source_coverage(bands) == pytest.approx(0.75)
    assert all(SOURCE_OF[run] == "MobileLLM README"
               for run in ("H2-04", "H2-05", "H2-06", "H2-07", "H2-08"))


def test_every_held_out_run_names_its_source(shipped: list[Band]) -> None:
    assert {b.run_id for b in shipped} <= set(SOURCE_OF)


def test_the_file_reproduces_through_the_simulator(shipped: list[Band]) -> None:
    """heldout4's runs at the chosen σε, simulated again (same seed and replications): the
    stored ratios and flags come back."""
    sigma = chosen(shipped)
    rows = [("heldout4", row) for row in heldout_runs(ROOT / "validation" / "heldout4")]
    again = simulate_at(sigma, rows)
    stored = [b for b in by_sigma(shipped)[sigma] if b.set == "heldout4"]
    assert bands_text(again) == bands_text(stored)


def test_the_override_sets_the_scenarios_throughput_error() -> None:
    """--training-error-sigma: the one-phase scenario carries uncertainty.throughput_error
    lognormal at that log-sd (which replaces the shared error and the training-only factor);
    without it the scenario states no uncertainty and the shipped default applies."""
    row = heldout_runs(ROOT / "validation" / "heldout4")[0]
    assert "uncertainty" not in scenario_mapping(row, horizon_months=1)
    mapping = scenario_mapping(row, horizon_months=1, training_error_sigma=0.5)
    assert mapping["uncertainty"] == {"throughput_error": {"dist": "lognormal", "sigma": 0.5}}
