"""Readers of measured serving profiles (DESIGN §12; docs/performance.md "Measured serving
profiles"): the serving CSV (:mod:`costsim.catalog.serving_csv`), ``vllm bench serve
--save-result`` JSON and SGLang ``bench_serving`` JSON lines
(:mod:`costsim.catalog.serving_bench`).

This module resolves what the rows name (a model preset or a config.json beside the file, any
GPU name incl. nvidia-smi's, an engine, a precision, a quantization) and checks what no single
row can: that p95 latency does not fall as the offered rate rises. A file is read whole or
not at all: any problem is an :class:`InputError` naming the file, the row and the rule.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from costsim.catalog.gpus import canonical_gpu_name
from costsim.catalog.models import (
    load_architecture_file,
    load_preset,
    preset_for_model_id,
)
from costsim.catalog.resources import read_user_bytes
from costsim.catalog.serving_bench import looks_like_json, read_bench_json
from costsim.catalog.serving_csv import read_serving_csv
from costsim.catalog.serving_draft import ServingDraft
from costsim.domain.architecture import Architecture
from costsim.domain.measurements import ServingFileContext, ServingPoint
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant, ServingEngine
from costsim.errors import CostsimError, InputError, suggest

# vllm bench serve --save-detailed keeps every generated text: tens of MB for a long run.
MAX_PROFILE_BYTES = 256 * 2**20
# p95 latency may fall by this much as the offered rate rises before a curve is refused: a p95
# over a few hundred requests carries a sampling error of several percent (and a p99 read as a
# p95 more), so a small dip between neighbouring rates is noise, a larger one a mislabelled row.
CURVE_REL_TOLERANCE = 0.10
CURVE_ABS_TOLERANCE_S = 0.005
ENGINE_ALIASES = {"trt-llm": "tensorrt-llm", "trtllm": "tensorrt-llm", "trt": "tensorrt-llm",
                  "llamacpp": "llama.cpp", "llama-cpp": "llama.cpp"}

E = TypeVar("E", Dtype, Quant, ServingEngine)


def read_serving_profile(path: Path, context: ServingFileContext | None = None
                         ) -> tuple[ServingPoint, ...]:
    """Every measured point of ``path`` (CSV, or benchmark JSON / JSON lines by content);
    ``context`` supplies what the file does not say (the GPU of a benchmark JSON...).

    Raises:
        InputError: the file cannot be read or breaks a rule (file, row and rule named).
    """
    context = context or ServingFileContext()
    file = str(path)
    try:
        data = read_user_bytes(path, MAX_PROFILE_BYTES)
    except OSError as exc:
        raise InputError(file, "", f"cannot read the file ({exc.strerror or exc})") from None
    if data is None:
        raise InputError(file, "", f"a serving profile must be at most "
                                   f"{MAX_PROFILE_BYTES // 2**20} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(file, "", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                                   f"{exc.start})") from None
    drafts = (read_bench_json(text, file, context) if looks_like_json(text)
              else read_serving_csv(text, file, context))
    models: dict[str, tuple[str, Architecture]] = {}
    points = tuple(_point(d, path, models) for d in drafts)
    check_curves([(d.where, p) for d, p in zip(drafts, points, strict=True)], file)
    return points


def _point(d: ServingDraft, path: Path,
           models: dict[str, tuple[str, Architecture]]) -> ServingPoint:
    file = str(path)
    if d.model is None:
        raise InputError(file, d.where, "the model is not given: give --model PRESET (or a "
                                        "config.json), or model: beside the file in a scenario")
    if d.model not in models:
        models[d.model] = _model(d.model, path.parent, file, d.where)
    name, arch = models[d.model]
    if d.gpu is None:
        raise InputError(file, d.where, "the GPU is not given: a benchmark result does not "
                                        "record it; give --gpu NAME (in a scenario: gpu: beside "
                                        "the file's path)")
    try:
        gpu = canonical_gpu_name(d.gpu, source="")
    except CostsimError as exc:
        raise InputError(file, d.where, f"gpu: {exc}") from None
    if d.prompt_tokens is None or d.output_tokens is None:
        raise InputError(file, d.where, "prompt_tokens and output_tokens are required")
    if d.requests_per_s is None and d.output_tokens_per_s is None:
        raise InputError(file, d.where, "needs requests_per_s or output_tokens_per_s")
    where = f"{path.name} {d.where}"
    return ServingPoint(
        model=name, architecture=arch, gpu=gpu,
        engine=_enum(ServingEngine, d.engine, file, d.where, "engine", ENGINE_ALIASES),
        precision=_enum(Dtype, d.precision, file, d.where, "precision"),
        quant=_enum(Quant, d.quant, file, d.where, "quant"), tp=d.tp,
        prompt_tokens=d.prompt_tokens, output_tokens=d.output_tokens,
        concurrency=d.concurrency, request_rate_per_s=d.request_rate_per_s,
        requests_per_s=d.requests_per_s, output_tokens_per_s=d.output_tokens_per_s,
        ttft_p50_s=d.ttft_p50_s, ttft_p95_s=d.ttft_p95_s, tpot_p50_s=d.tpot_p50_s,
        tpot_p95_s=d.tpot_p95_s,
        source=f"{where} ({d.source})" if d.source else where)


def _model(name: str, base: Path, file: str, where: str) -> tuple[str, Architecture]:
    """A preset, a config.json path (relative to the profile's folder), or a benchmark's
    model id that names a preset's Hugging Face repository."""
    if name.lower().endswith(".json"):
        config = Path(name) if Path(name).is_absolute() else base / name
        try:
            arch = load_architecture_file(config)
        except CostsimError as exc:
            raise InputError(file, where, f"model: {exc}") from None
        return arch.name, arch
    preset = preset_for_model_id(name)
    if preset is None:
        from costsim.catalog.models import preset_names

        hint = suggest(name.rsplit("/", 1)[-1], preset_names())
        extra = f"; did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
        raise InputError(file, where, f"unknown model {name!r}{extra} (a preset, a config.json "
                                      "path, or --model / model: beside the file)")
    found = load_preset(preset)
    return found.name, found.architecture


def _enum(kind: type[E], value: str | None, file: str, where: str, key: str,
          aliases: dict[str, str] | None = None) -> E | None:
    if value is None:
        return None
    text = value.strip().lower().replace("_", "-")
    text = (aliases or {}).get(text, text)
    try:
        return kind(text)
    except ValueError:
        valid = [m.value for m in kind]
        raise InputError(file, where, f"unknown {key} {value!r} (valid: "
                                      f"{', '.join(valid)})") from None


def curve_key(p: ServingPoint) -> tuple[object, ...]:
    """Points of one latency curve: the same model, GPU, engine, precision, quant, TP, request
    sizes and concurrency cap, measured at different offered rates."""
    return (p.model, p.gpu, p.engine, p.precision, p.quant, p.tp, p.prompt_tokens,
            p.output_tokens, p.concurrency)


def check_curves(located: list[tuple[str, ServingPoint]], file: str) -> None:
    """Raise :class:`InputError` when a p95 latency falls as the offered rate rises by more
    than the tolerance (:data:`CURVE_REL_TOLERANCE`, :data:`CURVE_ABS_TOLERANCE_S`); each
    point comes with its place in the file."""
    curves: dict[tuple[object, ...], list[tuple[str, ServingPoint]]] = defaultdict(list)
    for where, p in located:
        if p.request_rate_per_s is not None:
            curves[curve_key(p)].append((where, p))
    for curve in curves.values():
        curve.sort(key=lambda wp: wp[1].request_rate_per_s or 0.0)
        for get, label in ((_ttft, "ttft_p95_s"), (_tpot, "tpot_p95_s")):
            _check_rising(curve, get, label, file)


def _ttft(p: ServingPoint) -> float | None:
    return p.ttft_p95_s


def _tpot(p: ServingPoint) -> float | None:
    return p.tpot_p95_s


def _check_rising(curve: list[tuple[str, ServingPoint]],
                  get: Callable[[ServingPoint], float | None], label: str, file: str) -> None:
    prev: ServingPoint | None = None
    prev_where = ""
    for where, p in curve:
        value = get(p)
        if value is None:
            continue
        if prev is not None:
            before = get(prev)
            assert before is not None
            slack = max(CURVE_REL_TOLERANCE * before, CURVE_ABS_TOLERANCE_S)
            if value < before - slack and (p.request_rate_per_s or 0) > (
                    prev.request_rate_per_s or 0):
                raise InputError(
                    file, where,
                    f"{label} {value:g} s at {p.request_rate_per_s:g} req/s is below "
                    f"{before:g} s at {prev.request_rate_per_s:g} req/s ({prev_where}): "
                    "latency must not fall as load rises (tolerance "
                    f"{CURVE_REL_TOLERANCE:.0%} or {CURVE_ABS_TOLERANCE_S * 1000:g} ms)")
        prev, prev_where = p, where
