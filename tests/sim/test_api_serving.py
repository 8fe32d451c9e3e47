"""A serving phase on a pay-per-token API (issue 21 item 2): its ledger is tokens × price to
the cent, its provider's rate limit caps what it serves, and self-host vs API is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.cli.scenario_names import load_scenario_file
from costsim.sim.ledger import Category, Component
from costsim.sim.montecarlo import PlanResult, run_plan
from costsim.sim.prepare import prepare_plan

# A price file of the user's own API rows (round figures, so the arithmetic is checkable by
# hand): the provider "acme" charges $0.50 per 1M input and $1.50 per 1M output tokens.
PRICE_FILE = (
    "provider,model,input_usd_per_million_tokens,output_usd_per_million_tokens,"
    "requests_per_minute,tokens_per_minute,ttft_s,output_tokens_per_s,source,effective_date\n"
    "acme,llama-3.1-8b,0.50,1.50,,,0.3,80,quote from acme 2026-11,2026-11-15\n"
    "slowco,llama-3.1-8b,0.10,0.10,,,4.0,,quote from slowco,2026-11-15\n")


def _scenario(tmp_path: Path, use: str, *, slo: str = "") -> Path:
    (tmp_path / "api.csv").write_text(PRICE_FILE, encoding="utf-8")
    path = tmp_path / "api.yaml"
    path.write_text(
        "name: API oracle\nstart: 2027-01-01\nhorizon_months: 1\n"
        "prices: {price_file: api.csv}\n"
        "models:\n  m: {preset: llama-3.1-8b}\n"
        "phases:\n"
        "  - {name: serve, kind: serving, duration_months: 1, model: m,\n"
        "     load: {peak_requests_per_s: 2, diurnal: false},\n"
        f"     requests: {{prompt_tokens: 1000, output_tokens: 200}}{slo}}}\n"
        "plans:\n"
        f"  - name: api\n    use: {{serve: {use}}}\n"
        "  - name: self\n    use: {serve: {gpu: L4}}\n", encoding="utf-8")
    return path


def _run(path: Path, plan: int = 0) -> PlanResult:
    scenario = load_scenario_file(path).scenario
    prep = prepare_plan(scenario, scenario.plans[plan])
    assert prep.feasible, prep.infeasible_reasons
    return run_plan(prep, seed=0, replications=2)


def test_an_api_phase_costs_tokens_times_price_to_the_cent(tmp_path: Path) -> None:
    """A phase of 1 month lasts 30.4375 days (docs/simulator.md "Calendar and billing") =
    2,629,800 s; at a flat 2 requests/s that is 5,259,600 requests of 1000 prompt + 200
    output tokens:
    input 5,259,600 × 1000 = 5,259,600,000 tokens × $0.50 / 1M = $2,629.80,
    output 5,259,600 × 200 = 1,051,920,000 tokens × $1.50 / 1M = $1,577.88,
    total $4,207.68, all in one api-usage line; every request is served."""
    result = _run(_scenario(tmp_path, "{option: api, provider: acme}"))
    assert result.ledger is not None
    (line,) = result.ledger.lines
    assert line.key.category is Category.API_USAGE
    assert line.key.component is Component.API_TOKENS
    assert line.key.option == "api"
    assert line.key.pool == "acme API"
    assert line.amount_usd == pytest.approx(4_207.68, abs=0.005)
    assert result.cost_usd is not None
    assert result.cost_usd.mean == pytest.approx(4_207.68,
                                                                               abs=0.005)
    assert result.metrics is not None
    assert result.metrics.slo_attainment == pytest.approx(1.0)
    # $4,207.68 over 6,311,520,000 tokens = $0.6667 per 1M tokens
    assert result.cost_per_million_tokens_usd == pytest.approx(4_207.68 / 6_311.52, rel=1e-6)
    (price,) = [p for p in result.prices if p.option == "api"]
    assert (price.input_usd_per_million_tokens, price.output_usd_per_million_tokens) == (0.5,
                                                                                          1.5)
    assert "user-override" in price.flags


@pytest.mark.parametrize("limit", ["requests_per_minute: 60", "tokens_per_minute: 72000"])
def test_the_rate_limit_caps_what_the_api_serves(tmp_path: Path, limit: str) -> None:
    """60 requests/min, or 72,000 tokens/min over 1,200 tokens a request, lets 1 request/s
    through of the 2 offered: half the requests are unserved (SLO attainment 0.5) and half the
    tokens are paid for: $4,207.68 / 2 = $2,103.84."""
    result = _run(_scenario(tmp_path, f"{{option: api, provider: acme, {limit}}}"))
    assert result.metrics is not None
    assert result.metrics.slo_attainment == pytest.approx(0.5)
    assert result.cost_usd is not None
    assert result.cost_usd.mean == pytest.approx(2_103.84, abs=0.005)


def test_an_api_slower_than_the_slo_makes_the_plan_infeasible(tmp_path: Path) -> None:
    """slowco's published time to first token (4 s) breaks a 1 s p95 objective: the plan
    cannot work and says why; acme's 0.3 s and 80 tokens/s (12.5 ms a token) meet it."""
    slo = ",\n     slo: {ttft_p95_s: 1.0, tpot_p95_s: 0.05}"
    scenario = load_scenario_file(_scenario(tmp_path, "{option: api, provider: slowco}",
                                            slo=slo)).scenario
    prep = prepare_plan(scenario, scenario.plans[0])
    assert not prep.feasible
    assert "time to first token 4 s > the SLO's 1 s" in prep.infeasible_reasons[0]
    scenario = load_scenario_file(_scenario(tmp_path, "{option: api, provider: acme}",
                                            slo=slo)).scenario
    assert prepare_plan(scenario, scenario.plans[0]).feasible


def test_self_host_vs_api_is_reported_per_serving_phase(tmp_path: Path) -> None:
    """The self-hosted plan's phase names the cheapest API for the model at its request size
    (the shipped deepinfra row, $0.03 in / $0.05 out: (1000 × 0.03 + 200 × 0.05) / 1200 =
    $0.0333 per 1M tokens, below the file's slowco at $0.10) beside its own simulated cost
    per 1M tokens; the API plan reports its own simulated figure."""
    path = _scenario(tmp_path, "{option: api, provider: acme}")
    (api,) = _run(path, 0).api_comparison
    assert api.plan_serves_on == "api"
    assert api.api_provider == "acme"
    assert api.api_cost_per_million_tokens_usd == pytest.approx(4_207.68 / 6_311.52, rel=1e-6)
    (self_host,) = _run(path, 1).api_comparison
    assert self_host.plan_serves_on == "self-host"
    assert self_host.self_host_gpu == "L4"
    assert self_host.api_provider == "deepinfra"
    assert self_host.api_cost_per_million_tokens_usd == pytest.approx(40 / 1200)
    assert self_host.self_host_cost_per_million_tokens_usd is not None
    assert self_host.replica_usd_per_hour is not None
    assert self_host.replica_usd_per_hour > 0


def test_an_api_entry_is_written_back_in_the_files_words(tmp_path: Path) -> None:
    """The optimizer pastes plans as YAML (costsim.scenario.dump): an API entry reads back as
    the same domain entry, in the words a person writes."""
    from costsim.scenario.dump import plan_mapping

    scenario = load_scenario_file(_scenario(
        tmp_path, "{option: api, provider: acme, requests_per_minute: 60, ttft_s: 0.5}")).scenario
    mapping = plan_mapping(scenario.plans[0])
    assert mapping["use"]["serve"] == {"option": "api", "provider": "acme",
                                       "requests_per_minute": 60, "ttft_s": 0.5}


def test_the_optimizers_screen_prices_an_api_phase_at_its_tokens(tmp_path: Path) -> None:
    """The analytic screen (costsim.optimize.screen) costs the API phase as the simulator does
    (no uncertainty in this scenario): $4,207.68, and half of it under a 60/min limit."""
    from costsim.optimize.screen import _serving
    from costsim.sim.prepare import ServingPrep

    for use, usd in (("{option: api, provider: acme}", 4_207.68),
                     ("{option: api, provider: acme, requests_per_minute: 60}", 2_103.84)):
        scenario = load_scenario_file(_scenario(tmp_path, use)).scenario
        prep = prepare_plan(scenario, scenario.plans[0])
        phase = prep.phases["serve"]
        assert isinstance(phase, ServingPrep)
        cost, _ = _serving(scenario, phase, 0.0, prep.sim_defaults)
        assert cost == pytest.approx(usd, abs=0.005)
