"""``costsim memory --grid IN.csv --out OUT.csv``: the memory of every row of a CSV grid.

Two paths give byte-identical output files (tests/cli/test_memory_grid.py):

* the **reference** path (:func:`evaluate_grid`): every row is converted, resolved into domain
  objects, validated and encoded one by one (about 100 µs a row), then all rows are evaluated
  in two vectorized calls;
* the **fast** path (:func:`evaluate_columns`, the default): each column's distinct texts are
  converted once; rows are grouped by the values that need Python objects (model or arch, GPU,
  task, precision, quantization, optimizer, bytes preset, LoRA, recompute, sp, flash attention,
  and which numeric cells are given). Each group is resolved, validated and encoded once, on a
  probe row whose numbers are always valid; the numeric columns (tp, pp, dp, gpus, zero,
  micro-batch, seq-len, grad-accum, batch, context, prompt and output tokens) are checked and
  encoded for all rows at once with numpy. A row that fails a bulk check, fails a conversion or
  belongs to a group whose probe fails after resolving its objects goes through the reference
  path, so its message is exactly the one-by-one message.

Rows are evaluated in one call for training and one for inference, in row order, as the
reference path does. The fast path reads the file with :func:`csv.reader` in one go and writes
with :func:`csv.writer` from columns, and keeps the garbage collector off the row lists (paused
while they are read, then frozen): 100k rows take about 1.5 s instead of 12 s
(``benchmarks/bench_memory.py --compare``).
"""

from __future__ import annotations

import argparse
import csv
import gc
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from costsim.cli.flags import (
    CONVERTERS,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    MAX_WHOLE_NUMBER,
    add_all_memory_args,
)
from costsim.cli.layout_args import (
    build_inference_setup,
    build_training_setup,
    default_seq_len,
    resolve_architecture,
    resolve_gpu,
    resolve_task,
)
from costsim.domain.architecture import Architecture
from costsim.domain.gpu import GpuSpec
from costsim.domain.workload import Task
from costsim.errors import CatalogError, CostsimError, InputError
from costsim.memory.core import (
    INFER_COLUMNS,
    TRAIN_COLUMNS,
    ComponentArrays,
    inference_components,
    training_components,
)
from costsim.memory.estimate import component_arrays_for, encode_inference, encode_training
from costsim.memory.runtime import DEFAULT_POLICY, VERDICT_BY_CODE

MAX_GRID_ROWS = 5_000_000
GRID_OUTPUT_COLUMNS = ("params_total", "weights_bytes", "master_weights_bytes",
                       "gradients_bytes", "optimizer_bytes", "activations_bytes",
                       "kv_cache_bytes", "runtime_overhead_bytes", "total_bytes", "usable_bytes",
                       "verdict", "error")
# Byte components of the output, in GRID_OUTPUT_COLUMNS order, and their ComponentArrays field.
_BYTE_FIELDS = (("weights_bytes", "weights"), ("master_weights_bytes", "master_weights"),
                ("gradients_bytes", "gradients"), ("optimizer_bytes", "optimizer"),
                ("activations_bytes", "activations"), ("kv_cache_bytes", "kv_cache"),
                ("runtime_overhead_bytes", "runtime_overhead"), ("total_bytes", "total"),
                ("usable_bytes", "usable"))
# Whole-number flags (destinations) checked and encoded in bulk; every other flag is a group key.
NUMERIC_DESTS = ("zero", "tp", "pp", "dp", "gpus", "micro_batch", "seq_len", "grad_accum",
                 "batch", "context", "prompt_tokens", "output_tokens")
_MISSING = -1  # a numeric cell left empty (every whole-number flag is >= 0)

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


def _blank(text: str | None) -> bool:
    return text is None or str(text).strip() == ""


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


def _result_columns(arrays: ComponentArrays) -> tuple[list[list[int]], list[str]]:
    """The byte columns as Python ints (in :data:`_BYTE_FIELDS` order) and the verdicts."""
    as_int = [getattr(arrays, name).astype("int64").tolist() for _, name in _BYTE_FIELDS]
    verdicts = [VERDICT_BY_CODE[code].value for code in arrays.verdict_code.tolist()]
    return as_int, verdicts


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
        except (CostsimError, ValueError) as exc:
            errors += 1
            out[index] = {"error": str(exc)}
            continue
        encoded[infer].append((index, row, params_total))
        seen[signature] = (infer, row, params_total)
    for infer, items in encoded.items():
        if not items:
            continue
        as_int, verdicts = _result_columns(
            component_arrays_for([row for _, row, _ in items], infer=infer))
        for position, (index, _, params_total) in enumerate(items):
            result: dict[str, Any] = {"params_total": params_total}
            for (name, _), values in zip(_BYTE_FIELDS, as_int, strict=True):
                result[name] = values[position]
            result["verdict"] = verdicts[position]
            result["error"] = ""
            out[index] = result
    return out, errors


# ----------------------------------------------------------------------------- fast path


@dataclass
class _Column:
    """One input column: its distinct texts converted once, and each row's code into them."""

    dest: str
    codes: IntArray            # row → index of its text among the distinct texts
    present: BoolArray         # per distinct text: a non-empty cell
    bad: BoolArray             # per distinct text: the converter rejects it
    values: list[Any]          # per distinct text: the converted value (None if blank or bad)


def _convert_column(column: str, texts: Sequence[str | None]) -> _Column:
    flag = column_flag(column)
    convert = CONVERTERS[flag]
    index = {text: code for code, text in enumerate(dict.fromkeys(texts))}
    codes = np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
    present = np.zeros(len(index), dtype=bool)
    bad = np.zeros(len(index), dtype=bool)
    values: list[Any] = [None] * len(index)
    for text, code in index.items():
        if _blank(text):
            continue
        present[code] = True
        try:
            values[code] = convert(str(text))
        except (CostsimError, ValueError):
            bad[code] = True
    return _Column(flag.replace("-", "_"), codes, present, bad, values)


def _group_ids(parts: list[IntArray], rows: int) -> tuple[IntArray, IntArray]:
    """Dense group ids of rows from their key parts, and each group's first row."""
    key = np.zeros(rows, dtype=np.int64)
    for part in parts:
        base = int(part.max()) + 1 if rows else 1
        if base == 1:
            continue
        key = np.unique(key * base + part, return_inverse=True)[1].astype(np.int64).ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return inverse.astype(np.int64).ravel(), first.astype(np.int64)


def _probe_value(dest: str, present: Mapping[str, bool]) -> int:
    """A number that passes every check of its flag, whatever the model (tp 1, seq-len 1…):
    the group's probe row only finds the errors that do not depend on the numbers."""
    if dest == "zero":
        return 0
    if dest in ("prompt_tokens", "output_tokens"):
        return 0
    if dest == "context" and (present["prompt_tokens"] or present["output_tokens"]):
        # resolve_context needs context >= prompt + output; a missing one takes its default.
        return ((0 if present["prompt_tokens"] else DEFAULT_PROMPT_TOKENS)
                + (0 if present["output_tokens"] else DEFAULT_OUTPUT_TOKENS))
    return 1


@dataclass
class _Groups:
    """Per group: how its rows go (fast, error, fallback) and what they share."""

    size: int
    fast: BoolArray = field(init=False)
    infer: BoolArray = field(init=False)
    error: list[str | None] = field(init=False)
    template: list[dict[str, float] | None] = field(init=False)
    params_total: IntArray = field(init=False)
    heads: IntArray = field(init=False)
    kv_heads: IntArray = field(init=False)
    layers: IntArray = field(init=False)
    max_positions: IntArray = field(init=False)
    seq_len: IntArray = field(init=False)

    def __post_init__(self) -> None:
        self.fast = np.zeros(self.size, dtype=bool)
        self.infer = np.zeros(self.size, dtype=bool)
        self.error = [None] * self.size
        self.template = [None] * self.size
        ones = np.ones(self.size, dtype=np.int64)
        self.params_total = np.zeros(self.size, dtype=np.int64)
        self.heads, self.kv_heads, self.layers = ones.copy(), ones.copy(), ones.copy()
        self.max_positions, self.seq_len = ones.copy(), ones.copy()


def _resolve_groups(encoder: RowEncoder, columns: list[_Column], first_rows: IntArray
                    ) -> _Groups:
    groups = _Groups(max(1, len(first_rows)))  # never empty: rows index it
    by_dest = {column.dest: column for column in columns}
    for g, row in enumerate(first_rows.tolist()):
        present = {dest: bool(by_dest[dest].present[by_dest[dest].codes[row]])
                   if dest in by_dest else False for dest in NUMERIC_DESTS}
        values = dict(encoder.defaults)
        for column in columns:
            code = int(column.codes[row])
            if not column.present[code]:
                continue
            if column.dest in NUMERIC_DESTS:
                values[column.dest] = _probe_value(column.dest, present)
            else:
                values[column.dest] = column.values[code]
        try:
            ns, arch, params_total, gpu, task = encoder.objects(values)
        except (CostsimError, ValueError) as exc:
            groups.error[g] = str(exc)  # the same message for every row of the group
            continue
        try:
            infer, template = encoder.encode(ns, arch, gpu, task)
        except (CostsimError, ValueError):
            continue  # the group's rows take the one-by-one path
        groups.fast[g] = True
        groups.infer[g] = infer
        groups.template[g] = template
        groups.params_total[g] = params_total
        groups.heads[g] = arch.num_heads
        groups.kv_heads[g] = arch.num_kv_heads
        groups.layers[g] = arch.num_layers
        groups.max_positions[g] = arch.max_position_embeddings
        groups.seq_len[g] = default_seq_len(arch)
    return groups


def _bulk_numbers(numbers: Mapping[str, IntArray], group: IntArray, groups: _Groups
                  ) -> tuple[BoolArray, dict[str, IntArray]]:
    """Which rows pass every numeric check of their task (resolve_layout, check_layout, the
    sequence and context rules), and the numbers they encode, with the ``memory`` defaults."""
    def given(dest: str) -> BoolArray:
        flags: BoolArray = numbers[dest] != _MISSING
        return flags

    def value(dest: str, default: IntArray | int) -> IntArray:
        chosen: IntArray = np.where(given(dest), numbers[dest], default)
        return chosen

    tp, pp = value("tp", 1), value("pp", 1)
    ok = numbers["zero"] <= 3
    tpp = tp * pp  # both <= MAX_WHOLE_NUMBER: no int64 overflow
    gpus, dp_given = numbers["gpus"], numbers["dp"]
    gpus_only = given("gpus") & ~given("dp")
    ok &= ~gpus_only | (gpus % tpp == 0)
    both = given("gpus") & given("dp")
    small = tpp <= MAX_WHOLE_NUMBER  # else dp·tp·pp > gpus anyway
    ok &= ~both | (small & (dp_given * np.where(small, tpp, 1) == gpus))
    dp = np.where(gpus_only, gpus // tpp, value("dp", 1))
    heads, kv_heads = groups.heads[group], np.maximum(groups.kv_heads[group], 1)
    ok &= heads % tp == 0
    ok &= (kv_heads % tp == 0) | (tp % kv_heads == 0)
    ok &= pp <= groups.layers[group]
    max_positions = groups.max_positions[group]
    seq_len = value("seq_len", groups.seq_len[group])
    prompt = value("prompt_tokens", DEFAULT_PROMPT_TOKENS)
    total = prompt + value("output_tokens", DEFAULT_OUTPUT_TOKENS)
    context = value("context", np.maximum(1, np.minimum(total, max_positions)))
    request_given = given("prompt_tokens") | given("output_tokens")
    infer_ok = (~(given("context") & request_given) | (total <= context)) & (
        context <= max_positions)
    infer = groups.infer[group]
    ok &= np.where(infer, infer_ok, seq_len <= max_positions)
    encoded = {"tp": tp, "pp": pp, "dp": dp, "zero": value("zero", 0),
               "micro_batch": value("micro_batch", 1), "seq_len": seq_len,
               "grad_accum": value("grad_accum", 1), "batch": value("batch", 1),
               "context": context}
    return ok, encoded


def _evaluate_kind(rows: IntArray, fast: BoolArray, group: IntArray, groups: _Groups,
                   numbers: Mapping[str, IntArray], fallback: Mapping[int, Encoded],
                   infer: bool) -> ComponentArrays:
    """One engine call over ``rows`` (ascending) of one kind: fast rows from their group's
    template and their own numbers, the others from their one-by-one encoding."""
    names = INFER_COLUMNS if infer else TRAIN_COLUMNS
    numeric = ("tp", "pp", "batch", "context") if infer else (
        "tp", "pp", "dp", "zero", "micro_batch", "seq_len", "grad_accum")
    used = sorted({int(g) for g in np.unique(group[rows[fast[rows]]]).tolist()})
    table = np.zeros((max(used, default=0) + 1, len(names)), dtype=np.float64)
    for g in used:
        template = groups.template[g]
        assert template is not None
        table[g] = np.array([template[name] for name in names], dtype=np.float64)
    is_fast = fast[rows]
    template_of = np.where(is_fast, group[rows], 0)
    slow = np.flatnonzero(~is_fast)
    slow_rows = np.array([[fallback[int(rows[at])][1][name] for name in names]
                          for at in slow.tolist()], dtype=np.float64).reshape(len(slow), len(names))
    columns: dict[str, npt.NDArray[np.float64]] = {}
    for i, name in enumerate(names):
        column = (numbers[name][rows].astype(np.float64) if name in numeric
                  else table[:, i][template_of])
        column[slow] = slow_rows[:, i]
        columns[name] = column
    if infer:
        return inference_components(columns, DEFAULT_POLICY)
    return training_components(columns, DEFAULT_POLICY)


def transpose(cells: list[list[str]], width: int) -> list[tuple[str | None, ...]]:
    """The ``width`` columns of rows of at most ``width`` cells; a short row's missing cells
    are None (empty), as :class:`csv.DictReader` fills them."""
    if not cells:
        return [() for _ in range(width)]
    if min(map(len, cells)) < width:
        padded: list[list[str | None]] = [[*row, *([None] * (width - len(row)))]
                                          for row in cells]
        return list(zip(*padded, strict=True))
    return list(zip(*cells, strict=True))


def evaluate_columns(header: list[str], texts: Sequence[Sequence[str | None]],
                     base_dir: Path = Path(".")) -> tuple[list[list[Any]], int]:
    """The fast path: the output columns (:data:`GRID_OUTPUT_COLUMNS`, one list per column,
    a value per row) of a grid given as its columns of cells (None = empty), and the number
    of rows with errors."""
    n = len(texts[0]) if texts else 0
    encoder = RowEncoder(base_dir)
    columns = [_convert_column(name, column) for name, column in zip(header, texts, strict=True)]

    bad = np.zeros(n, dtype=bool)
    numbers: dict[str, IntArray] = {dest: np.full(n, _MISSING, dtype=np.int64)
                                    for dest in NUMERIC_DESTS}
    parts: list[IntArray] = []
    for column in columns:
        bad |= column.bad[column.codes]
        if column.dest in NUMERIC_DESTS:
            lookup = np.array([_MISSING if v is None else v for v in column.values],
                              dtype=np.int64)
            numbers[column.dest] = lookup[column.codes]
            parts.append(column.present[column.codes].astype(np.int64))
        else:
            # Empty cells share one key (they all take the default).
            canonical = np.where(column.present, np.arange(len(column.values)), -1) + 1
            parts.append(canonical[column.codes].astype(np.int64))
    good = np.flatnonzero(~bad)
    group = np.full(n, -1, dtype=np.int64)
    sub_group, first = _group_ids([part[good] for part in parts], len(good))
    group[good] = sub_group
    groups = _resolve_groups(encoder, columns, good[first])

    safe_group = np.maximum(group, 0)
    numbers_ok, encoded = _bulk_numbers(numbers, safe_group, groups)
    in_group = group >= 0
    fast = in_group & groups.fast[safe_group] & numbers_ok
    group_error = np.array([message is not None for message in groups.error], dtype=bool)
    failed = in_group & group_error[safe_group]
    infer = groups.infer[safe_group]

    errors_col: list[str] = [""] * n
    errors = 0
    for at in np.flatnonzero(failed).tolist():
        message = groups.error[int(group[at])]
        assert message is not None
        errors_col[at] = message
        errors += 1
    fallback: dict[int, Encoded] = {}
    memo: dict[tuple[str | None, ...], Encoded | str] = {}
    for at in np.flatnonzero(~fast & ~failed).tolist():
        key = tuple(column[at] for column in texts)
        if key not in memo:
            try:
                memo[key] = encoder.encode_row(dict(zip(header, key, strict=True)))
            except (CostsimError, ValueError) as exc:
                memo[key] = str(exc)
        outcome = memo[key]
        if isinstance(outcome, str):
            errors_col[at] = outcome
            errors += 1
        else:
            fallback[at] = outcome
            infer[at] = outcome[0]
    valid = fast.copy()
    if fallback:
        valid[np.fromiter(fallback, dtype=np.int64, count=len(fallback))] = True

    # Object arrays: an int64 array assigned into one stores Python ints (written as such).
    out = [np.full(n, "", dtype=object) for _ in GRID_OUTPUT_COLUMNS[:-1]]
    params = np.where(fast, groups.params_total[safe_group], 0)
    for at, item in fallback.items():
        params[at] = item[2]
    verdict_names = np.array([verdict.value for verdict in VERDICT_BY_CODE], dtype=object)
    for kind in (False, True):
        rows = np.flatnonzero(valid & (infer == kind))
        if not len(rows):
            continue
        arrays = _evaluate_kind(rows, fast, group, groups, encoded, fallback, kind)
        out[0][rows] = params[rows]
        for i, (_, name) in enumerate(_BYTE_FIELDS, start=1):
            out[i][rows] = getattr(arrays, name).astype("int64")
        out[len(_BYTE_FIELDS) + 1][rows] = verdict_names[arrays.verdict_code.astype(np.int64)]
    return [*(column.tolist() for column in out), errors_col], errors


# ----------------------------------------------------------------------------- files


def check_header(columns: list[str], source: str) -> None:
    """Known, distinct flag columns incl. model or arch.

    Raises:
        InputError / CatalogError: a bad header.
    """
    if not columns:
        raise InputError(source, "", "is empty: the first line must name the columns "
                                     "(flag names such as model, micro_batch)")
    seen: dict[str, str] = {}
    for column in columns:
        flag = column_flag(column)
        if flag not in CONVERTERS:
            raise CatalogError("grid column", column, list(CONVERTERS), source=source)
        if flag in seen:
            raise InputError(source, column, f"repeats the column {seen[flag]!r} (each flag "
                                             "once)")
        seen[flag] = column
    if "model" not in seen and "arch" not in seen:
        raise InputError(source, "", "needs a 'model' or 'arch' column")


def read_grid_dicts(reader: csv.DictReader[str], source: str
                    ) -> tuple[list[str], list[dict[str, str]]]:
    """The reference reader: the header (checked) and the rows as dicts.

    Raises:
        InputError / CatalogError: a bad header, a row with more cells than the header, or more
            than ``MAX_GRID_ROWS`` rows.
    """
    columns = list(reader.fieldnames or [])
    check_header(columns, source)
    rows: list[dict[str, str]] = []
    for index, raw in enumerate(reader):
        if index >= MAX_GRID_ROWS:
            raise InputError(source, "", f"more than {MAX_GRID_ROWS} rows")
        if None in raw:  # DictReader files surplus cells under the key None
            raise InputError(source, f"line {reader.line_num}",
                             f"has more cells than the {len(columns)} columns of the header")
        rows.append(raw)
    return columns, rows


def read_grid_cells(handle: IO[str], source: str) -> tuple[list[str], list[list[str]]]:
    """The fast reader: what :func:`read_grid_dicts` reads (blank lines skipped, the same
    errors), as lists of cells. The file is read in one go; a file with a row longer than the
    header, or that the csv module rejects, is read again line by line, so that the error
    (and its line number) is the one the reference reader gives."""
    reader = csv.reader(handle)
    columns = list(next(reader, []))
    check_header(columns, source)
    width = len(columns)
    rows: list[list[str]] | None
    try:
        rows = list(filter(None, reader))  # blank lines are skipped
    except csv.Error:
        if not handle.seekable():  # pragma: no cover - grid files are regular files
            raise
        rows = None
    if rows is not None and max(map(len, rows), default=0) <= width:
        if len(rows) > MAX_GRID_ROWS:
            raise InputError(source, "", f"more than {MAX_GRID_ROWS} rows")
        return columns, rows
    if not handle.seekable():  # pragma: no cover - grid files are regular files
        raise InputError(source, "", f"has a row with more cells than the {width} columns of "
                                     "the header")
    handle.seek(0)
    reader = csv.reader(handle)
    next(reader)
    rows = []
    for row in reader:
        if not row:
            continue
        if len(rows) >= MAX_GRID_ROWS:
            raise InputError(source, "", f"more than {MAX_GRID_ROWS} rows")
        if len(row) > width:
            raise InputError(source, f"line {reader.line_num}",
                             f"has more cells than the {width} columns of the header")
        rows.append(row)
    return columns, rows  # pragma: no cover - the first pass found a bad row


def _write_atomic(path: Path, write: Callable[[IO[str]], None]) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as handle:
            write(handle)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _output_header(columns: list[str]) -> list[str]:
    return columns + [c for c in GRID_OUTPUT_COLUMNS if c not in columns]


def run_grid(grid: Path, out: Path, *, reference: bool = False) -> tuple[int, int]:
    """Read ``grid``, evaluate every row, write ``out`` (to a temporary name, then renamed);
    return (rows, rows with errors). ``reference`` takes the one-by-one path.

    Raises:
        InputError / CatalogError: the grid cannot be read or is malformed (nothing written), or
            ``out`` cannot be written.
    """
    if reference:
        return _run_reference(grid, out)
    return _run_fast(grid, out)


def _read(grid: Path, read: Callable[[IO[str]], tuple[list[str], Any]]
          ) -> tuple[list[str], Any]:
    try:
        handle = grid.open(newline="", encoding="utf-8-sig")  # spreadsheets add a BOM
    except OSError as exc:
        raise InputError(str(grid), "", f"cannot read the file ({exc.strerror})") from exc
    try:
        with handle:
            return read(handle)
    except UnicodeDecodeError as exc:
        raise InputError(str(grid), "", f"is not UTF-8 text (byte {exc.start}); save "
                                        "the grid as CSV (UTF-8)") from None
    except csv.Error as exc:
        raise InputError(str(grid), "", f"is not a valid CSV file ({exc})") from None


def _write(out: Path, write: Callable[[IO[str]], None]) -> None:
    try:
        _write_atomic(out, write)
    except OSError as exc:
        raise InputError("", "--out", f"cannot write {out} ({exc.strerror})") from None


def _run_reference(grid: Path, out: Path) -> tuple[int, int]:
    columns, rows = _read(grid, lambda handle: read_grid_dicts(csv.DictReader(handle),
                                                                 str(grid)))
    header = _output_header(columns)
    results, errors = evaluate_grid(rows, base_dir=grid.parent)

    def write(handle: IO[str]) -> None:
        writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        for raw, result in zip(rows, results, strict=True):
            writer.writerow({**raw, **result})
    _write(out, write)
    return len(rows), errors


def _run_fast(grid: Path, out: Path) -> tuple[int, int]:
    # The cyclic garbage collector would walk the hundreds of thousands of row lists again and
    # again while they are read and as long as they live (a third of the time of a large grid):
    # it is paused while they are read, and then they are frozen out of its sight.
    enabled = gc.isenabled()
    gc.disable()
    try:
        columns, cells = _read(grid, lambda handle: read_grid_cells(handle, str(grid)))
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
    try:
        return _evaluate_and_write(grid, out, columns, cells)
    finally:
        del cells  # freed by reference counting, before they rejoin the collector's view
        gc.unfreeze()


def _evaluate_and_write(grid: Path, out: Path, columns: list[str], cells: list[list[str]]
                        ) -> tuple[int, int]:
    header = _output_header(columns)
    texts = transpose(cells, len(columns))
    outputs, errors = evaluate_columns(columns, texts, base_dir=grid.parent)

    def write(handle: IO[str]) -> None:
        writer = csv.writer(handle)
        writer.writerow(header)
        # Input cells + output values, row by row, iterated in C. (An input column never
        # shares a name with an output column: input columns are flags.)
        writer.writerows(zip(*texts, *outputs, strict=True))
    _write(out, write)
    return len(cells), errors
