"""The fifth held-out set of issue 18 item 4 (validation/heldout5/, gathered blind on 2026-12-02).

Rated once by the lead with `scripts/validation_table.py --heldout --heldout-dir
validation/heldout5` (and `scripts/allin_check.py --heldout --heldout-dir validation/heldout5`).
These tests only check that the set's figures and sources stay out of the data the models are
built and tested on, that every row loads through the scripts' readers, and that the set has the
shape its README states (sources, shares, kinds). No prediction is computed for any row here.
serving.csv has heldout4's columns, `dataset` last."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import pytest

from scripts.allin_check import ALL_IN, STEADY, figure_basis, heldout_runs
from scripts.published_table import read_rows
from tests.perf.heldout_sets import cells, check_run_loads, check_serving_row, texts

ROOT = Path(__file__).parents[2]
HELDOUT5_DIR = ROOT / "validation" / "heldout5"
HELDOUT5 = "heldout5"
# Words naming each heldout5 source; none may appear in the model's or the tests' data.
HELDOUT5_SOURCE_MARKERS = (
    "tech-grandpa", "janhq", "benchmarking-nvidia-tensorrt-llm", "bencyna", "hpml-llama2-tgi",
    "quack-ai", "Nkluge-correa", "Tucano", "Rijgersberg", "GEITje")
# The request-length sources the `dataset` column may name (as in the fourth set).
DATASET = re.compile(r"^(fixed|sharegpt|other:[a-z0-9][a-z0-9._-]*)$")
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
    used = cells(ROOT / "costsim" / "data") | cells(ROOT / "tests" / "data")
    # Figures of four digits or fewer (526, 53.33) also name unrelated things (a price, a
    # latency); the longer ones are the set's own.
    distinctive = [f for f in figures if len(f.replace(".", "")) >= 5]
    assert len(distinctive) >= 10
    assert not [f for f in distinctive if f in used]
    data = texts(ROOT / "costsim" / "data") + texts(ROOT / "tests" / "data")
    assert not [marker for marker in HELDOUT5_SOURCE_MARKERS if marker in data]


def test_the_marker_check_catches_a_heldout5_source_in_a_data_file(tmp_path: Path) -> None:
    """The marker list does its job: a data folder naming a heldout5 source is caught."""
    (tmp_path / "rows.csv").write_text(
        "id,source\nX1,bencyna/hpml-llama2-tgi summary.csv\n", encoding="utf-8")
    data = texts(tmp_path)
    assert [m for m in HELDOUT5_SOURCE_MARKERS if m in data] == ["bencyna", "hpml-llama2-tgi"]


def test_every_heldout5_run_loads_as_a_scenario(tmp_path: Path) -> None:
    """Parse only: each run becomes the one-phase scenario scripts/allin_check.py simulates, its
    architecture read from validation/heldout5/architectures (or a costsim preset) and the
    scenario through costsim's own loader (nothing is simulated)."""
    rows = heldout_runs(HELDOUT5_DIR)
    assert [row["id"] for row in rows] == [f"H5-{i:02d}" for i in range(1, len(rows) + 1)]
    assert {row["split"] for row in rows} == {HELDOUT5}
    # Five runs from two sources were found (four small, one large), short of the eight runs
    # from three sources (two large) aimed at: the README says what was looked at and why
    # it was not used.
    assert len(rows) >= 5
    assert sum(row["scale_class"] == "small" for row in rows) >= 4
    assert sum(row["scale_class"] == "large" for row in rows) >= 1
    for row in rows:
        assert figure_basis(row) in (STEADY, ALL_IN), row["id"]
        check_run_loads(row, HELDOUT5_DIR / "architectures", tmp_path)


def test_every_heldout5_run_states_what_its_figure_measures() -> None:
    """The training file has heldout3's columns, and the figure_basis column is written for every
    run (FIGURE_BASIS_RULE of scripts/allin_check.py), not left to the reader's all-in default."""
    with (ROOT / "validation" / "heldout3" / "training_runs.csv").open(encoding="utf-8") as handle:
        columns = csv.DictReader(handle).fieldnames
    with (HELDOUT5_DIR / "training_runs.csv").open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == columns
        assert all(row["figure_basis"] in (STEADY, ALL_IN) for row in reader)


def test_every_heldout5_serving_row_parses_for_the_predictors() -> None:
    """Parse only: each serving row names a preset, a catalog GPU, a costsim engine, precision
    and quantization, a kind, mode and unit the predictors of scripts/published_table.py handle,
    numbers where they need them, and a request-length source (no prediction is made)."""
    rows = _serving_rows()
    with (ROOT / "validation" / "heldout4" / "serving.csv").open(encoding="utf-8") as handle:
        assert list(rows[0]) == list(csv.DictReader(handle).fieldnames or [])
    assert [row["id"] for row in rows] == [f"HS5-{i:02d}" for i in range(1, len(rows) + 1)]
    assert len(rows) >= 30
    assert sum(row["kind"] == "card-ratio" for row in rows) >= 2
    assert len({row["costsim_engine"] for row in rows}) >= 4
    assert len({row["gpu"] for row in rows if row["kind"] != "card-ratio"}) >= 6
    by_id = {row["id"]: row for row in rows}
    for row in rows:
        check_serving_row(row, by_id, HELDOUT5)
        assert DATASET.match(row["dataset"]), row["id"]
        if row["kind"] == "card-ratio":
            assert row["dataset"] == by_id[row["ratio_of"].split("/")[0]]["dataset"], row["id"]
            continue
        assert int(row["output_tokens"]) >= 1, row["id"]
        if row["prompt_tokens"]:
            assert int(row["prompt_tokens"]) >= 1
        if row["mode"] in {"static-batch", "closed-loop", "offline-burst"}:
            assert int(row["concurrency"]) >= 1, row["id"]
            assert row["prompt_tokens"], row["id"]


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
