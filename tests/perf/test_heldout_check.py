"""The held-out check of issue 18 item 4 (validation/heldout/): its figures stay out of the data
the models are built and tested on, and the script that rates them works. The held-out result
itself is not asserted here: it is run once, after every model change (docs/performance.md)."""

from __future__ import annotations

import csv
from pathlib import Path

from costsim.catalog.perf_defaults import perf_defaults
from scripts.allin_check import HELDOUT, heldout_runs, scenario_mapping
from scripts.validation_table import HELDOUT_SERVING_CSV, heldout_serving

ROOT = Path(__file__).parents[2]
HELDOUT_DIR = ROOT / "validation" / "heldout"


def _cells(folder: Path) -> set[str]:
    cells: set[str] = set()
    for path in folder.rglob("*.csv"):
        with path.open(encoding="utf-8") as handle:
            for row in csv.reader(handle):
                cells.update(cell.strip() for cell in row)
    return cells


def test_no_held_out_figure_is_in_the_model_or_test_data() -> None:
    """Every held-out figure (GPU-hours, tokens/s) is absent from costsim/data and tests/data:
    the reserved sources never reached the calibration or the fit/check rows."""
    figures = [row["published_gpu_hours"] for row in heldout_runs()]
    with HELDOUT_SERVING_CSV.open(encoding="utf-8") as handle:
        figures += [row["figure"] for row in csv.DictReader(handle)]
    assert len(figures) >= 30
    used = _cells(ROOT / "costsim" / "data") | _cells(ROOT / "tests" / "data")
    # Figures of four digits or fewer (192, 62.5, 6144) also name unrelated things (a GPU count,
    # a memory size); 184320 is also A12's own figure, StableLM-3B's 256 GPUs x 30 days x 24 h.
    distinctive = [f for f in figures if len(f.replace(".", "")) >= 5 and f != "184320"]
    assert len(distinctive) >= 15
    assert not [f for f in distinctive if f in used]


def test_held_out_runs_build_their_scenarios_from_the_held_out_folder() -> None:
    rows = heldout_runs()
    assert {row["split"] for row in rows} == {HELDOUT}
    assert len(rows) >= 8
    for row in rows:
        model = scenario_mapping(row, horizon_months=12)["models"]["model"]  # type: ignore[index]
        if "arch" in model:
            assert Path(model["arch"]).is_relative_to(HELDOUT_DIR / "architectures")
            assert Path(model["arch"]).is_file()


def test_the_serving_rating_counts_rows_within_tolerance(tmp_path: Path) -> None:
    """The held-out serving table on a sample file written here in its format: one row the
    model meets (its own prediction as the figure) and one ten times off."""
    with HELDOUT_SERVING_CSV.open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = list(reader.fieldnames or [])
        first = next(reader)
    sample = tmp_path / "serving.csv"
    defaults = perf_defaults()
    with sample.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerow({**first, "id": "T1", "figure": "1"})
    # the model's own figure for the row, then a row ten times off
    cells, _ = heldout_serving(sample, defaults)
    predicted = float(cells[0][8].replace(",", ""))
    with sample.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerow({**first, "id": "T1", "figure": f"{predicted:.6g}"})
        writer.writerow({**first, "id": "T2", "figure": f"{predicted * 10:.6g}"})
    cells, summary = heldout_serving(sample, defaults)
    assert [c[11] for c in cells] == ["yes", "NO"]
    assert "1/2 within tolerance (missed" in summary
