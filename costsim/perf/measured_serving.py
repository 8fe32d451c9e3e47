"""Serving capacity from measured points (DESIGN §12; docs/performance.md "Measured serving
profiles"): what a team measured wins over the roofline model for the case it covers.

A point matches a request on model (the same shape, or the same name), canonical GPU, engine,
precision and quantization (a point's empty field means the default: vLLM, the GPU's default
precision, no quantization); a point's empty TP matches any degree. For one request size:

* the maximum throughput is the best offline point's (``request_rate`` empty/inf) exactly;
  without one, the highest throughput any point achieved (a lower bound: no extrapolation);
* the SLO capacity comes from the points with p95 latencies over offered rates: the highest
  rate whose p95 TTFT and TPOT meet the SLO, linear between the last measured rate that meets
  it and the first that does not, never beyond the highest measured rate that meets it (0 when
  the lowest measured rate already fails);
* the sizing rule of :mod:`costsim.perf.sizing` then applies, min(u · max, SLO capacity); points
  without latencies give u · max (the model's predicted latency never lowers a measured
  capacity).

Between two measured sizes the figures are interpolated linearly in log size (basis
``measured``); outside them the model's figures are scaled by the measured / predicted ratio
at the nearest measured size (basis ``predicted-adjusted``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from costsim.domain.architecture import Architecture
from costsim.domain.measurements import Basis, ServingPoint
from costsim.domain.precision import Dtype
from costsim.domain.workload import Quant, ServingEngine
from costsim.errors import name_key
from costsim.perf.serving import ServingEstimate, with_price
from costsim.perf.sizing import (
    ReplicaCapacity,
    SizingBound,
    SizingRule,
    capacity_under_rule,
    replicas_for_rate,
)

# Two request sizes are the same when their prompt and output token counts agree within 1 %
# (a benchmark's mean request size wobbles by a token or two around the size asked for).
SIZE_TOLERANCE = 0.01


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredCapacity:
    """A replica's capacity for one request size, from measured points.

    ``capacity`` has the sizing rule's figures (max, SLO capacity, what sizing divides by);
    ``output_tokens_per_s`` the maximum in output tokens; ``basis`` measured or
    predicted-adjusted; ``profile_source`` the files and rows it rests on; ``ratio`` measured /
    predicted sizing capacity (None where the prediction is 0).
    """

    capacity: ReplicaCapacity
    output_tokens_per_s: float
    basis: Basis
    profile_source: str
    ratio: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class _SizeFigures:
    prompt_tokens: float
    output_tokens: float
    max_requests_per_s: float
    output_tokens_per_s: float
    at_slo_requests_per_s: float | None  # None: no latency curve covers the SLO
    sources: tuple[str, ...]


def same_model(point: ServingPoint, arch: Architecture, model: str) -> bool:
    """The point measured this model: the same name, or the same shape (a config.json of a
    preset, a hub id read as its preset)."""
    if name_key(point.model) == name_key(model):
        return True
    return replace(point.architecture, name="") == replace(arch, name="")


def matching_points(points: Sequence[ServingPoint], *, arch: Architecture, model: str,
                    gpu: str, engine: ServingEngine, precision: Dtype, default_precision: Dtype,
                    quant: Quant, tp: int | None) -> tuple[ServingPoint, ...]:
    """The points that measured this case (module docstring); ``gpu`` canonical, ``tp`` None
    matches any point."""
    return tuple(
        p for p in points
        if p.gpu == gpu and (p.engine or ServingEngine.VLLM) == engine
        and (p.precision or default_precision) == precision
        and (p.quant or Quant.NONE) == quant
        and (p.tp is None or tp is None or p.tp == tp)
        and same_model(p, arch, model))


def measured_tp(points: Sequence[ServingPoint]) -> int | None:
    """The TP degree the points were measured at (the smallest, if they name several), or None
    when none names one: a measured replica is sized as it was measured."""
    degrees = {p.tp for p in points if p.tp is not None}
    return min(degrees) if degrees else None


def _rps(p: ServingPoint) -> float:
    if p.requests_per_s is not None:
        return p.requests_per_s
    assert p.output_tokens_per_s is not None  # the readers require one of the two
    return p.output_tokens_per_s / p.output_tokens


def _otps(p: ServingPoint) -> float:
    if p.output_tokens_per_s is not None:
        return p.output_tokens_per_s
    return _rps(p) * p.output_tokens


def slo_capacity(points: Sequence[ServingPoint], rule: SizingRule) -> float | None:
    """The highest rate whose measured p95 latencies meet the rule's SLO (module docstring), or
    None when no point at an offered rate has every p95 the SLO bounds."""
    parts = [(slo, get) for slo, get in ((rule.slo_ttft_p95_s, _ttft95),
                                         (rule.slo_tpot_p95_s, _tpot95)) if slo is not None]
    if not parts:
        return None
    curve = sorted((p for p in points if p.request_rate_per_s is not None
                    and all(get(p) is not None for _, get in parts)),
                   key=lambda p: p.request_rate_per_s or 0.0)
    if not curve:
        return None

    def rate(p: ServingPoint) -> float:
        assert p.request_rate_per_s is not None
        return p.request_rate_per_s

    def served(p: ServingPoint) -> float:  # a met point counts for what it actually served
        return min(rate(p), _rps(p))

    last_met: ServingPoint | None = None
    for p in curve:
        if all(_value(get, p) <= slo for slo, get in parts):
            last_met = p
            continue
        if last_met is None:
            return 0.0
        ra, rb = rate(last_met), rate(p)
        crossing = rb
        for slo, get in parts:
            la, lb = _value(get, last_met), _value(get, p)
            if lb > slo and lb > la and rb > ra:
                crossing = min(crossing, ra + (slo - la) / (lb - la) * (rb - ra))
        return crossing
    assert last_met is not None
    return served(last_met)


def _ttft95(p: ServingPoint) -> float | None:
    return p.ttft_p95_s


def _tpot95(p: ServingPoint) -> float | None:
    return p.tpot_p95_s


def _value(get: Callable[[ServingPoint], float | None], p: ServingPoint) -> float:
    value = get(p)
    assert value is not None
    return value


def _same(a: float, b: float) -> bool:
    return abs(math.log(a / b)) <= SIZE_TOLERANCE


def _sizes(points: Sequence[ServingPoint], rule: SizingRule) -> list[_SizeFigures]:
    groups: list[list[ServingPoint]] = []
    for p in points:
        for group in groups:
            if _same(group[0].prompt_tokens, p.prompt_tokens) and _same(
                    group[0].output_tokens, p.output_tokens):
                group.append(p)
                break
        else:
            groups.append([p])
    out = []
    for group in groups:
        offline = [p for p in group if p.request_rate_per_s is None]
        best = max(offline or group, key=_rps)
        curve = [p for p in group if p.request_rate_per_s is not None]
        at_slo = slo_capacity(curve, rule)
        used = [best, *(curve if at_slo is not None else [])]
        out.append(_SizeFigures(
            prompt_tokens=group[0].prompt_tokens, output_tokens=group[0].output_tokens,
            max_requests_per_s=_rps(best), output_tokens_per_s=_otps(best),
            at_slo_requests_per_s=at_slo,
            sources=tuple(dict.fromkeys(p.source for p in used))))
    return out


def _capacity(size: _SizeFigures, rule: SizingRule) -> ReplicaCapacity:
    """The sizing rule on measured figures; without a latency curve, u · max (the SLO is
    taken as met up to the measured maximum: the model's latency never lowers it)."""
    top = size.max_requests_per_s
    if size.at_slo_requests_per_s is None:
        return ReplicaCapacity(max_requests_per_s=top, at_slo_requests_per_s=top,
                               requests_per_s=rule.target_utilization * top,
                               bound=SizingBound.TARGET_UTILIZATION, slo_met=True)
    return capacity_under_rule(top, size.at_slo_requests_per_s, rule)


def _distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    return abs(math.log(a[0] / b[0])) + abs(math.log(a[1] / b[1]))


def _between(x: float, a: float, b: float) -> float | None:
    """Where ``x`` lies from ``a`` to ``b`` in log size (0..1), 0 when a = b = x, None when
    outside."""
    if _same(a, b):
        return 0.0 if _same(x, a) else None
    t = math.log(x / a) / math.log(b / a)
    slack = SIZE_TOLERANCE / abs(math.log(b / a))
    if -slack <= t <= 1 + slack:
        return min(max(t, 0.0), 1.0)
    return None


def _bracket(sizes: list[_SizeFigures], prompt: float, output: float
             ) -> tuple[_SizeFigures, _SizeFigures, float] | None:
    """The closest pair of measured sizes the request lies between, and where (0..1)."""
    best: tuple[float, _SizeFigures, _SizeFigures, float] | None = None
    for a, b in combinations(sizes, 2):
        tp_ = _between(prompt, a.prompt_tokens, b.prompt_tokens)
        to = _between(output, a.output_tokens, b.output_tokens)
        if tp_ is None or to is None:
            continue
        moving = [t for t, lo, hi in ((tp_, a.prompt_tokens, b.prompt_tokens),
                                      (to, a.output_tokens, b.output_tokens))
                  if not _same(lo, hi)]
        t = sum(moving) / len(moving)
        span = _distance((a.prompt_tokens, a.output_tokens), (b.prompt_tokens, b.output_tokens))
        if best is None or span < best[0]:
            best = (span, a, b, t)
    return None if best is None else best[1:]


def _lerp(a: float, b: float, t: float) -> float:
    return a + (b - a) * t


def _interpolated(a: _SizeFigures, b: _SizeFigures, t: float, prompt: float,
                  output: float) -> _SizeFigures:
    at_slo = (None if a.at_slo_requests_per_s is None or b.at_slo_requests_per_s is None
              else _lerp(a.at_slo_requests_per_s, b.at_slo_requests_per_s, t))
    top = _lerp(a.max_requests_per_s, b.max_requests_per_s, t)
    return _SizeFigures(prompt_tokens=prompt, output_tokens=output, max_requests_per_s=top,
                        output_tokens_per_s=top * output, at_slo_requests_per_s=at_slo,
                        sources=(*a.sources, *b.sources))


def _ratio(measured: float, predicted: float) -> float | None:
    return measured / predicted if predicted > 0 else None


def measured_capacity(points: Sequence[ServingPoint], prompt_tokens: float,
                      output_tokens: float, rule: SizingRule,
                      predicted: Callable[[float, float], ReplicaCapacity]
                      ) -> MeasuredCapacity | None:
    """A replica's capacity for requests of ``prompt_tokens`` + ``output_tokens`` from the
    matching ``points`` (:func:`matching_points`), or None when there are none.

    ``predicted(prompt, output)`` is the model's capacity for a size under the same rule (for
    the measured / predicted ratio; called at the request's size and, outside the measured
    sizes, at the nearest one).
    """
    if not points:
        return None
    sizes = _sizes(points, rule)
    here = (prompt_tokens, output_tokens)
    exact = [s for s in sizes if _same(s.prompt_tokens, prompt_tokens)
             and _same(s.output_tokens, output_tokens)]
    model_here = predicted(prompt_tokens, output_tokens)
    if exact:
        size = exact[0]
        sized = _capacity(size, rule)
        return MeasuredCapacity(capacity=sized, output_tokens_per_s=size.output_tokens_per_s,
                                basis=Basis.MEASURED, profile_source="; ".join(size.sources),
                                ratio=_ratio(sized.requests_per_s, model_here.requests_per_s))
    pair = _bracket(sizes, prompt_tokens, output_tokens)
    if pair is not None:
        a, b, t = pair
        size = _interpolated(a, b, t, prompt_tokens, output_tokens)
        sized = _capacity(size, rule)
        source = ("interpolated in log size between " + "; ".join(a.sources) + " and "
                  + "; ".join(b.sources))
        return MeasuredCapacity(capacity=sized, output_tokens_per_s=size.output_tokens_per_s,
                                basis=Basis.MEASURED, profile_source=source,
                                ratio=_ratio(sized.requests_per_s, model_here.requests_per_s))
    near = min(sizes, key=lambda s: _distance((s.prompt_tokens, s.output_tokens), here))
    measured_near = _capacity(near, rule)
    model_near = predicted(near.prompt_tokens, near.output_tokens)
    r_max = _ratio(measured_near.max_requests_per_s, model_near.max_requests_per_s)
    r_cap = _ratio(measured_near.requests_per_s, model_near.requests_per_s)
    if r_max is None or r_cap is None:
        return None  # the model serves nothing at the measured size: nothing to scale
    top = model_here.max_requests_per_s * r_max
    sized = ReplicaCapacity(
        max_requests_per_s=top,
        at_slo_requests_per_s=model_here.at_slo_requests_per_s * r_cap,
        requests_per_s=min(model_here.requests_per_s * r_cap, top),
        bound=model_here.bound, slo_met=model_here.slo_met and r_cap > 0)
    source = (f"model x {r_cap:.3g} (measured / predicted capacity at "
              f"{near.prompt_tokens:g}+{near.output_tokens:g} tokens: "
              + "; ".join(near.sources) + ")")
    return MeasuredCapacity(capacity=sized, output_tokens_per_s=top * output_tokens,
                            basis=Basis.PREDICTED_ADJUSTED, profile_source=source, ratio=r_cap)


def sizing_rule_of(est: ServingEstimate) -> SizingRule:
    """The rule an estimate was sized by."""
    return SizingRule(target_utilization=est.target_utilization, slo_ttft_p95_s=est.slo_ttft_s,
                      slo_tpot_p95_s=est.slo_tpot_s, slo_source=est.slo_source)


def predicted_capacity(est: ServingEstimate) -> ReplicaCapacity:
    """The model's capacity in an estimate, as the sizing rule left it."""
    return capacity_under_rule(est.max_requests_per_s, est.max_requests_per_s_at_slo or 0.0,
                               sizing_rule_of(est))


def with_measurements(est: ServingEstimate, points: Sequence[ServingPoint], *,
                      arch: Architecture, default_precision: Dtype,
                      predict: Callable[[int, int], ServingEstimate],
                      latency: Callable[[float], tuple[float, float, float, float]] | None = None
                      ) -> ServingEstimate:
    """``est`` with its throughput, SLO capacity, replicas and cost per token from the
    ``points`` that match it (module docstring), ``basis`` and ``profile_source`` set; ``est``
    with a warning when none matches. ``predict(prompt, output)`` is the model's estimate of
    the same replica for another request size (the ratio outside the measured sizes);
    ``latency(rate)`` the model's (TTFT, TPOT, p95 TTFT, p95 TPOT) of one replica at a rate,
    to report latencies at the load the measured capacity sets."""
    match = matching_points(points, arch=arch, model=est.model, gpu=est.gpu, engine=est.engine,
                            precision=est.precision, default_precision=default_precision,
                            quant=est.quant, tp=est.gpus_per_replica)
    rule = sizing_rule_of(est)

    def predicted(prompt: float, output: float) -> ReplicaCapacity:
        if round(prompt) == est.prompt_tokens and round(output) == est.output_tokens:
            return predicted_capacity(est)
        other = predict(max(1, round(prompt)), max(1, round(output)))
        return predicted_capacity(other)

    measured = measured_capacity(match, est.prompt_tokens, est.output_tokens, rule, predicted)
    if measured is None:
        return replace(est, warnings=(*est.warnings, (
            f"no measured point matches {est.model} on {est.gpus_per_replica} x {est.gpu} "
            f"({est.engine}, {est.precision}, quant {est.quant}): figures are predicted")))
    out = apply_measured(est, measured)
    if latency is not None and out.replicas_needed is not None and out.load_requests_per_s:
        ttft, tpot, ttft95, tpot95 = latency(out.load_requests_per_s)
        out = replace(out, ttft_s=ttft, tpot_s=tpot, ttft_p95_s=ttft95, tpot_p95_s=tpot95)
    return out


def apply_measured(est: ServingEstimate, measured: MeasuredCapacity) -> ServingEstimate:
    """``est`` with the measured capacity's figures and everything that follows from them:
    replicas for the rate, the load per replica, cost per token (latencies unchanged)."""
    cap = measured.capacity
    replicas: int | None = None
    load: float | None = None
    warnings = list(est.warnings)
    if est.rate_requests_per_s is not None and cap.requests_per_s > 0:
        replicas = int(replicas_for_rate(est.rate_requests_per_s, cap.requests_per_s))
        load = est.rate_requests_per_s / replicas
    if not cap.slo_met:
        warnings.append("the measured latencies do not meet the SLO at any measured rate")
    out = replace(
        est, max_requests_per_s=cap.max_requests_per_s,
        output_tokens_per_s=measured.output_tokens_per_s,
        max_requests_per_s_at_slo=cap.at_slo_requests_per_s,
        capacity_requests_per_s=cap.requests_per_s, sizing_rule=cap.bound,
        slo_met=cap.slo_met, replicas_needed=replicas,
        load_requests_per_s=load if replicas is not None else est.load_requests_per_s,
        utilization=(None if load is None or cap.max_requests_per_s <= 0
                     else load / cap.max_requests_per_s),
        basis=measured.basis, profile_source=measured.profile_source,
        measured_over_predicted=measured.ratio, warnings=tuple(warnings))
    return with_price(out, est.price_usd_per_gpu_hour)
