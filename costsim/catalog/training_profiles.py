"""Readers of measured training runs (DESIGN §12): the training run CSV
(:mod:`costsim.catalog.training_csv`), Megatron-LM / NeMo and torchtitan logs
(:mod:`costsim.catalog.training_logs`) and HF Trainer ``trainer_state.json``
(:mod:`costsim.catalog.trainer_state`).

The format is told by the content (a JSON object, a CSV header naming the run's columns,
else a log). What a log does not say — the model, GPU, GPU count, sequence length, precision —
comes from :class:`~costsim.domain.measurements.RunDetails` given beside the file; the
framework follows from the format unless given. Every problem is an
:class:`~costsim.errors.InputError` naming the file, the line or key and the rule: a file is
read whole or not at all.
"""

from __future__ import annotations

from pathlib import Path

from costsim.catalog.resources import read_user_file
from costsim.catalog.trainer_state import MAX_STATE_BYTES, read_trainer_state
from costsim.catalog.training_csv import read_training_csv
from costsim.catalog.training_fields import (
    check_point,
    framework_of,
    gpu_of,
    model_of,
    precision_of,
)
from costsim.catalog.training_logs import LogFormat, read_log
from costsim.domain.architecture import Architecture
from costsim.domain.measurements import RunDetails, TrainingPoint
from costsim.domain.workload import TrainingFramework
from costsim.errors import InputError

MAX_CSV_BYTES = 20_000_000
_CSV_COLUMNS = {"model", "gpu", "gpus", "tokens_per_s", "step_time_s", "mfu", "seq_len"}
# The framework each log format implies (NeMo runs Megatron-Core).
_FRAMEWORK = {LogFormat.MEGATRON: TrainingFramework.MEGATRON_LM,
              LogFormat.NEMO1: TrainingFramework.MEGATRON_LM,
              LogFormat.TORCHTITAN: TrainingFramework.PYTORCH_FSDP}


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(4096)
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read: {exc.strerror or exc}") from None


def _is_csv(head: bytes) -> bool:
    first = next((line for line in head.decode("utf-8-sig", errors="replace").splitlines()
                  if line.strip()), "")
    cells = {cell.strip().lower() for cell in first.split(",")}
    return len(cells & _CSV_COLUMNS) >= 2


def read_training_profile(path: Path,
                          details: RunDetails | None = None) -> tuple[TrainingPoint, ...]:
    """Every measured point of ``path``; ``details`` fill what the file does not say.

    Raises:
        InputError: unreadable, malformed or incomplete (module docstring).
    """
    details = details if details is not None else RunDetails()
    head = _head(path)
    if path.suffix.lower() == ".json" or head.lstrip().startswith(b"{"):
        rates = read_trainer_state(path, read_user_file(path, MAX_STATE_BYTES))
        gpus = _required_gpus(path, details, "a trainer_state.json")
        if details.seq_len is not None and rates.samples_per_s is not None:
            tokens_per_s = rates.samples_per_s * details.seq_len
        elif rates.tokens_seen is not None:
            tokens_per_s = rates.tokens_seen / rates.runtime_s
        else:
            raise InputError(str(path), "", "the Trainer counted no input tokens "
                             "(num_input_tokens_seen): give the sequence length "
                             f"({details.label('seq_len')}) to turn samples/s into tokens/s")
        return (_log_point(path, details, TrainingFramework.HF_TRAINER, gpus=gpus,
                           tokens_per_s=tokens_per_s, step_time_s=None, batch_tokens=None,
                           source=f"{path} (HF Trainer, whole-run average over "
                                  f"{rates.runtime_s:,.0f} s)"),)
    if path.suffix.lower() == ".csv" or _is_csv(head):
        data = read_user_file(path, MAX_CSV_BYTES)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InputError(f"{path}:{line}", "", "not UTF-8 text; save the file as "
                                                   "UTF-8") from None
        return read_training_csv(path, text, details)
    log = read_log(path)
    what = f"a {log.format}"
    gpus = _required_gpus(path, details, what)
    seq_len = details.seq_len
    batch_tokens = (None if log.global_batch_seqs is None or seq_len is None
                    else float(log.global_batch_seqs * seq_len))
    if log.step_time_s is not None and batch_tokens is not None:
        tokens_per_s = batch_tokens / log.step_time_s
    elif log.tokens_per_s_per_gpu is not None:
        tokens_per_s = log.tokens_per_s_per_gpu * gpus
    elif log.global_batch_seqs is not None:
        raise InputError(str(path), "", f"{what} gives sequences per step, not tokens: give "
                         f"the sequence length ({details.label('seq_len')})")
    else:
        raise InputError(str(path), "", f"{what} without the global batch size or tokens/s "
                                        "per GPU: costsim cannot turn its step time into "
                                        "tokens/s")
    skipped = f", {log.skipped_lines} unreadable line(s) skipped" if log.skipped_lines else ""
    return (_log_point(path, details, _FRAMEWORK[log.format], gpus=gpus,
                       tokens_per_s=tokens_per_s,
                       step_time_s=log.step_time_s if batch_tokens is not None else None,
                       batch_tokens=batch_tokens,
                       source=f"{path} ({log.format}, median of {log.steps} steps "
                              f"{log.first_step}-{log.last_step}{skipped})"),)


def _required_gpus(path: Path, details: RunDetails, what: str) -> int:
    if details.gpus is None:
        raise InputError(str(path), "", f"{what} does not say how many GPUs ran: give "
                                        f"{details.label('gpus')}")
    return details.gpus


def _log_point(path: Path, details: RunDetails, framework: TrainingFramework, *, gpus: int,
               tokens_per_s: float, step_time_s: float | None, batch_tokens: float | None,
               source: str) -> TrainingPoint:
    """The point of a log: the file's rate with the details given beside it."""
    name = str(path)
    arch: Architecture
    if details.architecture is not None:
        arch, model = details.architecture, details.model or details.architecture.name
    elif details.model:
        model, arch = model_of(details.model, Path(), details.label("model"))
    else:
        raise InputError(name, "", f"the file does not say which model ran: give "
                                   f"{details.label('model')}")
    if not details.gpu:
        raise InputError(name, "", f"the file does not say which GPU ran: give "
                                   f"{details.label('gpu')}")
    gpu = gpu_of(details.gpu, details.label("gpu"), "")
    point = TrainingPoint(
        model=model, architecture=arch, gpu=gpu.name, gpus=gpus,
        framework=(framework_of(details.framework, details.label("framework"), "")
                   if details.framework else framework),
        precision=(precision_of(details.precision, gpu, details.label("precision"), "")
                   if details.precision else None),
        seq_len=details.seq_len, global_batch_tokens=batch_tokens, tokens_per_s=tokens_per_s,
        step_time_s=step_time_s, source=source)
    return check_point(point, name)
