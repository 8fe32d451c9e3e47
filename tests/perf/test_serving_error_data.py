"""The serving model's out-of-sample error: costsim/data/serving_model_error.csv holds the rated
held-out rows' ratios (no figures), and ``serving_error_sigma`` in costsim/data/allin_loss.csv
is what scripts/serving_model_error.py's pre-registered estimator makes of them."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from costsim.catalog.perf_defaults import allin_loss_defaults
from scripts.serving_model_error import (
    DEFAULTS_CSV,
    RATINGS,
    Ratio,
    defaults_text,
    inside_band,
    leave_one_set_out,
    ratios_text,
    read_ratios,
    serving_error_sigma,
    used,
    weighted_rms,
)


def _ratio(set_name: str, group: str, ratio: float, kind: str = "batch1-decode") -> Ratio:
    return Ratio(set=set_name, row_id=f"{set_name}-{group}-{ratio}", kind=kind, engine="vllm",
                 gpu="H100", group=group, ratio=ratio, commit="0000000")


def test_the_data_file_holds_each_rated_row_of_the_four_sets() -> None:
    """27, 25, 21 and 135 rated rows (the ratings' denominators: 7/27, 10/25, 7/21, 62/135),
    each with its rating commit; the 22 card-ratio rows are kept but not used."""
    rows = read_ratios()
    assert Counter(r.set for r in rows) == {"heldout": 27, "heldout2": 25, "heldout3": 21,
                                            "heldout4": 135}
    assert all(r.commit == RATINGS[r.set] for r in rows)
    assert all(r.ratio > 0 for r in rows)
    assert len(used(rows)) == 186
    unused = {r.row_id for r in rows if r not in used(rows)}
    assert unused == {"HS3-20", "HS3-21", *(f"HS4-{i}" for i in range(41, 47)),
                      *(f"HS4-{i}" for i in range(122, 136))}


def test_heldout4_ratios_are_its_rating_as_printed() -> None:
    """Each heldout4 ratio is the meas/pred column of the rating printed once at 8d146d5
    (validation/heldout4/rating_8d146d5.txt, two decimals), the 4-significant-digit value
    rounded again (three rows sit on a rounding edge: 1.045 printed 1.05, etc.)."""
    printed = (Path(__file__).resolve().parents[2] / "validation" / "heldout4"
               / "rating_8d146d5.txt").read_text(encoding="utf-8").splitlines()
    start, end = printed[0].index("meas/pred"), printed[0].index("tol ")
    column = {line.split()[0]: float(line[start:end].replace(",", ""))
              for line in printed if line.startswith("HS4-")}
    rows = [r for r in read_ratios() if r.set == "heldout4"]
    assert {r.row_id for r in rows} == set(column)
    assert all(abs(r.ratio - column[r.row_id]) <= 0.0051 for r in rows)


def test_leave_one_set_out_as_the_plan_fixed() -> None:
    """validation/ERROR_BANDS_PLAN.md: fold 4 is the three-set σ (0.6413, shipped before the
    fourth rating) on heldout4's 115 rows: 94 inside, as its rating plan's item 3 reported."""
    folds = {f.left_out: f for f in leave_one_set_out(read_ratios(), 0.111)}
    assert list(folds) == list(RATINGS)
    assert folds["heldout4"].sigma == pytest.approx(0.6413, abs=5e-5)
    assert (folds["heldout4"].inside, folds["heldout4"].rows) == (94, 115)
    assert sum(f.rows for f in folds.values()) == 186


def test_a_fold_counts_rows_inside_the_lognormal_p10_p90() -> None:
    """σ from the other set; a row is inside when |ln ratio| <= 1.2816 σ (edges included)."""
    other = [_ratio("a", "g", math.e)]  # σ = 1
    edge = math.exp(1.2816)
    own = [_ratio("b", "h", edge * 0.999), _ratio("b", "h", 1 / (edge * 0.999)),
           _ratio("b", "h", edge * 1.01), _ratio("b", "h", 1.0),
           _ratio("b", "h", 50.0, kind="card-ratio")]
    folds = {f.left_out: f for f in leave_one_set_out([*other, *own], 0.111)}
    assert folds["b"].sigma == pytest.approx(1.0)
    assert (folds["b"].inside, folds["b"].rows) == (3, 4)
    assert inside_band(_ratio("b", "h", edge * 0.999), 1.0)


def test_the_shipped_sigma_is_what_the_estimator_gives() -> None:
    """Byte for byte: allin_loss.csv's serving_error_sigma row is the script's."""
    current = DEFAULTS_CSV.read_text(encoding="utf-8")
    floor = allin_loss_defaults().throughput_error_sigma
    assert defaults_text(read_ratios(), current, floor) == current
    assert allin_loss_defaults().serving_error_sigma == pytest.approx(
        serving_error_sigma(read_ratios(), floor), rel=1e-3)


def test_the_estimator_weights_each_source_table_once() -> None:
    """RMS of ln ratio about 0 (a constant bias counts in full), each (set, group) weight 1
    shared by its rows, card-ratio rows left out, floored at the shared error."""
    bias = [_ratio("a", "g", 0.5), _ratio("a", "g", 0.5)]
    assert weighted_rms(bias) == pytest.approx(math.log(2))
    # one table of three rows at x2 and one single row at 1: the tables weigh alike
    rows = [_ratio("a", "big", 2.0)] * 3 + [_ratio("a", "one", 1.0)]
    assert weighted_rms(rows) == pytest.approx(math.log(2) / math.sqrt(2))
    # the same group name in two sets is two tables
    assert weighted_rms([_ratio("a", "g", 2.0), _ratio("b", "g", 1.0),
                         _ratio("b", "g", 1.0)]) == pytest.approx(math.log(2) / math.sqrt(2))
    assert weighted_rms([*rows, _ratio("a", "x", 100.0, kind="card-ratio")]) == \
        weighted_rms(rows)
    assert serving_error_sigma([_ratio("a", "g", 1.01)], 0.111) == 0.111


def test_ratios_round_trip_through_the_file_format(tmp_path: Path) -> None:
    rows = [_ratio("heldout", "g", 0.123456), _ratio("heldout2", "h", 1.5)]
    path = tmp_path / "ratios.csv"
    path.write_text(ratios_text(rows), encoding="utf-8")
    back = read_ratios(path)
    assert [r.ratio for r in back] == [0.1235, 1.5]
    assert [r.row_id for r in back] == [r.row_id for r in rows]
