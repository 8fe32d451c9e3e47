"""The fourth held-out set of issue 18 item 4 (validation/heldout4/, gathered blind on 2026-12-02).

Rated once by the lead with `scripts/validation_table.py --heldout --heldout-dir
validation/heldout4` (and `scripts/allin_check.py --heldout --heldout-dir validation/heldout4`),
commit 8d146d5: serving 62/135. It is no longer held out: its serving rows are fit/check rows
SP109-SP243 (below). These tests check that the copy is faithful and marked, that the training
runs' figures and sources stay out of the data the models are built and tested on, and that
every row loads through the scripts' readers. No prediction is computed for any row here.
serving.csv carries one column more than the earlier sets, `dataset` (the request-length source
as the benchmark states it), last."""

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
HELDOUT4_DIR = ROOT / "validation" / "heldout4"
HELDOUT4 = "heldout4"
# Issue 18's sixth serving round copied the set's 135 serving rows into
# tests/data/serving_published.csv as SP109-SP243 (halves by that file's rule for added rows,
# each marked seen in its notes), as the fifth round did with heldout3's. Its training runs were
# not copied: their figures and sources must still stay out of the model's and the tests' data.
SEEN_MARK = "SEEN: validation/heldout4 row "
# Words naming each heldout4 training source; none may appear in the model's or the tests' data.
HELDOUT4_SOURCE_MARKERS = ("ru-gpts", "rugpt3", "Christofari", "keeeeenw/MicroLlama", "MicroLlama")


def _serving_rows() -> list[dict[str, str]]:
    return read_rows(HELDOUT4_DIR / "serving.csv")


def test_heldout4_serving_rows_are_in_the_calibration_data_marked_seen() -> None:
    """Each heldout4 serving row appears once in serving_published.csv unchanged
    (heldout_sets.seen_copies), with its dataset, a new id SP109-SP243 in the set's order, the
    rating commit in its note, and its group (a card ratio: its small card's rows' group)."""
    heldout = _serving_rows()
    seen = seen_copies(heldout, SEEN_MARK)
    for position, row in enumerate(heldout):
        copy = seen[row["id"]]
        assert copy["id"] == f"SP{109 + position}"
        assert copy["dataset"] == row["dataset"], row["id"]
        assert "commit 8d146d5" in copy["notes"]
        if row["ratio_of"]:
            # a card-ratio row joins the group of the rows it divides (its small card's), so
            # that the halves' rule checks it in their half
            assert copy["group"] == seen[row["ratio_of"].split("/")[0]]["group"], row["id"]
        else:
            assert copy["group"] == row["group"], row["id"]


def test_no_heldout4_training_figure_or_source_is_in_the_model_or_test_data() -> None:
    """The training runs stayed where they were: their distinctive GPU-hours are absent from
    costsim/data and tests/data, and no data file there names a heldout4 training source."""
    hours = [row["published_gpu_hours"] for row in heldout_runs(HELDOUT4_DIR)]
    assert sum(len(h.replace(".", "")) >= 5 for h in hours) >= 3
    # 24576 (H4-02: 64 GPUs x 16 days x 24 h) is also a 24 GiB card's capacity in MiB.
    assert not absent_from_data(hours, HELDOUT4_SOURCE_MARKERS, ROOT, coincidences=("24576",))


def test_the_marker_check_catches_a_heldout4_source_in_a_data_file(tmp_path: Path) -> None:
    """The marker list does its job: a data folder naming a heldout4 training source is
    caught."""
    (tmp_path / "rows.csv").write_text(
        "id,source\nX1,ai-forever/ru-gpts README\n", encoding="utf-8")
    data = texts(tmp_path)
    assert [m for m in HELDOUT4_SOURCE_MARKERS if m in data] == ["ru-gpts"]


def test_every_heldout4_run_loads_as_a_scenario(tmp_path: Path) -> None:
    """Parse only: each run becomes the one-phase scenario scripts/allin_check.py simulates
    (heldout_sets.check_runs_load; nothing is simulated)."""
    rows = check_runs_load(HELDOUT4_DIR, "H4", HELDOUT4, tmp_path)
    # Five runs were found (three small), short of the eight (four small) aimed at: the README
    # says which sources were looked at and why they were not used.
    assert len(rows) >= 5
    assert sum(row["scale_class"] == "small" for row in rows) >= 3
    assert sum(row["scale_class"] == "large" for row in rows) >= 2


def test_every_heldout4_run_states_what_its_figure_measures() -> None:
    """heldout3's training columns, figure_basis written for every run."""
    check_figure_basis_written(HELDOUT4_DIR, ROOT / "validation" / "heldout3" / "training_runs.csv")


def test_every_heldout4_serving_row_parses_for_the_predictors() -> None:
    """Parse only: each serving row names a preset, a catalog GPU, a costsim engine, precision
    and quantization, a kind, mode and unit the predictors of scripts/published_table.py handle,
    numbers where they need them, and a request-length source (no prediction is made)."""
    rows = _serving_rows()
    with HELDOUT_SERVING_CSV.open(encoding="utf-8") as handle:
        assert list(rows[0]) == [*(csv.DictReader(handle).fieldnames or []), "dataset"]
    assert len(rows) >= 24
    assert sum(row["kind"] == "card-ratio" for row in rows) >= 2
    assert len({row["costsim_engine"] for row in rows}) >= 3
    assert len({row["gpu"] for row in rows if row["kind"] != "card-ratio"}) >= 6
    check_serving_rows(rows, "HS4", HELDOUT4, with_dataset=True)


def test_the_readers_ignore_the_dataset_column() -> None:
    """The extra last column reaches the readers as one more key and changes no other cell:
    read_rows (csv.DictReader) hands every row of serving.csv through with heldout3's keys
    intact."""
    rows = _serving_rows()
    with (HELDOUT4_DIR / "serving.csv").open(encoding="utf-8") as handle:
        raw = list(csv.reader(handle))
    assert raw[0][-1] == "dataset"
    assert len(rows) == len(raw) - 1
    for row, cells_ in zip(rows, raw[1:], strict=True):
        assert list(row.values()) == cells_


def test_the_heldout_scripts_accept_the_heldout4_folder() -> None:
    """--heldout-dir validation/heldout4 passes the scripts' folder checks (the files are there);
    without --heldout the option is refused with exit 2, as for every held-out folder."""
    from scripts.allin_check import main as allin_main
    from scripts.validation_table import main as table_main

    for name in ("serving.csv", "training_runs.csv"):
        assert (HELDOUT4_DIR / name).is_file()
    for main in (allin_main, table_main):
        with pytest.raises(SystemExit) as stopped:
            main(["--heldout-dir", str(HELDOUT4_DIR)])
        assert stopped.value.code == 2
