"""The bulk path of ``costsim memory --grid`` (see :mod:`costsim.cli.memory_grid`).

Columns are converted once, rows grouped by the values that need Python objects, and the
numbers checked and encoded with numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from costsim.cli.flags import (
    CONVERTERS,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    MAX_WHOLE_NUMBER,
)
from costsim.cli.memory_grid_io import CodedColumn, ObjectArray, factorize
from costsim.cli.memory_grid_rows import (
    BYTE_FIELDS,
    MISSING,
    NUMERIC_DESTS,
    OUT_OF_RANGE_MESSAGE,
    BoolArray,
    Encoded,
    IntArray,
    RowEncoder,
    column_flag,
    is_blank,
    out_of_range,
    row_message,
)
from costsim.errors import CostsimError
from costsim.memory.core import (
    INFER_COLUMNS,
    TRAIN_COLUMNS,
    ComponentArrays,
    inference_components,
    training_components,
)
from costsim.memory.runtime import DEFAULT_POLICY, VERDICT_BY_CODE
from costsim.perf.setups import default_seq_len


@dataclass
class _Column:
    """One input column: its distinct texts converted once, and each row's code into them."""

    dest: str
    codes: IntArray            # row → index of its text among the distinct texts
    present: BoolArray         # per distinct text: a non-empty cell
    bad: BoolArray             # per distinct text: the converter rejects it
    values: list[Any]          # per distinct text: the converted value (None if blank or bad)


def _convert_column(column: str, texts: CodedColumn) -> _Column:
    flag = column_flag(column)
    convert = CONVERTERS[flag]
    codes, distinct = texts
    present = np.zeros(len(distinct), dtype=bool)
    bad = np.zeros(len(distinct), dtype=bool)
    values: list[Any] = [None] * len(distinct)
    for code, text in enumerate(distinct):
        if is_blank(text):
            continue
        present[code] = True
        try:
            values[code] = convert(str(text))
        except (CostsimError, ValueError):
            bad[code] = True
    return _Column(flag.replace("-", "_"), codes, present, bad, values)


def _group_ids(parts: list[IntArray], rows: int) -> tuple[IntArray, IntArray]:
    """Dense group ids of rows from their key parts (in order of first appearance), and each
    group's first row."""
    key = np.zeros(rows, dtype=np.int64)
    for part in parts:
        base = int(part.max()) + 1 if rows else 1
        if base == 1:
            continue
        key = factorize(key * base + part)[0]  # both < rows: no overflow
    # Codes appear in increasing order: a group's first row is where its code first exceeds
    # every code before it.
    previous = np.maximum.accumulate(np.concatenate(([-1], key[:-1]))) if rows else key
    return key, np.flatnonzero(key > previous)


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
        except Exception as exc:  # any bug too: see INTERNAL_ERROR_PREFIX
            groups.error[g] = row_message(exc)  # the same message for every row of the group
            continue
        try:
            infer, template = encoder.encode(ns, arch, gpu, task)
        except Exception:  # the group's rows take the one-by-one path (and its message)
            continue
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
        flags: BoolArray = numbers[dest] != MISSING
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


@dataclass(frozen=True)
class GridResults:
    """The output columns of a grid, one entry per row."""

    numbers: list[IntArray]   # params_total, then the BYTE_FIELDS (meaningless where not valid)
    valid: BoolArray          # rows with results; the others have an error message
    verdicts: ObjectArray     # "" where not valid
    messages: ObjectArray     # the error cell ("" where valid)

    @property
    def errors(self) -> int:
        return int(np.count_nonzero(~self.valid))


def evaluate_columns(header: list[str], texts: Sequence[CodedColumn],
                     base_dir: Path = Path(".")) -> GridResults:
    """The fast path: the results of a grid given as its columns of cell texts (coded)."""
    n = len(texts[0]) if texts else 0
    encoder = RowEncoder(base_dir)
    columns = [_convert_column(name, column) for name, column in zip(header, texts, strict=True)]

    bad = np.zeros(n, dtype=bool)
    numbers: dict[str, IntArray] = {dest: np.full(n, MISSING, dtype=np.int64)
                                    for dest in NUMERIC_DESTS}
    parts: list[IntArray] = []
    for column in columns:
        bad |= column.bad[column.codes]
        if column.dest in NUMERIC_DESTS:
            lookup = np.array([MISSING if v is None else v for v in column.values],
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

    messages = np.full(n, "", dtype=object)
    for at in np.flatnonzero(failed).tolist():
        messages[at] = groups.error[int(group[at])]
    fallback: dict[int, Encoded] = {}
    memo: dict[tuple[str, ...], Encoded | str] = {}
    for at in np.flatnonzero(~fast & ~failed).tolist():
        key = tuple(column.cell(at) for column in texts)
        if key not in memo:
            try:
                memo[key] = encoder.encode_row(dict(zip(header, key, strict=True)))
            except Exception as exc:  # any bug too: see INTERNAL_ERROR_PREFIX
                memo[key] = row_message(exc)
        outcome = memo[key]
        if isinstance(outcome, str):
            messages[at] = outcome
        else:
            fallback[at] = outcome
            infer[at] = outcome[0]
    valid = fast.copy()
    if fallback:
        valid[np.fromiter(fallback, dtype=np.int64, count=len(fallback))] = True

    results = [np.where(fast, groups.params_total[safe_group], 0)]
    results += [np.zeros(n, dtype=np.int64) for _ in BYTE_FIELDS]
    for at, item in fallback.items():
        results[0][at] = item[2]
    verdict_code = np.zeros(n, dtype=np.int64)
    for kind in (False, True):
        rows = np.flatnonzero(valid & (infer == kind))
        if not len(rows):
            continue
        arrays = _evaluate_kind(rows, fast, group, groups, encoded, fallback, kind)
        overflow = out_of_range(arrays)
        for i, (_, name) in enumerate(BYTE_FIELDS, start=1):
            results[i][rows] = np.where(overflow, 0, getattr(arrays, name)).astype(np.int64)
        verdict_code[rows] = arrays.verdict_code
        valid[rows[overflow]] = False
        messages[rows[overflow]] = OUT_OF_RANGE_MESSAGE
    verdict_names = np.array([verdict.value for verdict in VERDICT_BY_CODE], dtype=object)
    verdicts = np.where(valid, verdict_names[verdict_code], "").astype(object)
    return GridResults(results, valid, verdicts, messages)
