"""Read GPU telemetry logs: the CSV of ``nvidia-smi --query-gpu=... --format=csv`` and the table
``dcgmi dmon -e ...`` prints (docs/telemetry.md).

**nvidia-smi CSV** (``--format=csv[,noheader][,nounits]``, one row per GPU per poll with
``-l N``): cells are separated by ``", "``; the header names the query fields as nvidia-smi
prints them, with the unit in brackets (``memory.used [MiB]``, ``utilization.gpu [%]``) —
``nounits`` drops the units from the cells, not from the header. Any column order is read. The
columns read are ``memory.used`` (or ``memory.total`` − ``memory.free``), ``memory.total``,
``utilization.gpu``, ``name``, and ``uuid`` / ``pci.bus_id`` / ``index`` to tell GPUs apart;
others (``timestamp``, ``power.draw``…) are skipped. A file written with ``noheader`` has no
names for its columns: ``columns`` gives them, in the order given to ``--query-gpu``. A header
repeated further down (a shell loop around nvidia-smi prints one per call) and blank lines are
skipped.

**dcgmi dmon**: a ``#Entity`` line of field short names, an ``ID`` line of units, then one row
per entity and poll (``GPU 0   45   1234``); dmon prints its header again every 14 polls. Read:
``GPUTL`` (field 203, utilization %), ``GRACT`` (1001, graphics-engine active ratio 0–1, taken
as % when GPUTL is absent), ``FBUSD`` / ``FBTTL`` / ``FBFRE`` (252 / 250 / 251, framebuffer
used / total / free), ``DVNAM`` (50, name), ``UUID#`` (54), ``PCBID`` (57), ``NVIDX`` (52). Only
whole GPUs are read: MIG instance rows (``GPU-I``, ``GPU-CI``) and other entities are skipped
with a note. Cells are split on whitespace, or at the header's column positions when a value
holds spaces (a GPU name).

Units: nvidia-smi's ``MiB`` is 2^20 bytes; DCGM's framebuffer fields are documented in "MB"
but are NVML's byte counts divided by 2^20 (the same 81559 an H100 SXM shows as
``memory.total``), so both are read as MiB and kept as bytes.

Missing values — ``[N/A]``, ``[Not Supported]``, ``[Unknown Error]``, any bracketed note, ``N/A``
and empty cells — are None: left out of peaks and means and counted, not reported as problems.
A row that cannot be read (cells missing or garbled, a value out of range) is skipped and
reported with its line number; a file with no readable sample is an :class:`InputError`.
"""

from __future__ import annotations

import codecs
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from costsim.catalog.resources import read_user_bytes
from costsim.domain.telemetry import GpuSample, LogProblem, TelemetryFormat, TelemetryLog
from costsim.errors import InputError
from costsim.units import BYTES_PER_MIB

# A day of 1-second polls of 8 GPUs is ~700k rows of ~150 bytes: ~100 MB. Beyond that, poll
# less often (-l 5) or split the log.
MAX_TELEMETRY_BYTES = 200_000_000
# Problems listed one by one; the rest are counted.
MAX_LISTED_PROBLEMS = 50

# The quantities costsim reads, whatever the tool calls them.
USED, TOTAL, FREE, UTIL, NAME, UUID, BUS_ID, INDEX = (
    "memory_used", "memory_total", "memory_free", "utilization", "name", "uuid", "bus_id",
    "index")
MEMORY_KEYS = (USED, TOTAL, FREE)

# nvidia-smi --query-gpu names (and the aliases --help-query-gpu lists) → quantity.
SMI_FIELDS = {
    "memory.used": USED, "memory.total": TOTAL, "memory.free": FREE,
    "utilization.gpu": UTIL, "name": NAME, "gpu_name": NAME, "uuid": UUID, "gpu_uuid": UUID,
    "pci.bus_id": BUS_ID, "gpu_bus_id": BUS_ID, "index": INDEX,
}
# dcgmi dmon short names (dcgm_fields.cpp) → quantity; GRACT is a 0–1 ratio.
DMON_FIELDS = {
    "FBUSD": USED, "FBTTL": TOTAL, "FBFRE": FREE, "GPUTL": UTIL, "GRACT": UTIL,
    "DVNAM": NAME, "UUID#": UUID, "PCBID": BUS_ID, "NVIDX": INDEX,
}
_HEADER_CELL = re.compile(r"^([A-Za-z_][\w.]*)\s*(?:\[([^\]]*)\])?$")
_NUMBER = re.compile(r"^([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z%]*)$")
_EXPECTED_UNIT = {USED: "MiB", TOTAL: "MiB", FREE: "MiB", UTIL: "%"}
MISSING_WORDS = frozenset({"", "n/a", "na"})


@dataclass
class _Reader:
    """What one file has given so far (rows read, problems, missing cells)."""

    source: str
    samples: list[GpuSample] = field(default_factory=list)
    problems: list[LogProblem] = field(default_factory=list)
    problem_count: int = 0
    missing_cells: int = 0

    def problem(self, line: int, message: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_LISTED_PROBLEMS:
            self.problems.append(LogProblem(line=line, message=message))

    def finish(self, fmt: TelemetryFormat, columns: Sequence[str]) -> TelemetryLog:
        problems = list(self.problems)
        if self.problem_count > len(problems):
            problems.append(LogProblem(line=0, message=f"{self.problem_count - len(problems)} "
                                                       "more problem lines not listed"))
        if not self.samples:
            reason = (f"line {problems[0].line}: {problems[0].message}" if problems
                      else "it holds no data rows")
            raise InputError(self.source, "", f"no readable GPU sample in this {fmt.value} log "
                                              f"({reason})")
        return TelemetryLog(source=self.source, format=fmt, samples=tuple(self.samples),
                            problems=tuple(problems), missing_cells=self.missing_cells,
                            columns=tuple(columns))


class _BadCellError(ValueError):
    """A cell that is neither a value nor a missing-value marker."""


def read_telemetry_log(path: Path, *, columns: Sequence[str] | None = None) -> TelemetryLog:
    """Read one nvidia-smi CSV or dcgmi dmon log (the format is recognised from its content).

    ``columns``: the ``--query-gpu`` field list of a CSV written with ``noheader`` (ignored
    for files with a header and for dcgmi logs).

    Raises:
        InputError: the file cannot be read, is too large, has no columns costsim reads, needs
            ``columns`` and has none, or holds no readable sample; the message names the file.
    """
    source = str(path)
    text = _read_text(path)
    lines = text.splitlines()
    if any(line.lstrip().startswith("#Entity") for line in lines[:200]):
        return _read_dmon(source, lines)
    return _read_smi_csv(source, lines, columns)


def _read_text(path: Path) -> str:
    try:
        data = read_user_bytes(path, MAX_TELEMETRY_BYTES)
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read the file ({exc.strerror or exc})") from None
    if data is None:
        raise InputError(str(path), "", f"larger than {MAX_TELEMETRY_BYTES:,} bytes: poll less "
                                        "often (nvidia-smi -l 5) or split the log")
    # PowerShell's `>` writes UTF-16 with a byte-order mark; everything else is UTF-8 or ASCII.
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


# ----------------------------------------------------------------------------- nvidia-smi CSV


def _header_fields(line: str) -> list[tuple[str, str | None]] | None:
    """(field, unit) of each cell when ``line`` is an nvidia-smi header, else None."""
    cells = [cell.strip() for cell in line.split(",")]
    parsed = [_HEADER_CELL.match(cell) for cell in cells]
    if not all(parsed):
        return None
    fields = [(m.group(1).lower(), m.group(2)) for m in parsed if m]
    if not any(name in SMI_FIELDS or name == "timestamp" for name, _ in fields):
        return None
    return fields


def _query_fields(columns: Sequence[str]) -> list[tuple[str, str | None]]:
    return [(name.strip().lower(), None) for name in columns if name.strip()]


def _column_map(fields: Sequence[tuple[str, str | None]], known: dict[str, str]
                ) -> dict[str, int]:
    """Quantity → cell position (the first column of each quantity)."""
    found: dict[str, int] = {}
    for position, (name, _) in enumerate(fields):
        quantity = known.get(name)
        if quantity is not None:
            found.setdefault(quantity, position)
    return found


def _check_readable(source: str, found: dict[str, int], names: str) -> None:
    if UTIL not in found and USED not in found and not {TOTAL, FREE} <= set(found):
        raise InputError(source, "", f"no column costsim reads: it needs the memory used "
                                     f"or the utilization ({names})")


def _read_smi_csv(source: str, lines: list[str], columns: Sequence[str] | None) -> TelemetryLog:
    reader = _Reader(source)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise InputError(source, "", "the file is empty")
    header = _header_fields(lines[first])
    start = first + 1
    if header is None:
        if not columns:
            raise InputError(source, "", f"line {first + 1} is not an nvidia-smi CSV header nor "
                                         "a dcgmi dmon table; for a CSV written with "
                                         "--format=csv,noheader give --columns with the "
                                         "--query-gpu list (e.g. --columns "
                                         "index,name,memory.used,utilization.gpu)")
        header = _query_fields(columns)
        start = first
    names = [name for name, _ in header]
    for name, unit in header:
        quantity = SMI_FIELDS.get(name)
        expected = _EXPECTED_UNIT.get(quantity or "")
        if expected and unit is not None and unit != expected:
            raise InputError(source, name, f"unit [{unit}] where nvidia-smi writes "
                                           f"[{expected}]")
    found = _column_map(header, SMI_FIELDS)
    _check_readable(source, found, "memory.used, or memory.total with memory.free; "
                                   "utilization.gpu")
    for number, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        if _header_fields(line) is not None:
            continue  # a header printed again (nvidia-smi run once per poll in a loop)
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(header):
            reader.problem(number, f"{len(cells)} cells where the header has {len(header)}; "
                                   "row skipped")
            continue
        _add_sample(reader, number, cells, found, names, ratio_util=False)
    return reader.finish(TelemetryFormat.NVIDIA_SMI_CSV, names)


# ----------------------------------------------------------------------------- dcgmi dmon


@dataclass(frozen=True)
class _DmonHeader:
    fields: tuple[str, ...]
    starts: tuple[int, ...]  # column where each field's cells begin (entity first)
    found: dict[str, int]


def _dmon_header(line: str) -> _DmonHeader:
    tokens = [(m.group(0), m.start()) for m in re.finditer(r"\S+", line)]
    fields = tuple(token for token, _ in tokens[1:])
    found = _column_map([(name, None) for name in fields], DMON_FIELDS)
    return _DmonHeader(fields=fields, starts=tuple(start for _, start in tokens), found=found)


def _dmon_cells(line: str, header: _DmonHeader) -> tuple[str, str, list[str]] | None:
    """(entity kind, entity id, cells) of a dmon row, or None when it does not fit the header."""
    tokens = line.split()
    if len(tokens) == len(header.fields) + 2:
        return tokens[0], tokens[1], tokens[2:]
    # A value with spaces (DVNAM: "NVIDIA H100 80GB HBM3"): cut at the header's column starts.
    if len(line) <= header.starts[-1] or len(tokens) < 2:
        return None
    bounds = [*header.starts[1:], len(line)]
    cells = [line[a:b].strip() for a, b in itertools.pairwise(bounds)]
    entity = line[:header.starts[1]].split()
    if len(entity) != 2 or len(cells) != len(header.fields):
        return None
    return entity[0], entity[1], cells


def _read_dmon(source: str, lines: list[str]) -> TelemetryLog:
    reader = _Reader(source)
    header: _DmonHeader | None = None
    other_entities: dict[str, int] = {}
    first_other = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#Entity"):
            header = _dmon_header(line)
            _check_readable(source, header.found, "FBUSD, or FBTTL with FBFRE; GPUTL or GRACT")
            continue
        first_word = stripped.split()[0]
        if stripped.startswith("#") or (first_word == "ID" and header is not None):
            continue  # the unit line under each header, comments
        if "dmon was stopped" in stripped:
            continue  # dmon's last words after Ctrl-C
        if header is None:
            reader.problem(number, "a row before any '#Entity' header line; skipped")
            continue
        parsed = _dmon_cells(line, header)
        if parsed is None:
            reader.problem(number, f"not a dmon row of {len(header.fields)} fields after the "
                                   f"entity; skipped: {stripped[:60]!r}")
            continue
        kind, entity_id, cells = parsed
        if kind != "GPU":
            # MIG instances share their GPU's memory; summing them with the GPU double-counts.
            other_entities[kind] = other_entities.get(kind, 0) + 1
            first_other = first_other or number
            continue
        if not entity_id.isdigit():
            reader.problem(number, f"GPU id {entity_id!r} is not a number; row skipped")
            continue
        _add_sample(reader, number, cells, header.found, list(header.fields),
                    ratio_util=UTIL in header.found
                    and header.fields[header.found[UTIL]] == "GRACT",
                    default_device=entity_id)
    if other_entities:
        counts = ", ".join(f"{count} {kind}" for kind, count in sorted(other_entities.items()))
        reader.problem(first_other, f"rows of entities other than whole GPUs skipped ({counts}): "
                                    "costsim reads whole-GPU rows")
    fields = header.fields if header else ()
    return reader.finish(TelemetryFormat.DCGMI_DMON, fields)


# ----------------------------------------------------------------------------- cells


def _is_missing(cell: str) -> bool:
    return cell.lower() in MISSING_WORDS or (cell.startswith("[") and cell.endswith("]"))


def _number(cell: str, quantity: str, column: str) -> float | None:
    if _is_missing(cell):
        return None
    match = _NUMBER.match(cell)
    expected = _EXPECTED_UNIT[quantity]
    if match is None or match.group(2) not in ("", expected):
        raise _BadCellError(f"{column}: {cell!r} is not a number in {expected}")
    return float(match.group(1))


def _add_sample(reader: _Reader, number: int, cells: Sequence[str], found: dict[str, int],
                names: Sequence[str], *, ratio_util: bool, default_device: str = "?") -> None:
    def cell(quantity: str) -> str | None:
        position = found.get(quantity)
        return None if position is None else cells[position]

    values: dict[str, float | None] = {}
    try:
        for quantity in (*MEMORY_KEYS, UTIL):
            text = cell(quantity)
            if text is None:
                values[quantity] = None
                continue
            value = _number(text, quantity, names[found[quantity]])
            if value is None:
                reader.missing_cells += 1
            values[quantity] = value
    except _BadCellError as exc:
        reader.problem(number, f"{exc}; row skipped")
        return
    utilization = values[UTIL]
    if utilization is not None and ratio_util:
        utilization *= 100.0
    if utilization is not None and utilization > 100.0:
        reader.problem(number, f"{names[found[UTIL]]}: {utilization:g} % is above 100 %; "
                               "row skipped")
        return
    used, total, free = (values[key] for key in MEMORY_KEYS)
    if used is None and total is not None and free is not None:
        used = max(total - free, 0.0)
    if used is not None and total is not None and used > total:
        reader.problem(number, f"memory used {used:g} MiB is above the total {total:g} MiB; "
                               "row skipped")
        return
    name = cell(NAME)
    identity = next((text for text in (cell(UUID), cell(BUS_ID), cell(INDEX))
                     if text is not None and not _is_missing(text)), default_device)
    reader.samples.append(GpuSample(
        line=number, device=identity,
        gpu_name=None if name is None or _is_missing(name) else name,
        memory_used_bytes=None if used is None else round(used * BYTES_PER_MIB),
        memory_total_bytes=None if total is None else round(total * BYTES_PER_MIB),
        utilization_pct=utilization))
