"""The training run CSV (DESIGN §12): one row a measured steady-state rate.

Columns (header required, any order): ``model`` (a preset, or a config.json path relative to
the CSV), ``gpu`` (any accepted name, nvidia-smi's included), ``gpus`` (the whole run's count),
and optionally ``framework``, ``precision``, ``seq_len``, ``global_batch_tokens``, at least one
of ``tokens_per_s`` (whole fleet, steady state) / ``step_time_s`` / ``mfu`` (a share, 0.45, or
a percentage, 45%), and ``source``. Values given beside the file (flags, a scenario mapping)
fill empty cells; a cell's own value wins. Every problem names the file, line and column.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from costsim.catalog.training_fields import (
    MAX_GPUS,
    MAX_SEQ_LEN,
    check_point,
    framework_of,
    gpu_of,
    model_of,
    parse_number,
    precision_of,
    whole,
)
from costsim.domain.architecture import Architecture
from costsim.domain.measurements import RunDetails, TrainingPoint
from costsim.errors import InputError, suggest

REQUIRED = ("model", "gpu", "gpus")
OPTIONAL = ("framework", "precision", "seq_len", "global_batch_tokens", "tokens_per_s",
            "step_time_s", "mfu", "source")
RATES = ("tokens_per_s", "step_time_s", "mfu")
ALIASES = {"num_gpus": "gpus", "gpu_count": "gpus", "seq_length": "seq_len",
           "tokens_per_second": "tokens_per_s", "step_time": "step_time_s"}


class _Row:
    """One data line of the file, with positions for error messages."""

    def __init__(self, name: str, line: int, cells: list[str], columns: dict[str, int]) -> None:
        self.name, self.line, self.cells, self.columns = name, line, cells, columns

    def cell(self, column: str) -> str:
        index = self.columns.get(column)
        return self.cells[index].strip() if index is not None and index < len(self.cells) else ""

    def where(self, column: str) -> str:
        index = self.columns.get(column)
        return f"{self.name}:{self.line}" + (f":{index + 1}" if index is not None else "")

    def number(self, column: str, *, most: float) -> float | None:
        text = self.cell(column)
        if not text:
            return None
        value = parse_number(text)
        if value is None:
            raise InputError(self.where(column), column, f"expected a finite number, got {text!r}")
        if value <= 0:
            raise InputError(self.where(column), column, f"must be > 0, got {text!r}")
        if value > most:
            raise InputError(self.where(column), column, f"must be at most {most:g}, got {text!r}")
        return value


def _columns(name: str, header: list[str], details: RunDetails) -> dict[str, int]:
    columns: dict[str, int] = {}
    for index, raw in enumerate(header):
        column = ALIASES.get(raw.strip().lower(), raw.strip().lower())
        where = f"{name}:1:{index + 1}"
        if not column:
            raise InputError(where, "", "empty column name (a trailing comma?)")
        if column not in (*REQUIRED, *OPTIONAL):
            hint = suggest(column, (*REQUIRED, *OPTIONAL))
            extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            raise InputError(where, raw.strip(), f"unknown column{extra} (known: "
                             f"{', '.join((*REQUIRED, *OPTIONAL))})")
        if column in columns:
            raise InputError(where, raw.strip(), f"duplicate column (same as column "
                                                 f"{columns[column] + 1})")
        columns[column] = index
    given = {"model": details.model or details.architecture, "gpu": details.gpu,
             "gpus": details.gpus}
    for column in REQUIRED:
        if column not in columns and not given[column]:
            raise InputError(f"{name}:1", column, "missing required column")
    if not any(rate in columns for rate in RATES):
        raise InputError(f"{name}:1", "tokens_per_s", "need a tokens_per_s, step_time_s or "
                                                      "mfu column")
    return columns


def _mfu(row: _Row) -> float | None:
    text = row.cell("mfu")
    if not text:
        return None
    percent = text.endswith("%")
    value = parse_number(text.rstrip("%"))
    if value is None:
        raise InputError(row.where("mfu"), "mfu", f"expected a share or a percentage, got "
                                                  f"{text!r}")
    share = value / 100 if percent else value
    if not 0 < share <= 1:
        raise InputError(row.where("mfu"), "mfu", f"must be in (0, 1] (a share: 0.45, or 45%), "
                                                  f"got {text!r}")
    return share


def _point(row: _Row, base_dir: Path, details: RunDetails,
           models: dict[str, tuple[str, Architecture]]) -> TrainingPoint:
    cell = row.cell
    if cell("model"):  # a config path in a cell is relative to the CSV
        name, arch = model_of(cell("model"), base_dir, row.where("model"), cache=models)
    elif details.architecture is None:
        if not details.model:
            raise InputError(row.where("model"), "model", "a value is required")
        name, arch = model_of(details.model, Path(), details.label("model"))
    else:
        arch = details.architecture
        name = details.model or arch.name
    gpu_text = cell("gpu") or details.gpu
    if not gpu_text:
        raise InputError(row.where("gpu"), "gpu", "a value is required")
    gpu = gpu_of(gpu_text, row.where("gpu"))
    gpus_value = row.number("gpus", most=MAX_GPUS)
    if gpus_value is None and details.gpus is None:
        raise InputError(row.where("gpus"), "gpus", "a value is required (the run's GPU count)")
    gpus = whole(gpus_value, row.where("gpus"), "gpus", MAX_GPUS) if gpus_value else details.gpus
    seq_value = row.number("seq_len", most=MAX_SEQ_LEN)
    seq_len = whole(seq_value, row.where("seq_len"), "seq_len", MAX_SEQ_LEN) if seq_value else (
        details.seq_len)
    framework_text = cell("framework") or details.framework
    precision_text = cell("precision") or details.precision
    own = cell("source")
    assert gpus is not None
    point = TrainingPoint(
        model=name, architecture=arch, gpu=gpu.name, gpus=gpus,
        framework=(framework_of(framework_text, row.where("framework"))
                   if framework_text else None),
        precision=(precision_of(precision_text, gpu, row.where("precision"))
                   if precision_text else None),
        seq_len=seq_len,
        global_batch_tokens=row.number("global_batch_tokens", most=1e12),
        tokens_per_s=row.number("tokens_per_s", most=1e15),
        step_time_s=row.number("step_time_s", most=1e7),
        mfu=_mfu(row),
        source=f"{row.name} line {row.line}" + (f" ({own})" if own else ""))
    return check_point(point, f"{row.name}:{row.line}")


def read_training_csv(path: Path, text: str, details: RunDetails) -> tuple[TrainingPoint, ...]:
    """Every row of the training run CSV ``text`` (read from ``path``)."""
    name = str(path)
    records = list(csv.reader(io.StringIO(text)))
    if not records or not any(cell.strip() for cell in records[0]):
        raise InputError(f"{name}:1", "", "expected the CSV header on line 1")
    columns = _columns(name, records[0], details)
    reader = csv.reader(io.StringIO(text))
    next(reader)
    points = []
    models: dict[str, tuple[str, Architecture]] = {}
    for cells in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in cells) or cells[0].lstrip().startswith("#"):
            continue
        if len(cells) > len(records[0]):
            raise InputError(f"{name}:{line}", "", f"{len(cells)} cells, the header has "
                                                   f"{len(records[0])}")
        points.append(_point(_Row(name, line, cells, columns), path.parent, details, models))
    if not points:
        raise InputError(name, "", "no data rows after the header")
    return tuple(points)
