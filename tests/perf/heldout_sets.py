"""What the held-out sets' tests share (tests/perf/test_heldout_check.py, test_heldout3_check.py):
reading a data folder's cells and text, and checking, without predicting anything, that a
held-out serving row or training run is something the rating scripts can read."""

from __future__ import annotations

import csv
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
