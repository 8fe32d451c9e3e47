"""Serving benchmark results as the benchmark tools save them (docs/performance.md, "Measured
serving profiles"):

* ``vllm bench serve --save-result`` (and the older ``benchmarks/benchmark_serving.py
  --save-result``): one JSON object; ``--append-result`` puts one object a line. Keys read:
  ``completed``, ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``
  (``request_inthroughput`` in the 2024 script), ``output_throughput``, ``request_rate``
  (a number, or ``"inf"`` for offline), ``max_concurrency``, ``model_id``, ``backend``,
  ``median_ttft_ms``, ``median_tpot_ms`` and the percentile keys ``p95_ttft_ms`` /
  ``p99_ttft_ms`` / ``p95_tpot_ms`` / ``p99_tpot_ms`` (``--metric-percentiles``, default 99).
* SGLang ``python -m sglang.bench_serving --output-file F``: one JSON object a line (the script
  appends a line per run). The same keys, ``request_rate`` as a number (``Infinity`` when
  offline), and ``server_info`` (the server's arguments: ``model_path``, ``tp_size``,
  ``dtype``, ``quantization``) when the server answered.

What a file does not say (always the GPU; often TP and the engine) comes from the context given
beside it. A p99 stands in for a missing p95 (conservative). Token counts are the run's means:
total tokens / completed requests.
"""

from __future__ import annotations

import json
import math
from typing import Any

from costsim.catalog.serving_draft import ServingDraft, number, whole
from costsim.domain.measurements import ServingFileContext
from costsim.errors import InputError

# The client's ``backend`` names the server it talked to (SGLang's bench drives vLLM, TRT-LLM
# and SGLang servers; vLLM's drives OpenAI-compatible ones, where "openai" says nothing).
_ENGINES = {"vllm": "vllm", "vllm-chat": "vllm", "sglang": "sglang", "sglang-native": "sglang",
            "sglang-oai": "sglang", "sglang-oai-chat": "sglang", "trt": "tensorrt-llm",
            "tensorrt-llm": "tensorrt-llm", "llama.cpp": "llama.cpp"}
# server_info dtype spellings (PyTorch names) → costsim's
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
           "float": "fp32"}
# server_info quantization methods whose weight format costsim models (AWQ and GPTQ
# checkpoints served by SGLang/vLLM are 4-bit in practice; other methods need --quant)
_QUANTS = {"fp8": "fp8", "awq": "int4", "awq_marlin": "int4", "gptq": "int4",
           "gptq_marlin": "int4", "bitsandbytes": "nf4"}


def looks_like_json(text: str) -> bool:
    """True when the file is JSON (a benchmark result) rather than a CSV."""
    return text.lstrip().startswith("{")


def read_bench_json(text: str, file: str, context: ServingFileContext) -> list[ServingDraft]:
    """Every benchmark result in ``text``: one JSON object, or one object a line.

    Raises:
        InputError: not JSON, or an object that is not a serving benchmark result (naming the
            line and the missing key), or a bad number in it.
    """
    try:
        whole_doc = json.loads(text)
        objects: list[tuple[str, Any]] = [("", whole_doc)]
    except json.JSONDecodeError:
        objects = []
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                objects.append((f"line {i}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(file, f"line {i}", f"not valid JSON ({exc.msg}); a "
                                                    "benchmark result file holds one JSON "
                                                    "object, or one a line") from None
    except RecursionError:
        raise InputError(file, "", "not a benchmark result: JSON nested too deeply") from None
    return [_draft(obj, file, where, context) for where, obj in objects]


def _draft(obj: Any, file: str, where: str, context: ServingFileContext) -> ServingDraft:
    if not isinstance(obj, dict):
        raise InputError(file, where, "not a serving benchmark result (a JSON object with "
                                      "request_throughput, completed, ... is expected)")
    rps_key = next((k for k in ("request_throughput", "request_inthroughput") if k in obj),
                   None)
    if "completed" not in obj or (rps_key is None and "output_throughput" not in obj):
        missing = "completed" if "completed" not in obj else "request_throughput"
        raise InputError(file, where, f"not a serving benchmark result: no key {missing!r} "
                                      "(read: vllm bench serve --save-result, "
                                      "benchmark_serving.py --save-result, sglang.bench_serving "
                                      "--output-file)")
    completed = number(obj["completed"], file, where, "completed", positive=True)
    assert completed is not None  # "completed" is present and positive
    info = obj.get("server_info") if isinstance(obj.get("server_info"), dict) else {}
    assert isinstance(info, dict)

    def ms(*keys: str) -> float | None:
        for key in keys:
            value = number(obj.get(key), file, where, key)
            if value is not None:
                return value / 1000.0
        return None

    def mean_tokens(key: str) -> float | None:
        total = number(obj.get(key), file, where, key, positive=True)
        if total is None:
            raise InputError(file, where, f"no {key!r}: the mean request size is unknown")
        return total / completed

    backend = str(obj.get("backend") or obj.get("endpoint_type") or "").lower()
    engine = context.engine or _ENGINES.get(backend) or (
        "sglang" if "server_info" in obj and backend.startswith("sglang") else None)
    model = context.model or _text(obj.get("model_id")) or _text(info.get("model_path"))
    dtype = _DTYPES.get(str(info.get("dtype") or "").lower())
    quant = _QUANTS.get(str(info.get("quantization") or "").lower())
    return ServingDraft(
        where=where or "object", model=model, gpu=context.gpu, engine=engine,
        precision=context.precision or dtype, quant=context.quant or quant,
        tp=context.tp if context.tp is not None else whole(info.get("tp_size"), file, where,
                                                           "server_info.tp_size"),
        prompt_tokens=mean_tokens("total_input_tokens"),
        output_tokens=mean_tokens("total_output_tokens"),
        concurrency=whole(obj.get("max_concurrency"), file, where, "max_concurrency"),
        request_rate_per_s=_rate(obj.get("request_rate"), file, where),
        requests_per_s=(None if rps_key is None
                        else number(obj[rps_key], file, where, rps_key, positive=True)),
        output_tokens_per_s=number(obj.get("output_throughput"), file, where,
                                   "output_throughput", positive=True),
        ttft_p50_s=ms("median_ttft_ms"), ttft_p95_s=ms("p95_ttft_ms", "p99_ttft_ms"),
        tpot_p50_s=ms("median_tpot_ms"), tpot_p95_s=ms("p95_tpot_ms", "p99_tpot_ms"),
        source=" ".join(str(obj[k]) for k in ("label", "tag", "date") if obj.get(k)))


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _rate(value: Any, file: str, where: str) -> float | None:
    """The offered rate: None when offline (``"inf"``, ``Infinity``, absent)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("inf", "infinity")):
        return None
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return None
    if isinstance(value, str) and value.strip().lower() == "trace":
        raise InputError(file, where, "request_rate 'trace': a trace-timed run has no "
                                      "offered rate to size a replica by")
    return number(value, file, where, "request_rate", positive=True)
