"""Measured serving capacity (DESIGN §12): matching, the capacity rules, interpolation."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.catalog.models import load_preset
from costsim.domain.measurements import Basis, ServingPoint
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant, ServingEngine
from costsim.perf.measured_serving import (
    matching_points,
    measured_capacity,
    measured_tp,
    slo_capacity,
)
from costsim.perf.sizing import ReplicaCapacity, SizingBound, SizingRule, SloSource

ARCH = load_preset("llama-3-8b").architecture
RULE = SizingRule(target_utilization=0.7, slo_ttft_p95_s=1.0, slo_tpot_p95_s=0.05,
                  slo_source=SloSource.GIVEN)


def _point(**kw: object) -> ServingPoint:
    base: dict[str, object] = {"model": "llama-3-8b", "architecture": ARCH, "gpu": "H100",
                               "prompt_tokens": 1000.0, "output_tokens": 200.0,
                               "requests_per_s": 10.0, "source": "p.csv row 2"}
    return ServingPoint(**{**base, **kw})  # type: ignore[arg-type]


def _model(max_rps: float = 20.0) -> object:
    def predicted(prompt: float, output: float) -> ReplicaCapacity:
        top = max_rps * 1200.0 / (prompt + output)
        return ReplicaCapacity(max_requests_per_s=top, at_slo_requests_per_s=top,
                               requests_per_s=0.7 * top,
                               bound=SizingBound.TARGET_UTILIZATION, slo_met=True)
    return predicted


def test_matching_defaults_engine_precision_quant_and_tp() -> None:
    points = [_point(), _point(engine=ServingEngine.SGLANG), _point(gpu="A100-80GB"),
              _point(tp=2), _point(quant=Quant.FP8),
              _point(model="my-llama", architecture=replace(ARCH, name="my-llama"))]

    def match(tp: int | None) -> int:
        return len(matching_points(points, arch=ARCH, model="llama-3-8b", gpu="H100",
                                   engine=ServingEngine.VLLM, precision=Dtype.BF16,
                                   default_precision=Dtype.BF16, quant=Quant.NONE, tp=tp))
    assert match(1) == 2  # the default row and the same shape under another name
    assert match(2) == 3  # + the tp=2 row
    assert match(None) == 3
    assert measured_tp(points) == 2


def test_offline_row_sets_the_maximum_exactly_without_latency_u_times_rps() -> None:
    got = measured_capacity([_point(requests_per_s=8.0, output_tokens_per_s=1650.0)],
                            1000, 200, RULE, _model())  # type: ignore[arg-type]
    assert got is not None
    assert got.basis is Basis.MEASURED
    assert got.capacity.max_requests_per_s == 8.0
    assert got.output_tokens_per_s == 1650.0
    assert got.capacity.requests_per_s == pytest.approx(0.7 * 8.0)
    assert got.ratio == pytest.approx(0.7 * 8.0 / (0.7 * 20.0))
    assert got.profile_source == "p.csv row 2"


def _curve() -> list[ServingPoint]:
    return [_point(request_rate_per_s=r, requests_per_s=r, ttft_p95_s=t, tpot_p95_s=o,
                   source=f"row {i}")
            for i, (r, t, o) in enumerate([(2, 0.2, 0.02), (4, 0.4, 0.03), (6, 0.8, 0.04),
                                           (8, 1.6, 0.07)])]


def test_slo_capacity_interpolates_between_measured_rates() -> None:
    # TTFT crosses 1.0 s a quarter of the way from 6 to 8 (0.8 → 1.6), TPOT crosses 0.05 a
    # third of the way (0.04 → 0.07): the earlier crossing wins
    assert slo_capacity(_curve(), RULE) == pytest.approx(6 + 2 * 0.25)


def test_slo_capacity_never_extrapolates_and_is_zero_when_the_lowest_rate_fails() -> None:
    loose = replace(RULE, slo_ttft_p95_s=10.0, slo_tpot_p95_s=1.0)
    assert slo_capacity(_curve(), loose) == 8.0
    tight = replace(RULE, slo_ttft_p95_s=0.1)
    assert slo_capacity(_curve(), tight) == 0.0
    no_latency = [_point(request_rate_per_s=2.0)]
    assert slo_capacity(no_latency, RULE) is None


def test_latency_curve_gives_the_slo_capacity_under_the_rule() -> None:
    offline = _point(requests_per_s=12.0, source="offline")
    got = measured_capacity([offline, *_curve()], 1000, 200, RULE,
                            _model())  # type: ignore[arg-type]
    assert got is not None
    cap = got.capacity
    assert cap.max_requests_per_s == 12.0
    assert cap.at_slo_requests_per_s == pytest.approx(6.5)
    assert cap.requests_per_s == pytest.approx(6.5)
    assert cap.bound is SizingBound.SLO
    # a given SLO no measured rate meets leaves no capacity (the model is not asked)
    none = measured_capacity([offline, *_curve()], 1000, 200,
                             replace(RULE, slo_ttft_p95_s=0.1), _model())  # type: ignore[arg-type]
    assert none is not None
    assert none.capacity.requests_per_s == 0.0


def test_outside_the_measured_sizes_the_model_is_scaled_by_the_nearest_ratio() -> None:
    points = [_point(requests_per_s=10.0), _point(prompt_tokens=2000.0, requests_per_s=4.0)]
    got = measured_capacity(points, 4000, 200, RULE, _model())  # type: ignore[arg-type]
    assert got is not None
    assert got.basis is Basis.PREDICTED_ADJUSTED
    ratio = 4.0 / (20.0 * 1200 / 2200)  # measured / predicted maximum at 2000+200
    assert got.capacity.max_requests_per_s == pytest.approx(20.0 * 1200 / 4200 * ratio)
    assert "2000+200" in got.profile_source


@settings(max_examples=60, deadline=None)
@given(st.floats(0.5, 50), st.floats(0.5, 50), st.floats(0.0, 1.0))
def test_interpolation_between_two_sizes_lies_between_them(a: float, b: float,
                                                           t: float) -> None:
    points = [_point(prompt_tokens=500.0, requests_per_s=a),
              _point(prompt_tokens=4000.0, requests_per_s=b)]
    prompt = 500.0 * (4000.0 / 500.0) ** t
    got = measured_capacity(points, prompt, 200, RULE, _model())  # type: ignore[arg-type]
    assert got is not None
    assert got.basis is Basis.MEASURED
    top = got.capacity.max_requests_per_s
    assert min(a, b) * (1 - 1e-12) <= top <= max(a, b) * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.1, 100), st.floats(1.0, 3.0), st.booleans())
def test_capacity_is_monotone_in_measured_throughput(rps: float, factor: float,
                                                     outside: bool) -> None:
    prompt = 3000.0 if outside else 1000.0

    def capacity(value: float) -> float:
        got = measured_capacity([_point(requests_per_s=value)], prompt, 200, RULE,
                                _model())  # type: ignore[arg-type]
        assert got is not None
        return got.capacity.requests_per_s

    assert capacity(rps * factor) >= capacity(rps)
