"""What the held-out sets' tests share (tests/perf/test_heldout_check.py and
test_heldout3_check.py … test_heldout5_check.py): reading a data folder's cells and text,
checking that a rated set's copy in the calibration data is faithful and that its other figures
stayed out, and checking, without predicting anything, that a held-out serving row or training
run is something the rating scripts can read."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from scripts.allin_check import scenario_mapping

# What scripts/published_table.py's serving predictors accept (check_serving, _predict_plain).
SERVING_KINDS = {"batch1-decode", "batch1-ttft", "max-throughput", "latency-at-rate", "card-ratio"}
SERVING_MODES = {"idle", "static-batch", "closed-loop", "in-flight", "offline-burst"}
SERVING_UNITS = {"output_tokens_per_s", "ms_per_token_median", "ms", "ratio", "requests_per_s"}


def cells(folder: Path) -> set[str]:
    """Every cell of every CSV under ``folder``, stripped."""
    found: set[str] = set()
    for path in folder.rglob("*.csv"):
        with path.open(encoding="utf-8") as handle:
            for row in csv.reader(handle):
                found.update(cell.strip() for cell in row)
    return found


def texts(folder: Path) -> str:
    """Every file under ``folder`` as text, joined."""
    return "\n".join(path.read_text(encoding="utf-8", errors="replace")
                     for path in sorted(folder.rglob("*")) if path.is_file())


def check_serving_row(row: dict[str, str], by_id: dict[str, dict[str, str]], split: str) -> None:
    """A serving row names a preset, a catalog GPU, a costsim engine, precision and
    quantization, a kind, mode and unit the predictors handle, and numbers where they need
    them; a card ratio names the two rows it divides, on its own GPUs."""
    from costsim.catalog.gpus import get_gpu
    from costsim.catalog.models import load_preset
    from costsim.domain.precision import Dtype
    from costsim.domain.workload import Quant, ServingEngine
    from scripts.published_table import _tolerance

    assert row["split"] == split, row["id"]
    assert row["modelled"] == "yes", row["id"]
    assert row["kind"] in SERVING_KINDS, row["id"]
    assert row["mode"] in SERVING_MODES, row["id"]
    assert row["unit"] in SERVING_UNITS, row["id"]
    assert float(row["figure"]) > 0, row["id"]
    assert _tolerance(row["tolerance"]) is not None, row["id"]
    if row["kind"] == "card-ratio":
        parts = row["ratio_of"].split("/")
        assert len(parts) == 2, row["id"]
        assert all(part in by_id for part in parts), row["id"]
        assert [by_id[part]["gpu"] for part in parts] == row["gpu"].split("/"), row["id"]
        return
    load_preset(row["model"])
    get_gpu(row["gpu"])
    ServingEngine(row["costsim_engine"])
    Dtype(row["precision"])
    Quant(row["quant"])
    assert int(row["gpus"]) == int(row["tp"]) >= 1, row["id"]


def check_run_loads(row: dict[str, str], architectures: Path, folder: Path) -> None:
    """The run becomes the one-phase scenario scripts/allin_check.py simulates, its architecture
    read from ``architectures`` (or a costsim preset) and the scenario file written to
    ``folder`` read by costsim's own loader (nothing is simulated)."""
    import yaml

    from costsim.catalog.gpus import get_gpu
    from costsim.catalog.models import load_architecture_file, load_preset
    from costsim.cli.scenario_names import load_scenario_file

    get_gpu(row["gpu"])
    mapping = scenario_mapping(row, horizon_months=12)
    model = mapping["models"]["model"]  # type: ignore[index]
    if "arch" in model:
        arch = Path(model["arch"])
        assert arch.is_relative_to(architectures), row["id"]
        load_architecture_file(arch)
    else:
        load_preset(model["preset"])
    path = folder / f"{row['id']}.yaml"
    path.write_text(yaml.safe_dump(mapping, sort_keys=False), encoding="utf-8")
    load_scenario_file(path)


# The request-length source of a serving row (the optional last column `dataset`).
DATASET = re.compile(r"^(fixed|sharegpt|other:[a-z0-9][a-z0-9._-]*)$")
# The serving columns every copied held-out row keeps unchanged in serving_published.csv.
COPIED_COLUMNS = ("kind", "model", "gpu", "gpus", "engine", "costsim_engine", "precision",
                  "quant", "tp", "prompt_tokens", "output_tokens", "concurrency", "mode",
                  "figure", "unit", "tolerance", "source", "source_date")


def seen_copies(heldout: list[dict[str, str]], seen_mark: str) -> dict[str, dict[str, str]]:
    """The rows of tests/data/serving_published.csv copied from a rated held-out set, by their
    held-out id: each appears once with its figure, shape, engine and source unchanged, a new
    id, the rule for added rows and its held-out notes after the seen mark; a card ratio
    divides the new ids of its rows."""
    from scripts.published_table import SERVING_CSV, SERVING_NEW_SPLIT_RULE, read_rows

    seen = {row["notes"][len(seen_mark):].split(",")[0]: row for row in read_rows(SERVING_CSV)
            if row["notes"].startswith(seen_mark)}
    assert set(seen) == {row["id"] for row in heldout}
    for row in heldout:
        copy = seen[row["id"]]
        assert ({key: copy[key] for key in COPIED_COLUMNS}
                == {key: row[key] for key in COPIED_COLUMNS}), row["id"]
        assert copy["split"] in {"fit", "check"}
        assert copy["split_rule"] == SERVING_NEW_SPLIT_RULE
        assert copy["notes"].endswith(row["notes"])
        assert not copy["id"].startswith("HS")
        if row["ratio_of"]:
            parts = [seen[part]["id"] for part in row["ratio_of"].split("/")]
            assert copy["ratio_of"] == "/".join(parts), row["id"]
    return seen


def absent_from_data(figures: list[str], markers: tuple[str, ...], root: Path,
                     *, coincidences: tuple[str, ...] = ()) -> list[str]:
    """``figures`` of five digits or more (the shorter also name unrelated things: a price, a
    latency) that appear as a cell of costsim/data or tests/data, plus the source ``markers``
    found in their text: what must be empty for a held-out set's figures and sources to have
    stayed out of the model's and the tests' data. ``coincidences``: figures known to equal an
    unrelated cell (24576 is a 24 GiB card's MiB)."""
    used = cells(root / "costsim" / "data") | cells(root / "tests" / "data")
    distinctive = [f for f in figures if len(f.replace(".", "")) >= 5 and f not in coincidences]
    data = texts(root / "costsim" / "data") + texts(root / "tests" / "data")
    return [f for f in distinctive if f in used] + [m for m in markers if m in data]


def check_runs_load(folder: Path, prefix: str, split: str,
                    tmp_path: Path) -> list[dict[str, str]]:
    """Every training run of ``folder`` is numbered ``prefix``-01, -02, … in ``split``, states
    what its figure measures and loads as the one-phase scenario scripts/allin_check.py
    simulates (nothing is simulated); the rows, for the caller's counts."""
    from scripts.allin_check import ALL_IN, STEADY, figure_basis, heldout_runs

    rows = heldout_runs(folder)
    assert [row["id"] for row in rows] == [f"{prefix}-{i:02d}" for i in range(1, len(rows) + 1)]
    assert {row["split"] for row in rows} == {split}
    for row in rows:
        assert figure_basis(row) in (STEADY, ALL_IN), row["id"]
        check_run_loads(row, folder / "architectures", tmp_path)
    return rows


def check_figure_basis_written(folder: Path, columns_of: Path | None = None) -> None:
    """The training file writes figure_basis for every run (FIGURE_BASIS_RULE of
    scripts/allin_check.py), not left to the reader's all-in default; with ``columns_of``, it
    has exactly that file's columns."""
    from scripts.allin_check import ALL_IN, STEADY

    with (folder / "training_runs.csv").open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert "figure_basis" in (reader.fieldnames or [])
        if columns_of is not None:
            with columns_of.open(encoding="utf-8") as other:
                assert reader.fieldnames == csv.DictReader(other).fieldnames
        assert all(row["figure_basis"] in (STEADY, ALL_IN) for row in reader)


def check_serving_rows(rows: list[dict[str, str]], prefix: str, split: str, *,
                       with_dataset: bool = False) -> None:
    """Every serving row is numbered ``prefix``-01, -02, … and parses for the predictors
    (:func:`check_serving_row`); ``with_dataset``: each names a request-length source, a card
    ratio its rows', and a closed loop or burst its users and prompt."""
    assert [row["id"] for row in rows] == [f"{prefix}-{i:02d}" for i in range(1, len(rows) + 1)]
    by_id = {row["id"]: row for row in rows}
    for row in rows:
        check_serving_row(row, by_id, split)
        if not with_dataset:
            continue
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
