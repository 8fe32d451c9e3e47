"""``option: api`` in scenario files: what validate refuses (exit 2, one line each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Cli

HEAD = ("name: api\nstart: 2027-01-01\nhorizon_months: 2\n"
        "models:\n  m: {preset: llama-3.1-8b}\n"
        "phases:\n"
        "  - {name: tune, kind: training, model: m, task: finetune, tokens: 1000000,\n"
        "     lora_rank: 16}\n"
        "  - {name: serve, kind: serving, after: [tune], duration_months: 1, model: m,\n"
        "     load: {peak_requests_per_s: 2}, requests: {prompt_tokens: 500, "
        "output_tokens: 100}}\n")


def _write(tmp_path: Path, serve: str, tune: str = "{gpu: H100, count: 1}",
           prices: str = "") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + prices + f"plans:\n  - name: p\n    use: {{tune: {tune}, "
                    f"serve: {serve}}}\n", encoding="utf-8")
    return path


def test_an_api_use_entry_validates(cli: Cli, tmp_path: Path) -> None:
    result = cli("validate", str(_write(tmp_path, "{option: api, provider: groq, "
                                                   "requests_per_minute: 300}")))
    assert result.code == 0, result.err


@pytest.mark.parametrize(("serve", "tune", "says"), [
    ("{option: api}", "{gpu: H100, count: 1}", "needs a provider"),
    ("{option: api, provider: groq, gpu: L4}", "{gpu: H100, count: 1}", "leave gpu out"),
    ("{gpu: L4, provider: groq}", "{gpu: H100, count: 1}", "go(es) with option 'api'"),
    ("{option: api, provider: groq, requests_per_minute: 0}", "{gpu: H100, count: 1}",
     "requests_per_minute"),
    ("{gpu: L4}", "{option: api, provider: groq}", "only a serving phase may call one"),
    ("{fleet: [{option: api, provider: groq}, {gpu: L4}]}", "{gpu: H100, count: 1}",
     "cannot be part of a fleet"),
])
def test_a_misused_api_entry_is_one_line_exit_2(cli: Cli, tmp_path: Path, serve: str,
                                                tune: str, says: str) -> None:
    result = cli("validate", str(_write(tmp_path, serve, tune)))
    assert result.code == 2
    assert says in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err


def test_a_bad_row_of_the_scenarios_api_price_file_is_one_line_exit_2(cli: Cli,
                                                                      tmp_path: Path) -> None:
    (tmp_path / "api.csv").write_text(
        "provider,model,input_usd_per_million_tokens,output_usd_per_million_tokens,source,"
        "effective_date\nacme,llama-3.1-8b,0.5,-1,quote,2026-11-15\n", encoding="utf-8")
    path = _write(tmp_path, "{option: api, provider: acme}",
                  prices="prices: {price_file: api.csv}\n")
    result = cli("validate", str(path))
    assert result.code == 2
    assert "api.csv:2:4: output_usd_per_million_tokens" in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err


def test_prices_breakeven_model_sets_a_gpu_against_every_api(cli: Cli, tmp_path: Path) -> None:
    """A user API row (the price file) joins the shipped ones; each API's cost per 1M tokens
    is its price per request of 1000 + 200 tokens; the break-even agrees with the rule."""
    import json
    import math

    path = tmp_path / "api.csv"
    path.write_text("provider,model,input_usd_per_million_tokens,output_usd_per_million_tokens,"
                    "source,effective_date\nacme,llama-3.1-8b,0.5,1.5,quote,2026-11-15\n",
                    encoding="utf-8")
    result = cli("prices", "--breakeven", "--model", "llama-3.1-8b", "--gpu", "L4",
                 "--prompt-tokens", "1000", "--output-tokens", "200", "--price-file", str(path),
                 "--json")
    assert result.code == 0, result.err
    out = json.loads(result.out)["api_breakeven"]
    acme = next(a for a in out["apis"] if a["provider"] == "acme")
    # (1000 × 0.5 + 200 × 1.5) / 1200 tokens = $0.6667 per 1M tokens
    assert acme["cost_per_million_tokens_usd"] == pytest.approx(800 / 1200, rel=1e-6)
    replica_usd, capacity = out["replica_usd_per_hour"], out["replica_requests_per_s"]
    x = 3600 * 0.0008  # the API's $/h per request/s
    steps = math.ceil(replica_usd / (x * capacity - replica_usd)) - 1
    assert acme["breakeven_requests_per_s"] == pytest.approx((steps + 1) * replica_usd / x,
                                                             rel=1e-4)
    assert len({a["provider"] for a in out["apis"]}) >= 5
    result = cli("prices", "--breakeven", "--model", "llama-3.1-8b")
    assert result.code == 2
    assert "give --gpu too" in result.err


def test_run_reports_self_host_vs_api_in_text_html_and_json(cli: Cli, tmp_path: Path) -> None:
    import json

    path = tmp_path / "s.yaml"
    path.write_text(
        "name: api vs L4\nstart: 2027-01-01\nhorizon_months: 1\n"
        "models:\n  m: {preset: llama-3.1-8b}\n"
        "phases:\n  - {name: serve, kind: serving, duration_months: 1, model: m,\n"
        "     load: {peak_requests_per_s: 2}, requests: {prompt_tokens: 500, "
        "output_tokens: 100}}\n"
        "plans:\n  - name: api\n    use: {serve: {option: api, provider: deepinfra}}\n"
        "  - name: l4\n    use: {serve: {gpu: L4}}\n", encoding="utf-8")
    out = tmp_path / "report"
    result = cli("run", str(path), "--replications", "2", "--out", str(out))
    assert result.code == 0, result.err
    assert "Self-host or call an API" in result.out
    assert "never: the API is cheaper at every rate" in result.out
    assert "Self-host or call an API?" in (out / "report.html").read_text(encoding="utf-8")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    plans = {p["name"]: p for p in summary["plans"]}
    assert plans["api"]["by_category"] == {"api-usage": plans["api"]["cost_usd"]["mean"]}
    (row,) = plans["l4"]["api_comparison"]
    assert row["plan_serves_on"] == "self-host"
    assert row["api_provider"] == "deepinfra"
