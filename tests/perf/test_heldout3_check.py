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

from scripts.allin_check import ALL_IN, STEADY, figure_basis, heldout_runs
from scripts.published_table import read_rows
from scripts.validation_table import HELDOUT_SERVING_CSV
from tests.perf.heldout_sets import cells, check_run_loads, check_serving_row, texts

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
    """Each heldout3 serving row appears once in serving_published.csv with its figure, shape,
    engine and source unchanged, a new id (a card ratio divides the new ids of its rows), the
    rule for added rows, and a note saying it was rated as held out before it was added."""
    from scripts.published_table import SERVING_CSV, SERVING_NEW_SPLIT_RULE

    published = read_rows(SERVING_CSV)
    seen = {row["notes"][len(SEEN_MARK):].split(",")[0]: row for row in published
            if row["notes"].startswith(SEEN_MARK)}
    heldout = read_rows(HELDOUT3_DIR / "serving.csv")
    assert set(seen) == {row["id"] for row in heldout}
    same = ("kind", "model", "gpu", "gpus", "engine", "costsim_engine", "precision", "quant",
            "tp", "prompt_tokens", "output_tokens", "concurrency", "mode", "figure", "unit",
            "tolerance", "group", "source", "source_date")
    for row in heldout:
        copy = seen[row["id"]]
        assert {key: copy[key] for key in same} == {key: row[key] for key in same}, row["id"]
        assert copy["split"] in {"fit", "check"}
        assert copy["split_rule"] == SERVING_NEW_SPLIT_RULE
        assert copy["notes"].endswith(row["notes"])
        assert not copy["id"].startswith("HS")
        if row["ratio_of"]:
            parts = [seen[part]["id"] for part in row["ratio_of"].split("/")]
            assert copy["ratio_of"] == "/".join(parts), row["id"]


def test_no_heldout3_training_figure_or_source_is_in_the_model_or_test_data() -> None:
    """The training runs stayed where they were: their distinctive GPU-hours are absent from
    costsim/data and tests/data, and no data file there names a heldout3 training source."""
    hours = [row["published_gpu_hours"] for row in heldout_runs(HELDOUT3_DIR)]
    used = cells(ROOT / "costsim" / "data") | cells(ROOT / "tests" / "data")
    # 24576 (H3-07: 1,024 GPUs x 24 h) is also a 24 GiB card's capacity in MiB in gpus.csv.
    distinctive = [h for h in hours if len(h.replace(".", "")) >= 5 and h != "24576"]
    assert len(distinctive) >= 3
    assert not [h for h in distinctive if h in used]
    data = texts(ROOT / "costsim" / "data") + texts(ROOT / "tests" / "data")
    assert not [marker for marker in HELDOUT3_SOURCE_MARKERS if marker in data]


def test_the_marker_check_catches_a_heldout3_source_in_a_data_file(tmp_path: Path) -> None:
    """The marker list does its job: a data folder naming a heldout3 training source is caught."""
    (tmp_path / "rows.csv").write_text(
        "id,source\nX1,Llemma 7B (arXiv 2310.10631)\n", encoding="utf-8")
    data = texts(tmp_path)
    assert [m for m in HELDOUT3_SOURCE_MARKERS if m in data] == ["Llemma", "2310.10631"]


def test_every_heldout3_run_loads_as_a_scenario(tmp_path: Path) -> None:
    """Parse only: each run becomes the one-phase scenario scripts/allin_check.py simulates, its
    architecture read from validation/heldout3/architectures (or a costsim preset) and the
    scenario through costsim's own loader (nothing is simulated)."""
    rows = heldout_runs(HELDOUT3_DIR)
    assert [row["id"] for row in rows] == [f"H3-{i:02d}" for i in range(1, len(rows) + 1)]
    assert {row["split"] for row in rows} == {HELDOUT3}
    assert len(rows) >= 7
    assert sum(row["scale_class"] == "small" for row in rows) >= 4
    for row in rows:
        assert figure_basis(row) in (STEADY, ALL_IN), row["id"]
        check_run_loads(row, HELDOUT3_DIR / "architectures", tmp_path)


def test_every_heldout3_run_states_what_its_figure_measures() -> None:
    """The figure_basis column is written for every run (FIGURE_BASIS_RULE of
    scripts/allin_check.py), not left to the reader's all-in default."""
    with (HELDOUT3_DIR / "training_runs.csv").open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert "figure_basis" in (reader.fieldnames or [])
        assert all(row["figure_basis"] in (STEADY, ALL_IN) for row in reader)


def test_every_heldout3_serving_row_parses_for_the_predictors() -> None:
    """Parse only: each serving row names a preset, a catalog GPU, a costsim engine, precision
    and quantization, a kind, mode and unit the predictors of scripts/published_table.py handle,
    and numbers where they need them (no prediction is made)."""
    rows = read_rows(HELDOUT3_DIR / "serving.csv")
    with HELDOUT_SERVING_CSV.open(encoding="utf-8") as handle:
        assert list(rows[0]) == list(csv.DictReader(handle).fieldnames or [])
    assert [row["id"] for row in rows] == [f"HS3-{i:02d}" for i in range(1, len(rows) + 1)]
    assert len(rows) >= 20
    assert len({row["costsim_engine"] for row in rows}) >= 4
    assert len({row["gpu"] for row in rows if row["kind"] != "card-ratio"}) >= 4
    by_id = {row["id"]: row for row in rows}
    for row in rows:
        check_serving_row(row, by_id, HELDOUT3)
        if row["kind"] == "card-ratio":
            continue
        assert int(row["output_tokens"]) >= 1, row["id"]
        if row["prompt_tokens"]:
            assert int(row["prompt_tokens"]) >= 1
        if row["mode"] in {"static-batch", "closed-loop", "offline-burst"}:
            assert int(row["concurrency"]) >= 1, row["id"]
            assert row["prompt_tokens"], row["id"]


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
