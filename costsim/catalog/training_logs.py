"""Steady-state rates from training logs: Megatron-LM / NeMo iteration lines and torchtitan
metric lines (docs/performance.md "Measured training runs").

Lines read (anything before them on the line, e.g. a timestamp or ``[rank0]:``, and ANSI colour
codes are ignored):

* Megatron-LM (``training_log``) and NeMo 2 (``Training epoch E, iteration I/N``): ``iteration
  I/N | key: value | ...`` with ``elapsed time per iteration (ms)`` or ``train_step_timing in
  s``, ``global batch size`` / ``global_batch_size``, and where printed the tokens per second
  per GPU (``tokens per GPU (tokens/s/GPU)``, ``tokens_per_sec_per_gpu``).
* NeMo 1 progress bars: ``global_step=G, consumed_samples=C, train_step_timing in s=T`` (the
  global batch is the growth of consumed samples per step).
* torchtitan: ``step: S  loss: ...  tps: N`` (tokens per second per GPU), validation lines
  left out.

Steady state: the first 10 % of the logged steps (at least one: the first holds compilation,
NCCL set-up and data-loader start) are warm-up and dropped, as are steps logged before the
global batch reached its final size (batch ramp-up); the median of the rest is the steady
rate, so a checkpoint save or an evaluation pause in one interval does not move it. At least
three steady steps are needed. A line that names an iteration but whose numbers cannot be read
(output of two ranks interleaved) is skipped.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from costsim.errors import InputError

WARMUP_SHARE = 0.10
MIN_STEADY_STEPS = 3
# A line longer than this is cut (a log is text; an endless line is not one).
MAX_LINE_BYTES = 65_536
MAX_LOG_BYTES = 4_000_000_000

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_ITERATION = re.compile(r"\biteration\s+(\d+)\s*/\s*(\d+)\s*\|(.*)$")
_NEMO1 = re.compile(r"train_step_timing in s\s*=")
_TITAN_START = re.compile(r"(?:^|[\s\]:>-])step:\s*(\d+)\s")
_TPS = re.compile(r"\btps:\s*(\S+)")
_VALIDATION = re.compile(r"\b(valid\w*|eval\w*|calibration)\s+(micro_)?step:", re.IGNORECASE)

_STEP_TIME_KEYS = {"elapsed time per iteration (ms)": 1e-3, "train_step_timing in s": 1.0}
_BATCH_KEYS = ("global batch size", "global_batch_size")
_TOKENS_PER_GPU_KEYS = ("tokens per gpu (tokens/s/gpu)", "tokens_per_sec_per_gpu",
                        "tokens per second per gpu (tok/s/gpu)")


class LogFormat:
    """Names of the log formats read here (the framework each implies is the caller's)."""

    MEGATRON = "Megatron-LM/NeMo log"
    NEMO1 = "NeMo progress-bar log"
    TORCHTITAN = "torchtitan log"


@dataclass(frozen=True, slots=True, kw_only=True)
class LogRates:
    """The steady state of a log: medians over the steady steps (None: not logged)."""

    format: str
    step_time_s: float | None
    global_batch_seqs: int | None
    tokens_per_s_per_gpu: float | None
    first_step: int
    last_step: int
    steps: int  # steady steps the medians are over
    skipped_lines: int  # lines naming an iteration whose numbers could not be read


@dataclass(slots=True)
class _Step:
    step_times: list[float]
    batches: list[float]
    per_gpu: list[float]


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text without colour codes) of every line, read in bounded pieces."""
    name = str(path)
    total = 0
    try:
        with path.open("rb") as handle:
            number = 0
            while True:
                raw = handle.readline(MAX_LINE_BYTES)
                if not raw:
                    return
                total += len(raw)
                if total > MAX_LOG_BYTES:
                    raise InputError(name, "", f"file is over the limit of {MAX_LOG_BYTES:,} "
                                               "bytes; cut the log to the steady part")
                number += 1
                text = raw.decode("utf-8", errors="replace")
                # tqdm progress bars rewrite one line with carriage returns: each is a record
                for piece in text.split("\r"):
                    yield number, _ANSI.sub("", piece).rstrip("\n")
    except OSError as exc:
        raise InputError(name, "", f"cannot read: {exc.strerror or exc}") from None


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def _fields(text: str, pair: str, separator: str) -> dict[str, str]:
    """``key<pair>value`` fields separated by ``separator``, keys lower-case, spaces single."""
    out = {}
    for part in text.split(separator):
        key, found, value = part.rpartition(pair) if pair == "=" else part.partition(pair)
        if found and key.strip():
            out[" ".join(key.strip().lower().split())] = value.strip()
    return out


def _megatron(fields: dict[str, str]) -> tuple[float | None, float | None, float | None]:
    step_time = None
    for key, scale in _STEP_TIME_KEYS.items():
        if key in fields:
            value = _number(fields[key])
            step_time = None if value is None else value * scale
    batch = next((_number(fields[k]) for k in _BATCH_KEYS if k in fields), None)
    per_gpu = next((_number(fields[k]) for k in _TOKENS_PER_GPU_KEYS if k in fields), None)
    return step_time, batch, per_gpu


def read_log(path: Path) -> LogRates:
    """The steady state of the Megatron-LM / NeMo / torchtitan log at ``path``.

    Raises:
        InputError: no iteration line, or too few steady ones.
    """
    found: dict[str, dict[int, _Step]] = {LogFormat.MEGATRON: {}, LogFormat.NEMO1: {},
                                          LogFormat.TORCHTITAN: {}}
    nemo1: list[tuple[int, float, float]] = []  # (global step, consumed samples, step time)
    skipped = dict.fromkeys(found, 0)
    for _, line in _lines(path):
        match = _ITERATION.search(line)
        if match:
            step_time, batch, per_gpu = _megatron(_fields(match.group(3), ":", "|"))
            if step_time is None and per_gpu is None:
                skipped[LogFormat.MEGATRON] += 1
                continue
            step = found[LogFormat.MEGATRON].setdefault(int(match.group(1)), _Step([], [], []))
            _add(step, step_time, batch, per_gpu)
            continue
        if _NEMO1.search(line):
            fields = _fields(line.replace("[", ",").replace("]", ","), "=", ",")
            values = [_number(fields.get(k, "")) for k in
                      ("global_step", "consumed_samples", "train_step_timing in s")]
            if values[0] is None or values[1] is None or values[2] is None:
                skipped[LogFormat.NEMO1] += 1
                continue
            nemo1.append((int(values[0]), values[1], values[2]))
            continue
        start = _TITAN_START.search(line)
        if start and not _VALIDATION.search(line):
            titan = _TPS.search(line)
            tps = _number(titan.group(1)) if titan else None
            if tps is None:
                skipped[LogFormat.TORCHTITAN] += 1
                continue
            step = found[LogFormat.TORCHTITAN].setdefault(int(start.group(1)), _Step([], [], []))
            _add(step, None, None, tps)
    _nemo1_steps(nemo1, found[LogFormat.NEMO1])
    fmt = max(found, key=lambda k: (len(found[k]), skipped[k]))
    if not found[fmt]:
        if any(skipped.values()):
            worst = max(skipped, key=lambda k: skipped[k])
            raise InputError(str(path), "", f"{skipped[worst]} iteration line(s) of a {worst}, "
                                            "none with a readable step time or tokens/s")
        raise InputError(str(path), "", "no iteration line found: expected a Megatron-LM/NeMo "
                         "log ('iteration N/M | elapsed time per iteration (ms): ...'), a "
                         "torchtitan log ('step: N ... tps: ...'), a trainer_state.json or the "
                         "training run CSV (docs/performance.md)")
    return _steady(path, fmt, found[fmt], skipped[fmt])


def _add(step: _Step, step_time: float | None, batch: float | None,
         per_gpu: float | None) -> None:
    if step_time is not None:
        step.step_times.append(step_time)
    if batch is not None:
        step.batches.append(batch)
    if per_gpu is not None:
        step.per_gpu.append(per_gpu)


def _nemo1_steps(records: list[tuple[int, float, float]], steps: dict[int, _Step]) -> None:
    """NeMo 1 progress records as steps: a bar redrawn within one step keeps its last value;
    the global batch is consumed samples gained per step since the previous record."""
    last: dict[int, tuple[float, float]] = {}
    for global_step, consumed, step_time in records:
        last[global_step] = (consumed, step_time)
    previous: tuple[int, float] | None = None
    for global_step in sorted(last):
        consumed, step_time = last[global_step]
        batch = None
        if previous is not None and global_step > previous[0] and consumed > previous[1]:
            batch = (consumed - previous[1]) / (global_step - previous[0])
        steps[global_step] = _Step([step_time], [batch] if batch else [], [])
        previous = (global_step, consumed)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _steady(path: Path, fmt: str, steps: dict[int, _Step], skipped: int) -> LogRates:
    """Drop warm-up and batch ramp-up, take medians (module docstring)."""
    order = sorted(steps)
    warmup = max(1, math.ceil(WARMUP_SHARE * len(order)))
    kept = order[warmup:]
    batches = {s: _median(steps[s].batches) for s in kept}
    final = next((batches[s] for s in reversed(kept) if batches[s] is not None), None)
    if final is not None:
        kept = [s for s in kept if batches[s] is None or batches[s] == final]
    if len(kept) < MIN_STEADY_STEPS:
        raise InputError(str(path), "", f"only {len(kept)} steady step(s) after dropping "
                         f"{warmup} warm-up step(s) of {len(order)} logged (need at least "
                         f"{MIN_STEADY_STEPS}); log more iterations")
    step_times = [t for s in kept if (t := _median(steps[s].step_times)) is not None]
    per_gpu = [v for s in kept if (v := _median(steps[s].per_gpu)) is not None]
    return LogRates(format=fmt, step_time_s=_median(step_times),
                    global_batch_seqs=None if final is None else round(final),
                    tokens_per_s_per_gpu=_median(per_gpu), first_step=kept[0],
                    last_step=kept[-1], steps=len(kept), skipped_lines=skipped)
