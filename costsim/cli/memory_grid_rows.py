"""One grid row at a time: convert, resolve, validate and encode each row.

This is the reference path of ``costsim memory --grid`` and the fallback of the bulk path
(:mod:`costsim.cli.memory_grid_bulk`) for the rows it cannot take.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from costsim.cli.flags import (
    CONVERTERS,
    add_all_memory_args,
)
from costsim.cli.layout_args import (
    build_inference_setup,
    build_training_setup,
    resolve_architecture,
    resolve_gpu,
    resolve_task,
)
from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.workload import Task
from costsim.errors import CostsimError, InputError
from costsim.memory.core import (
    ComponentArrays,
)
from costsim.memory.estimate import component_arrays_for, encode_inference, encode_training
from costsim.memory.runtime import VERDICT_BY_CODE

MAX_GRID_ROWS = 5_000_000
GRID_OUTPUT_COLUMNS = ("params_total", "weights_bytes", "master_weights_bytes",
                       "gradients_bytes", "optimizer_bytes", "activations_bytes",
                       "kv_cache_bytes", "runtime_overhead_bytes", "total_bytes", "usable_bytes",
                       "verdict", "error")
# Byte components of the output, in GRID_OUTPUT_COLUMNS order, and their ComponentArrays field.
BYTE_FIELDS = (("weights_bytes", "weights"), ("master_weights_bytes", "master_weights"),
                ("gradients_bytes", "gradients"), ("optimizer_bytes", "optimizer"),
                ("activations_bytes", "activations"), ("kv_cache_bytes", "kv_cache"),
                ("runtime_overhead_bytes", "runtime_overhead"), ("total_bytes", "total"),
                ("usable_bytes", "usable"))
# Whole-number flags (destinations) checked and encoded in bulk; every other flag is a group key.
NUMERIC_DESTS = ("zero", "tp", "pp", "dp", "gpus", "micro_batch", "seq_len", "grad_accum",
                 "batch", "context", "prompt_tokens", "output_tokens")
MISSING = -1  # a numeric cell left empty (every whole-number flag is >= 0)
# The largest byte count a cell can hold: results are written as whole numbers from int64.
MAX_RESULT_BYTES = float(2**63 - 1024)  # the largest float64 below 2^63
OUT_OF_RANGE_MESSAGE = ("the result is out of range: more than 2^63 bytes (8 EiB) per GPU, "
                        "which no GPU holds; check this row's sizes (micro_batch, seq_len, "
                        "batch, context, the model)")
# A row that raises anything but a CostsimError or ValueError has hit a costsim bug: the row gets
# this message (and the exception) in its error cell, the other rows run, and the command says so
# on stderr and exits 1 (memory_cmd), so that a bug is neither fatal to the run nor silent.
INTERNAL_ERROR_PREFIX = "internal error (a costsim bug, please report it with this row)"

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
Encoded = tuple[bool, dict[str, float], int]  # (inference?, encoded row, params_total)


def flag_defaults() -> dict[str, Any]:
    """Every ``memory`` flag's destination and default, read off the flag definitions."""
    parser = argparse.ArgumentParser(add_help=False)
    add_all_memory_args(parser)
    return vars(parser.parse_args([]))


def column_flag(column: str) -> str:
    """The flag a grid column names (``Micro_Batch`` → ``micro-batch``)."""
    return column.strip().lower().replace("_", "-")


def is_blank(text: str | None) -> bool:
    return text is None or str(text).strip() == ""


def row_message(exc: Exception) -> str:
    """The ``error`` cell of a row whose conversion, resolution or validation raised ``exc``."""
    if isinstance(exc, CostsimError | ValueError):
        return str(exc)
    return f"{INTERNAL_ERROR_PREFIX}: {type(exc).__name__}: {exc}"


def out_of_range(arrays: ComponentArrays) -> BoolArray:
    """Rows whose byte counts are not finite or do not fit a 64-bit whole number (their cells
    would be garbage): they get :data:`OUT_OF_RANGE_MESSAGE` instead of results."""
    stacked = np.stack([getattr(arrays, name) for _, name in BYTE_FIELDS])
    with np.errstate(invalid="ignore"):
        bad: BoolArray = ~np.all(np.isfinite(stacked) & (np.abs(stacked) <= MAX_RESULT_BYTES),
                                 axis=0)
    return bad


# ----------------------------------------------------------------------------- one row


@dataclass
class RowEncoder:
    """The one-by-one path: converts, resolves, validates and encodes one row (the reference
    for every row, and the fallback of the fast path). Architectures and GPUs are cached."""

    base_dir: Path = Path(".")
    defaults: dict[str, Any] = field(default_factory=flag_defaults)
    arch_cache: dict[tuple[str | None, str | None], tuple[Architecture, int]] = field(
        default_factory=dict)
    gpu_cache: dict[str, GpuSpec] = field(default_factory=dict)

    def values(self, raw: Mapping[Any, str | None]) -> dict[str, Any]:
        """Flag destination → value: the defaults, overridden by the row's non-empty cells."""
        values = dict(self.defaults)
        for column, text in raw.items():
            if column is None or text is None or str(text).strip() == "":
                continue
            flag = column_flag(column)
            values[flag.replace("-", "_")] = CONVERTERS[flag](text)
        return values

    def objects(self, values: dict[str, Any]
                ) -> tuple[argparse.Namespace, Architecture, int, GpuSpec, Task]:
        """Resolve the model (or arch), GPU and task of converted values (numbers unused)."""
        if values["model"] is not None and values["arch"] is not None:
            raise InputError("", "model", "give model or arch in a row, not both "
                                          f"(got {values['model']!r} and "
                                          f"{str(values['arch'])!r})")
        if values["arch"] is not None and not Path(values["arch"]).is_absolute():
            values["arch"] = self.base_dir / values["arch"]
        ns = argparse.Namespace(**values)
        key = (values["model"], None if values["arch"] is None else str(values["arch"]))
        if key not in self.arch_cache:
            arch = resolve_architecture(ns)[1]
            self.arch_cache[key] = (arch, arch.params().total)
        arch, params_total = self.arch_cache[key]
        if values["gpu"] not in self.gpu_cache:
            self.gpu_cache[values["gpu"]] = resolve_gpu(ns)
        gpu = self.gpu_cache[values["gpu"]]
        return ns, arch, params_total, gpu, resolve_task(ns)

    @staticmethod
    def encode(ns: argparse.Namespace, arch: Architecture, gpu: GpuSpec, task: Task
               ) -> tuple[bool, dict[str, float]]:
        """Build the setup from the flags (validating it) and encode it as one engine row."""
        if task is Task.INFER:
            return True, encode_inference(arch, gpu, build_inference_setup(ns, arch, gpu))
        return False, encode_training(arch, gpu, build_training_setup(ns, arch, gpu, task))

    def encode_row(self, raw: Mapping[Any, str | None]) -> Encoded:
        """The whole one-by-one path of one row.

        Raises:
            CostsimError / ValueError: the row's message (it goes into the ``error`` column).
        """
        ns, arch, params_total, gpu, task = self.objects(self.values(raw))
        infer, row = self.encode(ns, arch, gpu, task)
        return infer, row, params_total


def _result_columns(arrays: ComponentArrays
                    ) -> tuple[list[list[int]], list[str], list[bool]]:
    """The byte columns as Python ints (in :data:`BYTE_FIELDS` order), the verdicts, and which
    rows are out of range (their ints are meaningless)."""
    bad = out_of_range(arrays)
    as_int = [np.where(bad, 0, getattr(arrays, name)).astype("int64").tolist()
              for _, name in BYTE_FIELDS]
    verdicts = [VERDICT_BY_CODE[code].value for code in arrays.verdict_code.tolist()]
    return as_int, verdicts, bad.tolist()


def evaluate_grid(rows: list[dict[str, str]], base_dir: Path = Path(".")
                  ) -> tuple[list[dict[str, Any]], int]:
    """The reference path: encode the rows (flag-named string columns) one by one, evaluate
    them in two vectorized calls (training rows, inference rows); return the output values per
    row and the number of rows with errors."""
    encoder = RowEncoder(base_dir)
    out: list[dict[str, Any]] = [{} for _ in rows]
    encoded: dict[bool, list[tuple[int, dict[str, float], int]]] = {False: [], True: []}
    errors = 0
    # Identical rows (common in hand-made grids) are encoded once.
    seen: dict[tuple[tuple[str | None, str | None], ...], Encoded] = {}
    for index, raw in enumerate(rows):
        signature = tuple(raw.items())
        if signature in seen:
            infer, row, params_total = seen[signature]
            encoded[infer].append((index, row, params_total))
            continue
        try:
            infer, row, params_total = encoder.encode_row(raw)
        except Exception as exc:  # any bug too: see INTERNAL_ERROR_PREFIX
            errors += 1
            out[index] = {"error": row_message(exc)}
            continue
        encoded[infer].append((index, row, params_total))
        seen[signature] = (infer, row, params_total)
    for infer, items in encoded.items():
        if not items:
            continue
        as_int, verdicts, bad = _result_columns(
            component_arrays_for([row for _, row, _ in items], infer=infer))
        for position, (index, _, params_total) in enumerate(items):
            if bad[position]:
                errors += 1
                out[index] = {"error": OUT_OF_RANGE_MESSAGE}
                continue
            result: dict[str, Any] = {"params_total": params_total}
            for (name, _), values in zip(BYTE_FIELDS, as_int, strict=True):
                result[name] = values[position]
            result["verdict"] = verdicts[position]
            result["error"] = ""
            out[index] = result
    return out, errors

