"""The fifth held-out set of issue 18 item 4 (validation/heldout5/, gathered blind on 2026-12-02).

Rated once by the lead with `scripts/validation_table.py --heldout --heldout-dir
validation/heldout5` (and `scripts/allin_check.py --heldout --heldout-dir validation/heldout5`).
These tests only check that the set's figures and sources stay out of the data the models are
built and tested on, that every row loads through the scripts' readers, and that the set has the
shape its README states (sources, shares, kinds). No prediction is computed for any row here.
serving.csv has heldout4's columns, `dataset` last."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from scripts.allin_check import heldout_runs
from scripts.published_table import read_rows
from tests.perf.heldout_sets import (
    absent_from_data,
    check_figure_basis_written,
    check_runs_load,
    check_serving_rows,
    texts,
)

ROOT = Path(__file__).parents[2]
HELDOUT5_DIR = ROOT / "validation" / "heldout5"
HELDOUT5 = "heldout5"
# Words naming each heldout5 source; none may appear in the model's or the tests' data.
HELDOUT5_SOURCE_MARKERS = (
    "tech-grandpa", "janhq", "benchmarking-nvidia-tensorrt-llm", "bencyna", "hpml-llama2-tgi",
    "quack-ai", "Nkluge-correa", "Tucano", "Rijgersberg", "GEITje")
# The request-length sources the `dataset` column may name (as in the fourth set).
# Each serving group's source (README, "How sources were chosen"): one public repository each.
GROUP_SOURCES = (("llmperf-sglang-", "tech-grandpa/llmperf"), ("jan-", "janhq/jan"),
                 ("hpml-vllm-", "bencyna/hpml-llama2-tgi"), ("quack-", "quack-ai/companion"))
# The brief's cap on one source's share of the serving rows.
MAX_SOURCE_SHARE = 0.40


def _serving_rows() -> list[dict[str, str]]:
    return read_rows(HELDOUT5_DIR / "serving.csv")


def _source_of(row: dict[str, str]) -> str:
    sources = [name for prefix, name in GROUP_SOURCES if row["group"].startswith(prefix)]
    assert len(sources) == 1, row["id"]
    return sources[0]


def test_no_heldout5_figure_or_source_is_in_the_model_or_test_data() -> None:
    """Every distinctive heldout5 figure is absent from costsim/data and tests/data, and no data
    file there names a heldout5 source."""
    figures = [row["published_gpu_hours"] for row in heldout_runs(HELDOUT5_DIR)]
    # Card ratios are left out: four-decimal fractions collide by chance with unrelated cells,
    # and each ratio is derived from two serving rows whose figures are checked here.
    figures += [row["figure"] for row in _serving_rows() if row["kind"] != "card-ratio"]
    assert len(figures) >= 40
    assert sum(len(f.replace(".", "")) >= 5 for f in figures) >= 10
    assert not absent_from_data(figures, HELDOUT5_SOURCE_MARKERS, ROOT)


def test_the_marker_check_catches_a_heldout5_source_in_a_data_file(tmp_path: Path) -> None:
    """The marker list does its job: a data folder naming a heldout5 source is caught."""
    (tmp_path / "rows.csv").write_text(
        "id,source\nX1,bencyna/hpml-llama2-tgi summary.csv\n", encoding="utf-8")
    data = texts(tmp_path)
    assert [m for m in HELDOUT5_SOURCE_MARKERS if m in data] == ["bencyna", "hpml-llama2-tgi"]


def test_every_heldout5_run_loads_as_a_scenario(tmp_path: Path) -> None:
    """Parse only: each run becomes the one-phase scenario scripts/allin_check.py simulates
    (heldout_sets.check_runs_load; nothing is simulated)."""
    rows = check_runs_load(HELDOUT5_DIR, "H5", HELDOUT5, tmp_path)
    # Five runs from two sources were found (four small, one large), short of the eight runs
    # from three sources (two large) aimed at: the README says what was looked at and why
    # it was not used.
    assert len(rows) >= 5
    assert sum(row["scale_class"] == "small" for row in rows) >= 4
    assert sum(row["scale_class"] == "large" for row in rows) >= 1


def test_every_heldout5_run_states_what_its_figure_measures() -> None:
    """heldout3's training columns, figure_basis written for every run."""
    check_figure_basis_written(HELDOUT5_DIR, ROOT / "validation" / "heldout3" / "training_runs.csv")


def test_every_heldout5_serving_row_parses_for_the_predictors() -> None:
    """Parse only: each serving row names a preset, a catalog GPU, a costsim engine, precision
    and quantization, a kind, mode and unit the predictors of scripts/published_table.py handle,
    numbers where they need them, and a request-length source (no prediction is made)."""
    rows = _serving_rows()
    with (ROOT / "validation" / "heldout4" / "serving.csv").open(encoding="utf-8") as handle:
        assert list(rows[0]) == list(csv.DictReader(handle).fieldnames or [])
    assert len(rows) >= 30
    assert sum(row["kind"] == "card-ratio" for row in rows) >= 2
    assert len({row["costsim_engine"] for row in rows}) >= 4
    assert len({row["gpu"] for row in rows if row["kind"] != "card-ratio"}) >= 6
    check_serving_rows(rows, "HS5", HELDOUT5, with_dataset=True)


def test_the_serving_rows_come_from_four_sources_none_over_its_share() -> None:
    """Every serving group belongs to one of the README's four sources, a card ratio divides two
    rows of its own source, and no source holds more than 40 % of the rows."""
    rows = _serving_rows()
    by_id = {row["id"]: row for row in rows}
    shares = Counter(_source_of(row) for row in rows)
    assert len(shares) >= 4
    assert max(shares.values()) <= MAX_SOURCE_SHARE * len(rows)
    for row in rows:
        if row["kind"] == "card-ratio":
            assert {_source_of(by_id[part]) for part in row["ratio_of"].split("/")} == {
                _source_of(row)}, row["id"]


def test_the_source_share_check_catches_a_dominant_source() -> None:
    """The share check can fail: a set whose rows all come from one source is over the cap."""
    rows = [{"id": f"X{i}", "group": "hpml-vllm-l4-x"} for i in range(10)]
    shares = Counter(_source_of(row) for row in rows)
    assert max(shares.values()) > MAX_SOURCE_SHARE * len(rows)


def test_the_heldout_scripts_accept_the_heldout5_folder() -> None:
    """--heldout-dir validation/heldout5 passes the scripts' folder checks (the files are there);
    without --heldout the option is refused with exit 2, as for every held-out folder."""
    from scripts.allin_check import main as allin_main
    from scripts.validation_table import main as table_main

    for name in ("serving.csv", "training_runs.csv"):
        assert (HELDOUT5_DIR / name).is_file()
    for main in (allin_main, table_main):
        with pytest.raises(SystemExit) as stopped:
            main(["--heldout-dir", str(HELDOUT5_DIR)])
        assert stopped.value.code == 2
