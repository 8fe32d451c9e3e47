"""Serving fleet sizing: the rule, its defaults, replicas for a rate, and the issue-8 example."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from costsim.domain.performance import PerfDefaults
from costsim.errors import InputError
from costsim.perf.latency import latency_at_load, max_rate_at_slo
from costsim.perf.sizing import (
    MAX_DEFAULT_UTILIZATION,
    MAX_REPLICAS,
    SizingBound,
    SizingRule,
    SloSource,
    capacity_under_rule,
    replicas_for_rate,
    sizing_rule,
)
from tests.perf.test_serving import _serve, _terms

HEADROOM = 0.9  # issue 8: replicas x max throughput >= rate / 0.9


def _rule(u: float = 0.7, source: SloSource = SloSource.DEFAULT) -> SizingRule:
    return SizingRule(target_utilization=u, slo_ttft_p95_s=2.0, slo_tpot_p95_s=0.1,
                      slo_source=source)


def test_shipped_defaults_leave_headroom_and_name_their_slo(defaults: PerfDefaults) -> None:
    serving = defaults.serving
    assert serving.target_utilization <= MAX_DEFAULT_UTILIZATION
    assert serving.default_slo_ttft_p95_s == 2.0  # MLPerf Inference Server TTFT limit
    assert serving.default_slo_tpot_p95_s == 0.1  # MLPerf llama3_1-8b Server TPOT limit
    for key in ("target_utilization", "default_slo_ttft_p95_s", "default_slo_tpot_p95_s"):
        assert serving.sources[key]


def test_issue8_example_36_rps_on_h100_is_sized_with_headroom(defaults: PerfDefaults) -> None:
    """`estimate serve --model llama-3-8b --gpu H100 --rate 36` used to size 1 replica at 100 %
    of its then 36.1 req/s maximum (p95 TTFT 7.6 s); since issue 18's fourth serving round (vLLM's
    decode attention factor) one replica peaks at 26.5 req/s."""
    est = _serve(defaults, rate_requests_per_s=36.0)
    assert est.max_requests_per_s == pytest.approx(26.5, abs=0.05)
    assert est.replicas_needed is not None
    assert est.replicas_needed * est.max_requests_per_s >= 36.0 / HEADROOM
    assert est.slo_source is SloSource.DEFAULT
    assert est.slo_ttft_s is not None
    assert est.ttft_p95_s <= est.slo_ttft_s
    assert est.slo_tpot_s is not None
    assert est.tpot_p95_s <= est.slo_tpot_s
    assert est.sizing_rule is SizingBound.TARGET_UTILIZATION
    assert est.load_requests_per_s == pytest.approx(36.0 / est.replicas_needed)
    assert est.utilization == pytest.approx(est.load_requests_per_s / est.max_requests_per_s)
    assert est.utilization <= est.target_utilization


def test_old_behaviour_is_one_flag_away(defaults: PerfDefaults) -> None:
    """--target-utilization 1 with a loose given SLO sizes at 100 % again, with a warning (at
    99.7 % of one replica's maximum, as issue 8's 36 of 36.1 req/s was)."""
    peak = _serve(defaults).max_requests_per_s
    est = _serve(defaults, rate_requests_per_s=0.997 * peak, target_utilization=1.0,
                 slo_ttft_s=100.0)
    assert est.replicas_needed == 1
    assert est.ttft_p95_s > 5.0
    assert any("headroom" in w for w in est.warnings)


def test_given_slo_replaces_the_default_as_a_whole(defaults: PerfDefaults) -> None:
    rule = sizing_rule(defaults.serving, slo_ttft_s=0.5)
    assert (rule.slo_ttft_p95_s, rule.slo_tpot_p95_s) == (0.5, None)
    assert rule.slo_source is SloSource.GIVEN
    default = sizing_rule(defaults.serving)
    assert default.slo_source is SloSource.DEFAULT
    assert default.target_utilization == defaults.serving.target_utilization
    with pytest.raises(InputError, match="--target-utilization"):
        sizing_rule(defaults.serving, target_utilization=1.5)


def test_tight_given_slo_binds_before_the_utilization(defaults: PerfDefaults) -> None:
    est = _serve(defaults, rate_requests_per_s=36.0, slo_ttft_s=0.05)
    assert est.sizing_rule is SizingBound.SLO
    assert est.capacity_requests_per_s == est.max_requests_per_s_at_slo
    assert est.capacity_requests_per_s < 0.7 * est.max_requests_per_s
    assert est.ttft_p95_s <= 0.05


def test_default_slo_out_of_reach_falls_back_to_utilization(defaults: PerfDefaults) -> None:
    """A default SLO nobody asked for must not leave the fleet unsized (shown with a default
    TTFT of 1 ms, which no prefill meets)."""
    strict = replace(defaults.serving, default_slo_ttft_p95_s=0.001)
    est = _serve(defaults, rate_requests_per_s=10.0, assumptions=strict)
    assert not est.slo_met
    assert est.sizing_rule is SizingBound.TARGET_UTILIZATION
    assert est.replicas_needed == math.ceil(10.0 / (0.7 * est.max_requests_per_s))
    assert any("default SLO (p95 TTFT <= 0.001 s" in w for w in est.warnings)


def test_capacity_under_rule_cases() -> None:
    by_u = capacity_under_rule(10.0, 9.5, _rule())
    assert (by_u.requests_per_s, by_u.bound, by_u.slo_met) == (7.0, SizingBound.TARGET_UTILIZATION,
                                                               True)
    assert by_u.utilization == pytest.approx(0.7)
    by_slo = capacity_under_rule(10.0, 4.0, _rule())
    assert (by_slo.requests_per_s, by_slo.bound) == (4.0, SizingBound.SLO)
    unmet_default = capacity_under_rule(10.0, 0.0, _rule())
    assert (unmet_default.requests_per_s, unmet_default.slo_met) == (7.0, False)
    unmet_given = capacity_under_rule(10.0, 0.0, _rule(source=SloSource.GIVEN))
    assert (unmet_given.requests_per_s, unmet_given.bound) == (0.0, SizingBound.SLO)


def test_replicas_for_rate_is_exact_at_whole_multiples_and_vectorized() -> None:
    capacity = 25.266530993973810
    assert int(replicas_for_rate(3 * capacity, capacity)) == 3
    assert int(replicas_for_rate(3 * capacity * (1 + 1e-6), capacity)) == 4
    assert int(replicas_for_rate(0.0, capacity)) == 0
    rates = np.array([0.0, 1.0, 25.0, 26.0, 100.0])
    assert list(replicas_for_rate(rates, capacity)) == [0, 1, 1, 2, 4]
    for bad_rate, bad_capacity, message in ((-1.0, 1.0, "rates"), (math.inf, 1.0, "rates"),
                                            (1.0, 0.0, "capacity"),
                                            (1e300, 1e-3, "more than 1,000,000,000")):
        with pytest.raises(ValueError, match=message):
            replicas_for_rate(bad_rate, bad_capacity)


@settings(max_examples=100, deadline=None)
@given(max_rps=st.floats(1e-3, 1e4), slo_share=st.floats(0.0, 1.0),
       u=st.floats(0.05, MAX_DEFAULT_UTILIZATION), source=st.sampled_from(SloSource),
       low=st.floats(0.0, 1e5), extra=st.floats(0.0, 1e5))
def test_replicas_never_fall_as_rate_rises_and_keep_headroom(
        max_rps: float, slo_share: float, u: float, source: SloSource, low: float,
        extra: float) -> None:
    capacity = capacity_under_rule(max_rps, slo_share * max_rps, _rule(u, source))
    if capacity.requests_per_s <= 0:
        return  # a given SLO no load meets: no fleet is sized (tested above)
    high = low + extra
    assume(high / capacity.requests_per_s <= MAX_REPLICAS)  # beyond that: refused (below)
    n_low, n_high = (int(n) for n in replicas_for_rate([low, high], capacity.requests_per_s))
    assert n_low <= n_high
    for rate, n in ((low, n_low), (high, n_high)):
        assert n * max_rps >= rate / HEADROOM * (1 - 1e-11)
        assert n * capacity.requests_per_s >= rate * (1 - 1e-11)


@settings(max_examples=10, deadline=None)
@given(low=st.floats(0.5, 200.0), extra=st.floats(0.0, 200.0))
def test_sized_fleet_meets_its_slo_and_headroom_at_any_rate(defaults: PerfDefaults, low: float,
                                                            extra: float) -> None:
    """Through the whole estimate: replicas never fall as the rate rises, the fleet keeps 10 %
    headroom, and the p95 latencies at the sized load meet the default SLO."""
    a = _serve(defaults, rate_requests_per_s=low)
    b = _serve(defaults, rate_requests_per_s=low + extra)
    assert a.replicas_needed is not None
    assert b.replicas_needed is not None
    assert a.replicas_needed <= b.replicas_needed
    for est in (a, b):
        assert est.rate_requests_per_s is not None
        assert est.replicas_needed is not None
        assert est.replicas_needed * est.max_requests_per_s >= (
            est.rate_requests_per_s / HEADROOM)
        assert est.slo_ttft_s is not None
        assert est.ttft_p95_s <= est.slo_ttft_s
        assert est.slo_tpot_s is not None
        assert est.tpot_p95_s <= est.slo_tpot_s


def test_slo_boundary_is_found_to_high_precision(defaults: PerfDefaults) -> None:
    """The grid refinement returns a rate that meets the SLO, just below one that does not."""
    base = _serve(defaults)
    terms = _terms(defaults)
    for slo_ttft in (0.03, 0.1, 0.5):
        rate = max_rate_at_slo(terms, 512, 256, base.max_batch,  # type: ignore[arg-type]
                               base.max_requests_per_s, defaults.serving, slo_ttft, None)
        assert 0 < rate < base.max_requests_per_s
        lat = latency_at_load(terms, [rate, rate * (1 + 1e-6)], 512, 256,  # type: ignore[arg-type]
                              base.max_batch, base.max_requests_per_s, defaults.serving)
        assert lat.ttft_p95_s[0] <= slo_ttft < lat.ttft_p95_s[1]


def test_absurd_rate_is_refused_naming_the_flag(defaults: PerfDefaults) -> None:
    with pytest.raises(InputError, match="--rate"):
        _serve(defaults, rate_requests_per_s=1e308)
