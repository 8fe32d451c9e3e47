"""Serving profile readers (DESIGN §12): the serving CSV, vLLM benchmark JSON (``vllm bench
serve --save-result`` and the older ``benchmark_serving.py``) and SGLang ``bench_serving`` JSON
lines, each on a sample in the tool's format written here; bad files name file, row and rule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from costsim.catalog.serving_profiles import read_serving_profile
from costsim.domain.measurements import ServingFileContext
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant, ServingEngine
from costsim.errors import InputError

HEADER = ("model,gpu,engine,precision,quant,tp,prompt_tokens,output_tokens,concurrency,"
          "request_rate,requests_per_s,output_tokens_per_s,ttft_p50_s,ttft_p99_s,tpot_p50_s,"
          "tpot_p99_s,source\n")

# keys as vllm/benchmarks/serve.py writes them (--save-result, default --metric-percentiles 99)
VLLM = {"date": "20250301-101500", "endpoint_type": "vllm", "backend": "vllm", "label": None,
        "model_id": "meta-llama/Meta-Llama-3-8B-Instruct", "tokenizer_id": "x",
        "num_prompts": 200, "request_rate": 4.0, "burstiness": 1.0, "max_concurrency": None,
        "duration": 50.2, "completed": 200, "failed": 0, "total_input_tokens": 204800,
        "total_output_tokens": 25600, "request_throughput": 3.98, "request_goodput": None,
        "output_throughput": 509.4, "total_token_throughput": 4589.0, "mean_ttft_ms": 61.0,
        "median_ttft_ms": 55.0, "std_ttft_ms": 9.0, "p99_ttft_ms": 120.0, "mean_tpot_ms": 19.0,
        "median_tpot_ms": 18.5, "std_tpot_ms": 2.0, "p99_tpot_ms": 28.0, "mean_itl_ms": 19.0,
        "median_itl_ms": 17.0, "std_itl_ms": 4.0, "p99_itl_ms": 40.0}
# the 2024 benchmarks/benchmark_serving.py: "request_inthroughput" (sic), no backend key
OLD_VLLM = {"date": "20240410-090000", "version": "N/A", "model_id": "llama-3-8b",
            "tokenizer_id": "x", "best_of": 1, "use_beam_search": False, "num_prompts": 1000,
            "request_rate": "inf", "duration": 110.0, "completed": 1000,
            "total_input_tokens": 512000, "total_output_tokens": 128000,
            "request_inthroughput": 9.09, "input_throughput": 4654.5,
            "output_throughput": 1163.6, "mean_ttft_ms": 30000.0, "median_ttft_ms": 29000.0,
            "p99_ttft_ms": 60000.0, "mean_tpot_ms": 60.0, "median_tpot_ms": 58.0,
            "p99_tpot_ms": 90.0}


def _sglang(rate: float, ttft_p99_ms: float, tpot_p99_ms: float) -> dict[str, object]:
    """One line of python -m sglang.bench_serving --output-file (keys of its result dict)."""
    return {"tag": None, "backend": "sglang", "dataset_name": "random", "request_rate": rate,
            "max_concurrency": None, "sharegpt_output_len": None, "random_input_len": 1024,
            "random_output_len": 256, "random_range_ratio": 1.0,
            "server_info": {"model_path": "Qwen/Qwen2.5-7B-Instruct", "tp_size": 2,
                            "dtype": "bfloat16", "quantization": None},
            "duration": 100.0, "completed": 500, "total_input_tokens": 512000,
            "total_output_tokens": 128000, "request_throughput": min(rate, 11.0),
            "input_throughput": 5120.0, "output_throughput": 1280.0, "total_throughput": 6400.0,
            "mean_e2e_latency_ms": 5000.0, "median_e2e_latency_ms": 4800.0,
            "mean_ttft_ms": 80.0, "median_ttft_ms": 70.0, "std_ttft_ms": 5.0,
            "p99_ttft_ms": ttft_p99_ms, "mean_tpot_ms": 20.0, "median_tpot_ms": 19.0,
            "std_tpot_ms": 1.0, "p99_tpot_ms": tpot_p99_ms, "concurrency": 40.0}


def test_csv_with_p99_columns_and_empty_cells(tmp_path: Path) -> None:
    f = tmp_path / "profile.csv"
    f.write_text(HEADER
                 + "llama-3-8b,NVIDIA H100 80GB HBM3,,,,1,1000,200,,inf,9.5,,,,,,offline\n"
                 + "llama-3-8b,h100,vllm,bf16,none,,1000,200,64,4,,800,0.1,0.3,0.02,0.04,\n")
    offline, online = read_serving_profile(f)
    assert offline.gpu == "H100"
    assert offline.request_rate_per_s is None
    assert offline.engine is None
    assert offline.precision is None
    assert offline.tp == 1
    assert offline.requests_per_s == 9.5
    assert offline.ttft_p95_s is None
    assert offline.source == "profile.csv row 2 (offline)"
    assert online.request_rate_per_s == 4
    assert online.requests_per_s is None
    assert online.output_tokens_per_s == 800
    assert online.concurrency == 64
    assert online.ttft_p95_s == 0.3
    assert online.tpot_p95_s == 0.04
    assert (online.engine, online.precision, online.quant) == (
        ServingEngine.VLLM, Dtype.BF16, Quant.NONE)
    assert online.source == "profile.csv row 3"


def test_csv_model_as_config_json_beside_the_file(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.json").write_text(json.dumps(
        {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
         "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000}))
    f = tmp_path / "p.csv"
    f.write_text("model,gpu,prompt_tokens,output_tokens,requests_per_s\n"
                 "cfg/config.json,L4,100,50,20\n")
    (point,) = read_serving_profile(f)
    assert point.architecture.hidden_size == 256


def test_vllm_bench_serve_json_takes_gpu_and_tp_from_the_context(tmp_path: Path) -> None:
    f = tmp_path / "vllm-4qps.json"
    f.write_text(json.dumps(VLLM))
    (p,) = read_serving_profile(f, ServingFileContext(gpu="A100-80GB", tp=1))
    assert p.model == "llama-3-8b"  # the hub id names the preset's repository (+ -Instruct)
    assert (p.gpu, p.tp, p.engine) == ("A100-80GB", 1, ServingEngine.VLLM)
    assert p.prompt_tokens == 1024
    assert p.output_tokens == 128
    assert p.request_rate_per_s == 4.0
    assert p.requests_per_s == 3.98
    assert p.output_tokens_per_s == 509.4
    assert p.ttft_p50_s == pytest.approx(0.055)
    assert p.ttft_p95_s == pytest.approx(0.120)
    assert p.tpot_p95_s == pytest.approx(0.028)


def test_old_benchmark_serving_json(tmp_path: Path) -> None:
    f = tmp_path / "inf.json"
    f.write_text(json.dumps(OLD_VLLM))
    (p,) = read_serving_profile(f, ServingFileContext(gpu="H100"))
    assert p.request_rate_per_s is None  # "inf": offline
    assert p.requests_per_s == 9.09
    assert p.engine is None


def test_vllm_append_result_lines(tmp_path: Path) -> None:
    f = tmp_path / "sweep.json"
    f.write_text(json.dumps(VLLM) + "\n" + json.dumps({**VLLM, "request_rate": 8.0,
                                                        "p99_ttft_ms": 300.0}))
    points = read_serving_profile(f, ServingFileContext(gpu="H100"))
    assert [p.request_rate_per_s for p in points] == [4.0, 8.0]


def test_sglang_jsonl_several_lines(tmp_path: Path) -> None:
    f = tmp_path / "online.jsonl"
    lines = [_sglang(2, 150, 25), _sglang(4, 180, 27), _sglang(math.inf, 9000, 80)]
    f.write_text("".join(json.dumps(line) + "\n" for line in lines))  # inf → Infinity
    points = read_serving_profile(f, ServingFileContext(gpu="NVIDIA A100-SXM4-80GB"))
    assert len(points) == 3
    assert all(p.model == "qwen2.5-7b" and p.tp == 2 and p.engine is ServingEngine.SGLANG
               and p.precision is Dtype.BF16 and p.gpu == "A100-80GB" for p in points)
    assert [p.request_rate_per_s for p in points] == [2, 4, None]
    assert points[1].ttft_p95_s == pytest.approx(0.18)
    assert points[0].source == "online.jsonl line 1"


def test_context_overrides_what_a_benchmark_guessed(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps(_sglang(2, 150, 25)) + "\n")
    (p,) = read_serving_profile(f, ServingFileContext(gpu="L40S", tp=1, model="mistral-7b",
                                                      engine="vllm"))
    assert (p.model, p.tp, p.engine) == ("mistral-7b", 1, ServingEngine.VLLM)


BAD_CSV = {
    "missing column": ("model,gpu,prompt_tokens,requests_per_s\nllama-3-8b,H100,100,2\n",
                       "header", "missing required column(s) output_tokens"),
    "unknown column": ("model,gpu,prompt_tokens,output_tokens,requests_per_s,ttft_p95_ms\n"
                       "llama-3-8b,H100,100,50,2,30\n", "header", "unknown column"),
    "no throughput": ("model,gpu,prompt_tokens,output_tokens,requests_per_s\n"
                      "llama-3-8b,H100,100,50,\n", "row 2", "requests_per_s or"),
    "negative": ("model,gpu,prompt_tokens,output_tokens,requests_per_s\n"
                 "llama-3-8b,H100,100,50,-2\n", "row 2", "requests_per_s must be > 0"),
    "non-finite": ("model,gpu,prompt_tokens,output_tokens,requests_per_s,tpot_p95_s\n"
                   "llama-3-8b,H100,100,50,2,nan\n", "row 2", "tpot_p95_s must be finite"),
    "empty required": ("model,gpu,prompt_tokens,output_tokens,requests_per_s\n"
                       "llama-3-8b,,100,50,2\n", "row 2", "column gpu is required"),
    "unknown gpu": ("model,gpu,prompt_tokens,output_tokens,requests_per_s\n"
                    "llama-3-8b,H1000,100,50,2\n", "row 2", "unknown GPU"),
    "unknown model": ("model,gpu,prompt_tokens,output_tokens,requests_per_s\n"
                      "llama-9-8b,H100,100,50,2\n", "row 2", "unknown model"),
    "falling latency": (
        "model,gpu,prompt_tokens,output_tokens,request_rate,requests_per_s,ttft_p95_s\n"
        "llama-3-8b,H100,100,50,2,2,0.50\nllama-3-8b,H100,100,50,4,4,0.30\n",
        "row 3", "latency must not fall as load rises"),
}


@pytest.mark.parametrize("case", sorted(BAD_CSV))
def test_bad_csv_names_file_row_and_rule(tmp_path: Path, case: str) -> None:
    text, where, rule = BAD_CSV[case]
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(InputError) as info:
        read_serving_profile(f)
    message = str(info.value)
    assert message.startswith(f"{f}: {where}: "), message
    assert rule in message


def test_a_small_dip_within_the_tolerance_is_accepted(tmp_path: Path) -> None:
    f = tmp_path / "noisy.csv"
    f.write_text("model,gpu,prompt_tokens,output_tokens,request_rate,requests_per_s,"
                 "ttft_p95_s\nllama-3-8b,H100,100,50,2,2,0.100\n"
                 "llama-3-8b,H100,100,50,4,4,0.096\n")
    assert len(read_serving_profile(f)) == 2


@pytest.mark.parametrize(("doc", "rule"), [
    ('{"date": "x", "model_id": "m"}', "not a serving benchmark result: no key 'completed'"),
    ('{"completed": 3, "total_input_tokens": 30}', "no key 'request_throughput'"),
    ('[1, 2]\n', "not a serving benchmark result"),
])
def test_json_that_is_not_a_benchmark_result(tmp_path: Path, doc: str, rule: str) -> None:
    f = tmp_path / "x.json"
    f.write_text(doc if doc.startswith("{") else "{}\n" + doc)
    with pytest.raises(InputError, match=rule):
        read_serving_profile(f, ServingFileContext(gpu="H100"))


def test_bad_sglang_line_is_named(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps(_sglang(2, 150, 25)) + "\n"
                 + json.dumps({**_sglang(4, 180, 27), "request_throughput": -1}) + "\n")
    with pytest.raises(InputError, match=r"s.jsonl: line 2: request_throughput must be > 0"):
        read_serving_profile(f, ServingFileContext(gpu="H100"))


def test_a_benchmark_json_without_a_gpu_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "v.json"
    f.write_text(json.dumps(VLLM))
    with pytest.raises(InputError, match="the GPU is not given"):
        read_serving_profile(f)
