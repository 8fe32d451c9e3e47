"""The third held-out set of issue 18 item 4 (validation/heldout3/, gathered blind on 2026-12-02).

Rated once by the lead with `scripts/validation_table.py --heldout --heldout-dir
validation/heldout3` (and `scripts/allin_check.py --heldout --heldout-dir validation/heldout3`),
commit 32a49c4: serving 7/21. It is no longer held out: its serving rows are fit/check rows
SP88-SP108 (below). These tests check that the copy is faithful and marked, that the training
runs' figures and sources stay out of the data the models are built and tested on, and that
every row loads through the scripts' readers. No prediction is computed for any row here."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from scripts.allin_check import heldout_runs
from scripts.published_table import read_rows
from scripts.validation_table import HELDOUT_SERVING_CSV
from tests.perf.heldout_sets import (
    absent_from_data,
    check_figure_basis_written,
    check_runs_load,
    check_serving_rows,
    seen_copies,
    texts,
)

ROOT = Path(__file__).parents[2]
HELDOUT3_DIR = ROOT / "validation" / "heldout3"
HELDOUT3 = "heldout3"
# Issue 18's fifth serving round copied the set's 21 serving rows into
# tests/data/serving_published.csv as SP88-SP108 (halves by that file's rule for added rows, each
# marked seen in its notes), as the fourth round did with heldout2's. Its training runs were not
# copied: their figures and sources must still stay out of the model's and the tests' data.
SEEN_MARK = "SEEN: validation/heldout3 row "
# Words naming each heldout3 training source; none may appear in the model's or the tests' data.
HELDOUT3_SOURCE_MARKERS = (
    "bigcode/santacoder", "2301.03988", "tiny_starcoder_py",
    "Llemma", "2310.10631",
    "mosaicml/examples", "hf-bert-base-uncased.yaml",
    "RoBERTa", "1907.11692")


def test_heldout3_serving_rows_are_in_the_calibration_data_marked_seen() -> None:
    """Each heldout3 serving row appears once in serving_published.csv unchanged, with its group
    (heldout_sets.seen_copies: new id, rule for added rows, marked seen)."""
    heldout = read_rows(HELDOUT3_DIR / "serving.csv")
    seen = seen_copies(heldout, SEEN_MARK)
    assert all(seen[row["id"]]["group"] == row["group"] for row in heldout)


def test_no_heldout3_training_figure_or_source_is_in_the_model_or_test_data() -> None:
    """The training runs stayed where they were: their distinctive GPU-hours are absent from
    costsim/data and tests/data, and no data file there names a heldout3 training source."""
    hours = [row["published_gpu_hours"] for row in heldout_runs(HELDOUT3_DIR)]
    assert sum(len(h.replace(".", "")) >= 5 for h in hours) >= 4
    # 24576 (H3-07: 1,024 GPUs x 24 h) is also a 24 GiB card's capacity in MiB in gpus.csv.
    assert not absent_from_data(hours, HELDOUT3_SOURCE_MARKERS, ROOT, coincidences=("24576",))


def test_the_marker_check_catches_a_heldout3_source_in_a_data_file(tmp_path: Path) -> None:
    """The marker list does its job: a data folder naming a heldout3 training source is caught."""
    (tmp_path / "rows.csv").write_text(
        "id,source\nX1,Llemma 7B (arXiv 2310.10631)\n", encoding="utf-8")
    data = texts(tmp_path)
    assert [m for m in HELDOUT3_SOURCE_MARKERS if m in data] == ["Llemma", "2310.10631"]


def test_every_heldout3_run_loads_as_a_scenario(tmp_path: Path) -> None:
    """Parse only: each run becomes the one-phase scenario scripts/allin_check.py simulates
    (heldout_sets.check_runs_load; nothing is simulated)."""
    rows = check_runs_load(HELDOUT3_DIR, "H3", HELDOUT3, tmp_path)
    assert len(rows) >= 7
    assert sum(row["scale_class"] == "small" for row in rows) >= 4


def test_every_heldout3_run_states_what_its_figure_measures() -> None:
    """figure_basis is written for every run (FIGURE_BASIS_RULE of scripts/allin_check.py)."""
    check_figure_basis_written(HELDOUT3_DIR)


def test_every_heldout3_serving_row_parses_for_the_predictors() -> None:
    """Parse only: each serving row names a preset, a catalog GPU, a costsim engine, precision
    and quantization, a kind, mode and unit the predictors of scripts/published_table.py handle,
    and numbers where they need them (no prediction is made)."""
    rows = read_rows(HELDOUT3_DIR / "serving.csv")
    with HELDOUT_SERVING_CSV.open(encoding="utf-8") as handle:
        assert list(rows[0]) == list(csv.DictReader(handle).fieldnames or [])
    assert len(rows) >= 20
    assert len({row["costsim_engine"] for row in rows}) >= 4
    assert len({row["gpu"] for row in rows if row["kind"] != "card-ratio"}) >= 4
    check_serving_rows(rows, "HS3", HELDOUT3)


def test_the_heldout_scripts_accept_the_heldout3_folder() -> None:
    """--heldout-dir validation/heldout3 passes the scripts' folder checks (the files are there);
    without --heldout the option is refused with exit 2, as for every held-out folder."""
    from scripts.allin_check import main as allin_main
    from scripts.validation_table import main as table_main

    for name in ("serving.csv", "training_runs.csv"):
        assert (HELDOUT3_DIR / name).is_file()
    for main in (allin_main, table_main):
        with pytest.raises(SystemExit) as stopped:
            main(["--heldout-dir", str(HELDOUT3_DIR)])
        assert stopped.value.code == 2
