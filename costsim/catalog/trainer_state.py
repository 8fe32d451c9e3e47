"""Hugging Face Trainer's ``trainer_state.json`` (written beside every checkpoint).

Its ``log_history`` holds per-step entries (``loss``, ``learning_rate``, ``step``; no time) and,
once ``train()`` ends, one summary entry with ``train_runtime`` (s),
``train_samples_per_second``, ``train_steps_per_second`` and ``total_flos``; the state may also
count ``num_input_tokens_seen`` (all processes). The Trainer records no per-step time, so the
rate read is the whole run's average, warm-up included (it errs slow):
``train_samples_per_second`` × the sequence length when that is given, else
``num_input_tokens_seen`` ÷ ``train_runtime``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from costsim.errors import InputError

MAX_STATE_BYTES = 200_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainerRates:
    """What a finished Trainer run says about its speed."""

    runtime_s: float
    samples_per_s: float | None
    steps_per_s: float | None
    tokens_seen: float | None  # the state's num_input_tokens_seen (None: not counted)
    global_step: int | None


def _positive(entry: dict[str, Any], key: str) -> float | None:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value > 0 and value == value and value != float("inf") else None


def read_trainer_state(path: Path, data: bytes) -> TrainerRates:
    """The rates of the ``trainer_state.json`` bytes ``data`` (read from ``path``).

    Raises:
        InputError: not JSON, not a trainer state, or a run that did not finish.
    """
    name = str(path)
    try:
        state = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        where = (f"line {exc.lineno} column {exc.colno}"
                 if isinstance(exc, json.JSONDecodeError) else "")
        raise InputError(name, where, "not valid JSON") from None
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise InputError(name, "log_history", "not a Hugging Face trainer_state.json (no "
                                              "log_history list)")
    summaries = [(i, e) for i, e in enumerate(history)
                 if isinstance(e, dict) and "train_runtime" in e]
    if not summaries:
        raise InputError(name, "log_history", "no entry with train_runtime: the Trainer writes "
                                              "it when train() ends (did the run finish?)")
    index, summary = summaries[-1]
    runtime = _positive(summary, "train_runtime")
    if runtime is None:
        raise InputError(name, f"log_history.{index}.train_runtime",
                         f"must be a number > 0, got {summary.get('train_runtime')!r}")
    assert isinstance(state, dict)
    step = state.get("global_step")
    return TrainerRates(runtime_s=runtime,
                        samples_per_s=_positive(summary, "train_samples_per_second"),
                        steps_per_s=_positive(summary, "train_steps_per_second"),
                        tokens_seen=_positive(state, "num_input_tokens_seen"),
                        global_step=step if isinstance(step, int) and step > 0 else None)
