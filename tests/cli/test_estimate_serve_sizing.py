"""``estimate serve`` names the rule that sized the fleet, the load its latencies are at, and
quantization advice (issue 8 item 5)."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Cli

# Issue 8's example asked 36 req/s; since issue 18's fourth serving round one bf16 replica peaks at
# 26.5 req/s and FP8 needs an FP8 KV cache to serve 36 on one GPU, so 30 req/s shows the same.
EXAMPLE = ("estimate", "serve", "--model", "llama-3-8b", "--gpu", "H100", "--rate", "30",
           "--price-usd-per-gpu-hour", "2")


def test_json_names_the_sizing_rule_and_the_load(cli: Cli) -> None:
    code, out, err = cli(*EXAMPLE, "--json")
    assert code == 0, err
    p = json.loads(out)
    assert p["sizing_rule"] == "target-utilization"
    assert p["target_utilization"] == 0.7
    assert (p["slo_ttft_p95_s"], p["slo_tpot_p95_s"], p["slo_source"]) == (2.0, 0.1, "default")
    assert p["slo_met"] is True
    assert p["capacity_requests_per_s_per_replica"] == pytest.approx(
        0.7 * p["max_requests_per_s"])
    assert p["replicas_needed"] * p["max_requests_per_s"] >= 30 / 0.9
    assert p["load_requests_per_s_per_replica"] == pytest.approx(30 / p["replicas_needed"])
    assert p["utilization"] == pytest.approx(p["load_requests_per_s_per_replica"]
                                             / p["max_requests_per_s"])
    assert p["ttft_p95_s"] <= p["slo_ttft_p95_s"]
    assert p["advice"][0].startswith(
        "--precision fp8 --quant fp8 --kv-dtype fp8 serves 30 req/s on 1 GPU")


def test_table_says_the_rule_and_the_load(cli: Cli) -> None:
    code, out, err = cli(*EXAMPLE)
    assert code == 0, err
    assert "30 req/s over 2 replicas = 15.00 req/s per replica (57% of max)" in out
    assert "p95 TTFT <= 2 s, TPOT <= 100 ms (default)" in out
    assert "= target utilization 70% of max" in out
    assert "advice: --precision fp8 --quant fp8" in out
    assert max(len(line) for line in out.splitlines() if not line.startswith("advice")) <= 120


def test_without_rate_latency_is_idle_and_said_so(cli: Cli) -> None:
    code, out, _ = cli("estimate", "serve", "--model", "llama-3-8b",
                       "--price-usd-per-gpu-hour", "2")
    assert code == 0
    assert "idle replica, batch 1" in out


def test_given_slo_and_target_utilization(cli: Cli) -> None:
    code, out, err = cli(*EXAMPLE, "--slo-ttft-s", "0.05", "--target-utilization", "0.8",
                         "--json")
    assert code == 0, err
    p = json.loads(out)
    assert (p["slo_source"], p["slo_ttft_p95_s"], p["slo_tpot_p95_s"]) == ("given", 0.05, None)
    assert p["target_utilization"] == 0.8
    assert p["sizing_rule"] == "slo"


@pytest.mark.parametrize("value", ["0", "1.5", "nan", "x"])
def test_bad_target_utilization_exits_2(cli: Cli, value: str) -> None:
    code, out, err = cli(*EXAMPLE, "--target-utilization", value)
    assert code == 2
    assert out == ""
    assert "--target-utilization" in err
    assert err.count("\n") == 1


def test_little_headroom_is_a_warning(cli: Cli) -> None:
    code, out, _ = cli(*EXAMPLE, "--target-utilization", "0.95", "--json")
    assert code == 0
    assert any("headroom" in w for w in json.loads(out)["warnings"])


def test_model_too_big_names_the_quantization_that_fits(cli: Cli) -> None:
    code, out, err = cli("estimate", "serve", "--model", "llama-3-70b", "--gpu", "T4")
    assert code == 2
    assert out == ""
    assert "does not fit 8 x T4" in err
    assert "--quant int8 fits: 8 x T4 per replica" in err
    assert err.count("\n") == 1


def test_help_names_the_shipped_defaults(cli: Cli) -> None:
    from costsim.catalog.perf_defaults import perf_defaults

    serving = perf_defaults().serving
    code, out, _ = cli("estimate", "serve", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert f"default {serving.target_utilization:.2f}" in text
    assert f"p95 TTFT <= {serving.default_slo_ttft_p95_s:g} s" in text
    assert f"TPOT <= {serving.default_slo_tpot_p95_s:g} s" in text
