"""``estimate serve --profile`` and ``calibrate serve`` (DESIGN §12) on profiles written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

ESTIMATE = ("estimate", "serve", "--model", "llama-3-8b", "--gpu", "H100", "--prompt-tokens",
            "1000", "--output-tokens", "200", "--price-usd-per-gpu-hour", "2", "--json")


def _profile(tmp_path: Path, rps: float) -> Path:
    f = tmp_path / "h100.csv"
    f.write_text("model,gpu,tp,prompt_tokens,output_tokens,request_rate,requests_per_s,source\n"
                 f"llama-3-8b,NVIDIA H100 80GB HBM3,1,1000,200,inf,{rps},team bench\n")
    return f


def test_estimate_serve_profile_sets_basis_source_and_capacity(cli: Cli,
                                                               tmp_path: Path) -> None:
    code, out, _ = cli(*ESTIMATE, "--rate", "30")
    predicted = json.loads(out)
    assert code == 0
    assert predicted["basis"] == "predicted"
    assert predicted["profile_source"] == ""
    half = predicted["max_requests_per_s"] / 2
    code, out, err = cli(*ESTIMATE, "--rate", "30", "--profile", str(_profile(tmp_path, half)))
    measured = json.loads(out)
    assert code == 0, err
    assert measured["basis"] == "measured"
    assert measured["profile_source"] == "h100.csv row 2 (team bench)"
    assert measured["max_requests_per_s"] == pytest.approx(half)
    assert measured["capacity_requests_per_s_per_replica"] == pytest.approx(0.7 * half)
    assert measured["replicas_needed"] >= 2 * predicted["replicas_needed"] - 1
    assert measured["cost_per_million_tokens_usd"] > predicted["cost_per_million_tokens_usd"]


def test_estimate_serve_text_names_the_source(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli(*ESTIMATE[:-1], "--profile", str(_profile(tmp_path, 5.0)))
    assert code == 0
    assert "measured throughput and capacity from h100.csv row 2" in out


def test_estimate_serve_profile_of_another_gpu_stays_predicted(cli: Cli,
                                                               tmp_path: Path) -> None:
    code, out, _ = cli("estimate", "serve", "--model", "llama-3-8b", "--gpu", "A100-80GB",
                       "--json", "--price-usd-per-gpu-hour", "2", "--profile",
                       str(_profile(tmp_path, 5.0)))
    payload = json.loads(out)
    assert code == 0
    assert payload["basis"] == "predicted"
    assert any("no measured point matches" in w for w in payload["warnings"])


def test_a_bad_profile_exits_2_naming_file_and_row(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text("model,gpu,prompt_tokens,output_tokens,requests_per_s\n"
                 "llama-3-8b,H100,1000,200,-3\n")
    code, out, err = cli(*ESTIMATE, "--profile", str(f))
    assert code == 2
    assert out == ""
    assert f"{f}: row 2: requests_per_s must be > 0" in err


def _bench(tmp_path: Path) -> Path:
    f = tmp_path / "bench.jsonl"
    base = {"backend": "vllm", "model_id": "meta-llama/Meta-Llama-3-8B", "completed": 100,
            "total_input_tokens": 100_000, "total_output_tokens": 20_000}
    rows = [{**base, "request_rate": "inf", "request_throughput": 12.0,
             "output_throughput": 2400.0},
            {**base, "request_rate": 2.0, "request_throughput": 2.0, "output_throughput": 400.0,
             "median_ttft_ms": 90.0, "p99_ttft_ms": 200.0, "median_tpot_ms": 20.0,
             "p99_tpot_ms": 30.0}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f


def test_calibrate_serve_json(cli: Cli, tmp_path: Path) -> None:
    code, out, err = cli("calibrate", "serve", str(_bench(tmp_path)), "--gpu", "H100", "--json")
    assert code == 0, err
    payload = json.loads(out)
    offline, online = payload["points"]
    rps = {f["figure"]: f for f in offline["figures"]}["requests_per_s"]
    assert rps["measured"] == 12.0
    assert rps["ratio"] == pytest.approx(12.0 / rps["predicted"])
    assert {f["figure"] for f in online["figures"]} == {"ttft_p50_s", "ttft_p95_s",
                                                        "tpot_p50_s", "tpot_p95_s"}
    summary = {s["figure"]: s for s in payload["summary"]}
    assert summary["requests_per_s"]["median_ratio"] == pytest.approx(rps["ratio"])
    assert payload["verdict"].startswith("measured requests_per_s is")
    assert "optimistic" in payload["verdict"]  # 12 req/s is below the model's maximum


def test_calibrate_serve_text(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("calibrate", "serve", str(_bench(tmp_path)), "--gpu", "H100")
    assert code == 0
    assert "bench.jsonl line 1" in out
    assert "requests_per_s" in out
    assert out.strip().splitlines()[-1].startswith("verdict: measured requests_per_s is")


def test_calibrate_serve_without_gpu_exits_2(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("calibrate", "serve", str(_bench(tmp_path)))
    assert code == 2
    assert "line 1: the GPU is not given" in err
