"""The reservation round: commitments sized on a finalist's simulated demand, as plan variants
(issue 11 item 3, in the search).

For each GPU type the plan rents on demand in an experiments or serving phase (long phases;
a training run's GPUs come from a commitment only when it is free for the whole run, and runs
are short), the finalist's pooled demand histogram (:class:`costsim.sim.demand.DemandHistogram`)
is sized with :func:`costsim.optimize.reservation.size_reservation` for every term and payment
the price book sells, on the offering the simulator would price the commitment on
(:func:`costsim.sim.capacity.plan_commitments`). The option with the largest saving gives two
variants, its cost minimum and its balanced point: the commitment plus the phase's use entries
drawing on it, with the rest spilling on demand.

**Commitment start and window** (docs/optimizer.md). A GPU type one experiments or serving
phase alone uses long is reserved when that phase starts, in every replication (the simulator's
implied commitment), for the terms that cover it, sized on its window's demand pooled over all
replications (``PlanResult.gpu_demand_in_phases``). Terms renewed back to back, or a type several
long phases use, keep a calendar window from the first replication's dates: the commitment is
bought on the day the first such phase starts and held until the last ends, sized on the pooled
histogram less the hours outside the window (or the first replication's hours in it when another
phase used the type outside). Either way the on-demand rate saved carries the scenario's mean
price drift over the window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

import numpy as np

from costsim.catalog.commit_prices import savings_plan_offered, savings_plan_terms
from costsim.catalog.prices import PriceBook
from costsim.domain.commitments import SavingsPlan, SavingsPlanScope
from costsim.domain.phases import PhaseKind
from costsim.domain.plans import Commitment, PhaseUse, Plan
from costsim.domain.pricing import Offering, Payment, PurchaseOption
from costsim.domain.reservation import ReservationTerms
from costsim.domain.scenario import Scenario
from costsim.optimize.reservation import CommitmentLevel, ReservationSizing, size_reservation
from costsim.optimize.screen import price_drift
from costsim.sim.capacity import plan_commitments
from costsim.sim.demand import DemandHistogram
from costsim.sim.montecarlo import PlanResult
from costsim.units import HOURS_PER_YEAR, SECONDS_PER_HOUR

TERMS_YEARS = (1, 3)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReservationVariant:
    """A finalist with commitments sized on its demand."""

    plan: Plan
    gpu: str
    sizing: ReservationSizing
    level: CommitmentLevel
    point: str  # "optimum" or "balanced"
    start_day: str  # ISO date the commitment starts (the first replication's, at_phase set)
    at_phase: str = ""  # bought when this phase starts, in every replication
    # a savings-plan variant: the plan bought (the first term) instead of a reservation
    savings_plan: SavingsPlan | None = None


def reservation_round(scenario: Scenario, plan: Plan, result: PlanResult, book: PriceBook
                      ) -> tuple[tuple[ReservationSizing, ...], tuple[ReservationVariant, ...]]:
    """Every sizing of the GPU types ``plan`` rents on demand in long phases, and the variants
    of the best option per type (its optimum and balanced levels, where they save)."""
    sizings: list[ReservationSizing] = []
    variants: list[ReservationVariant] = []
    demand = {h.gpu: h for h in result.gpu_demand}
    in_phases = {h.gpu: h for h in result.gpu_demand_in_phases}
    hourly = dict(result.gpu_demand_by_hour)
    timelines = {t.phase: t for t in result.timelines if t.start_s is not None}
    horizon_s = scenario.calendar.horizon_s
    for gpu, phases in _rented_long(scenario, plan).items():
        mine = [timelines[p] for p in phases if p in timelines]
        if gpu not in demand or gpu not in hourly or not mine:
            continue
        start_day = scenario.calendar.date_at(min(t.start_s or 0.0 for t in mine))
        start_s = scenario.calendar.seconds_at(start_day)
        end_s = max(horizon_s if t.end_s is None else t.end_s for t in mine)
        anchored: list[tuple[ReservationSizing, Commitment]] = []
        if len(phases) == 1 and gpu in in_phases and _long_users(scenario, plan, gpu) == {
                phases[0]}:
            # one phase: a term that covers it is bought when it starts, in every replication,
            # and sized on its demand in all replications (the window placed per replication)
            anchored = _sizings(scenario, plan, gpu, start_day, in_phases[gpu], book,
                                (start_s, end_s), hourly[gpu], one_term=True)
        # terms renewed back to back over the phases: a calendar window from the first
        # replication's dates
        start_h = round(start_s / SECONDS_PER_HOUR)
        end_h = math.ceil(min(end_s, horizon_s) / SECONDS_PER_HOUR)
        window = demand_in(demand[gpu], hourly[gpu], start_h, end_h)
        at_start = {s.option for s, _ in anchored}
        found = anchored + [f for f in _sizings(scenario, plan, gpu, start_day, window, book,
                                                 (start_s, end_s), hourly[gpu], one_term=False)
                            if f[0].option not in at_start]
        sizings.extend(s for s, _ in found)
        if not found:
            continue
        best, commitment = max(found, key=lambda f: (f[0].aggressive.savings_usd,
                                                     -f[0].term_hours))
        # a savings plan on the best option's term and payment, whether or not the
        # reservation saves (whole instances can make it not; a plan commits by the GPU)
        spend = _savings_plan_variant(scenario, plan, result, gpu, phases, best, window,
                                      start_day, (start_s, end_s), hourly[gpu], book)
        if spend is not None:
            variants.append(spend)
        if best.aggressive.savings_usd <= 0 or best.aggressive.gpus == 0:
            continue
        points = [("optimum", best.aggressive)]
        if 0 < best.balanced.gpus < best.aggressive.gpus:
            points.append(("balanced", best.balanced))
        at_phase = phases[0] if best.option in at_start else ""
        for point, level in points:
            sized = replace(commitment, count=level.gpus)
            variant_plan = (_at_phase_start(plan, scenario, gpu, sized, point) if at_phase
                            else _variant(plan, scenario, gpu,
                                          _back_to_back(scenario, sized, best.terms_owed,
                                                        best.term_hours), point))
            variants.append(ReservationVariant(
                plan=variant_plan, gpu=gpu, sizing=best, level=level, point=point,
                start_day=start_day.isoformat(), at_phase=at_phase))
    return tuple(sizings), tuple(variants)


def _savings_plan_variant(scenario: Scenario, plan: Plan, result: PlanResult, gpu: str,
                          phases: Sequence[str], best: ReservationSizing,
                          window: DemandHistogram, start_day: date,
                          span_s: tuple[float, float], first: Sequence[float],
                          book: PriceBook) -> ReservationVariant | None:
    """An instance-family savings plan for ``gpu`` in place of the best reservation, where the
    cloud the long phases rent it on sells one (docs/optimizer.md "Savings plans").

    A savings plan at discount d covering c GPUs costs c · r_od · (1 − d) an hour of its term
    and covers up to c GPUs of each hour's demand: the reservation's cost curve with
    r_c = r_od · (1 − d) and one-GPU steps (no whole instances), so the same newsvendor sizing
    applies; the commitment is c · r_od · (1 − d) $/hour at the window's mean price drift, on
    the best reservation's term and payment, renewed back to back as it is.
    """
    offering = _rented_offering(result, gpu, phases, book)
    term, payment = best.option.term_years, best.option.payment
    if offering is None or term is None or payment is None or savings_plan_offered(
            offering.cloud, SavingsPlanScope.FAMILY, term, payment) is not None:
        return None
    sp = savings_plan_terms(offering, SavingsPlanScope.FAMILY, term, payment)
    start_s, end_s = span_s
    h0 = int(start_s // SECONDS_PER_HOUR)
    h1 = max(h0 + 1, min(len(first), math.ceil(end_s / SECONDS_PER_HOUR)))
    factors = price_drift(scenario, (np.arange(h0, h1) + 0.5) * SECONDS_PER_HOUR,
                          offering.effective_date)
    rate = next(p.rate_usd_per_gpu_hour for p in result.prices
                if p.pool == offering.key and p.option == PurchaseOption.ON_DEMAND.value)
    r_od = rate * (float(factors.mean()) if factors.size else 1.0)
    term_hours = term * HOURS_PER_YEAR
    total = r_od * (1 - sp.discount_fraction) * term_hours
    upfront = round(total * sp.upfront_fraction, 2)
    terms = ReservationTerms(option=best.option, term_hours=term_hours,
                             discount_fraction=sp.discount_fraction, on_demand_usd_per_hour=r_od,
                             upfront_usd=upfront,
                             recurring_usd_per_hour=max(0.0, (total - upfront) / term_hours),
                             source=sp.source, effective_date=sp.effective_date,
                             estimate=sp.estimate)
    sizing = size_reservation(window, terms, 1)
    level = sizing.aggressive
    if level.gpus == 0 or level.savings_usd <= 0:
        return None
    usd_per_hour = round(level.gpus * r_od * (1 - sp.discount_fraction), 2)
    bought = SavingsPlan(cloud=offering.cloud, usd_per_hour=usd_per_hour, term_years=term,
                         payment=payment, start=start_day, family=gpu)
    renewals = tuple(replace(bought, start=scenario.calendar.date_at(t))
                     for k in range(sizing.terms_owed)
                     if (t := start_s + k * term_hours * SECONDS_PER_HOUR)
                     < scenario.calendar.horizon_s)
    tag = f"+sp-{gpu.lower()}-{usd_per_hour:g}usd-{term}y-{payment.value}"
    variant = replace(plan, name=plan.name + tag,
                      savings_plans=(*plan.savings_plans, *renewals))
    return ReservationVariant(plan=variant, gpu=gpu, sizing=sizing, level=level,
                              point="optimum", start_day=start_day.isoformat(),
                              savings_plan=bought)


def _rented_offering(result: PlanResult, gpu: str, phases: Sequence[str],
                     book: PriceBook) -> Offering | None:
    """The offering the long phases rent ``gpu`` on demand on (the first such price)."""
    for price in result.prices:
        if (price.phase in phases and price.gpu == gpu
                and price.option == PurchaseOption.ON_DEMAND.value):
            cloud = price.pool.split(" ", 1)[0]
            return next((o for o in book.offerings(gpu, cloud) if o.key == price.pool), None)
    return None


def _sizings(scenario: Scenario, plan: Plan, gpu: str, start_day: date,
             window: DemandHistogram, book: PriceBook, span_s: tuple[float, float],
             first: Sequence[float], *, one_term: bool
             ) -> list[tuple[ReservationSizing, Commitment]]:
    """The sizing of every term and payment on ``window`` (with ``one_term``, only those whose
    single term covers the window: a commitment bought at a phase's start is not renewed)."""
    found = []
    for term in TERMS_YEARS:
        for payment in Payment:
            priced = _sizing(scenario, plan, gpu, term, payment, start_day, window, book,
                             span_s, first)
            if priced is not None and (not one_term or priced[0].terms_owed == 1):
                found.append(priced)
    return found


def _long_users(scenario: Scenario, plan: Plan, gpu: str) -> set[str]:
    """The plan's experiments and serving phases that use ``gpu`` in any way."""
    return {use.phase for use in plan.uses
            if scenario.phase(use.phase).kind is not PhaseKind.TRAINING
            and any(_canonical(e.gpu) == gpu for e in use.entries)}


def _at_phase_start(plan: Plan, scenario: Scenario, gpu: str, commitment: Commitment,
                    point: str) -> Plan:
    """``plan`` with its long phase's on-demand entries of ``gpu`` on a reservation of
    ``commitment.count`` GPUs bought when the phase starts (the simulator's implied
    commitment), the rest spilling on demand."""
    variant = _variant(plan, scenario, gpu, (commitment,), point)
    return replace(variant, commitments=plan.commitments)


def _back_to_back(scenario: Scenario, first: Commitment, terms: int, term_hours: float
                  ) -> tuple[Commitment, ...]:
    """``first`` renewed as it ends, ``terms`` terms in all (the level the sizing priced is
    held over its whole window), each starting within the horizon."""
    start_s = scenario.calendar.seconds_at(first.start)
    out = []
    for k in range(terms):
        t = start_s + k * term_hours * SECONDS_PER_HOUR
        if t < scenario.calendar.horizon_s:
            out.append(replace(first, start=scenario.calendar.date_at(t)))
    return tuple(out)


def _rented_long(scenario: Scenario, plan: Plan) -> dict[str, list[str]]:
    """GPU types rented on demand by the plan's experiments and serving phases (elastic
    entries), and those phases; a type the plan already commits to is left as it is."""
    gpus: dict[str, list[str]] = {}
    committed = {_canonical(c.gpu) for c in plan.commitments}
    for use in plan.uses:
        if scenario.phase(use.phase).kind is PhaseKind.TRAINING:
            continue
        for entry in use.entries:
            canonical = _canonical(entry.gpu)
            if (entry.option is PurchaseOption.ON_DEMAND and entry.count is None
                    and canonical not in committed):
                gpus.setdefault(canonical, []).append(use.phase)
    return gpus


def _sizing(scenario: Scenario, plan: Plan, gpu: str, term: int, payment: Payment,
            start_day: date, demand: DemandHistogram, book: PriceBook,
            span_s: tuple[float, float], first: Sequence[float]
            ) -> tuple[ReservationSizing, Commitment] | None:
    """The sizing of one term and payment, on the offering the simulator prices the
    commitment on (None where no offering sells it); the on-demand rate it saves is the
    list rate at the scenario's mean price drift over ``span_s`` (as the simulator books the
    spill)."""
    probe = Commitment(gpu=gpu, count=max(1, demand.max_gpus), term_years=term,
                       payment=payment, start=start_day)
    variant = _variant(plan, scenario, gpu, (probe,), "probe")
    reasons: list[str] = []
    pools = plan_commitments(scenario, variant, book, reasons)
    if reasons or not pools:
        return None
    pool = pools[-1]
    start_s, end_s = span_s
    h0 = int(start_s // SECONDS_PER_HOUR)
    h1 = max(h0 + 1, min(len(first), math.ceil(end_s / SECONDS_PER_HOUR)))
    hourly = np.asarray(first[h0:h1], dtype=np.float64)
    factors = price_drift(scenario, (np.arange(h0, h0 + hourly.size) + 0.5) * SECONDS_PER_HOUR,
                          pool.offering.effective_date)
    drift = float(factors.mean()) if factors.size else 1.0

    def excess_factors(levels: Sequence[int]) -> list[float]:
        """Per level, the first replication's drift over the demand above it, relative to the
        window's mean drift."""
        out = []
        for c in levels:
            above = np.maximum(0.0, hourly - c)
            total = float(above.sum())
            out.append(float(above @ factors) / total / drift if total > 0 else 1.0)
        return out

    sizing = size_reservation(demand, pool.terms, pool.offering.gpus_per_instance,
                              on_demand_factor=drift, excess_factors=excess_factors)
    placed = replace(probe, cloud=pool.offering.cloud, region=pool.offering.region)
    return sizing, placed


def _variant(plan: Plan, scenario: Scenario, gpu: str, commitments: tuple[Commitment, ...],
             point: str) -> Plan:
    """``plan`` with ``commitments`` (one level, back to back) and its long phases' on-demand
    entries of ``gpu`` drawing on them (the rest spilling on demand)."""
    first = commitments[0]
    uses = []
    for use in plan.uses:
        entries = []
        for entry in use.entries:
            if (scenario.phase(use.phase).kind is not PhaseKind.TRAINING
                    and entry.option is PurchaseOption.ON_DEMAND and entry.count is None
                    and _canonical(entry.gpu) == gpu):
                entry = replace(entry, option=first.option, count=first.count,
                                spill=PurchaseOption.ON_DEMAND)
            entries.append(entry)
        uses.append(PhaseUse(phase=use.phase, entries=tuple(entries)))
    tag = (f"+rsv-{first.count}{gpu.lower()}-{first.term_years}y-{first.payment.value}"
           + ("-balanced" if point == "balanced" else ""))
    return replace(plan, name=plan.name + tag, uses=tuple(uses),
                   commitments=(*plan.commitments, *commitments))


def demand_in(pooled: DemandHistogram, first: Sequence[float], start_h: int, end_h: int
              ) -> DemandHistogram:
    """The demand a commitment held from hour ``start_h`` to ``end_h`` sizes against: the
    pooled histogram less the hours outside the window, when those held no demand in the first
    replication (their zero-demand hours come off every replication); else, when another phase
    used the type outside the window (its demand cannot be told apart in the pooled histogram),
    the first replication's hours in the window."""
    outside = start_h + max(0, len(first) - end_h)
    if outside <= 0:
        return pooled
    if (any(u > 0 for u in first[:start_h]) or any(u > 0 for u in first[end_h:])
            or pooled.levels[0] != 0):
        return DemandHistogram.from_hourly(pooled.gpu, np.asarray(first[start_h:end_h]))
    drop = min(pooled.hours[0], outside * pooled.replications)
    levels, counts, gpu_hours = list(pooled.levels), list(pooled.hours), list(pooled.gpu_hours)
    counts[0] -= drop
    if counts[0] == 0:
        levels, counts, gpu_hours = levels[1:], counts[1:], gpu_hours[1:]
    return DemandHistogram(gpu=pooled.gpu, replications=pooled.replications,
                           levels=tuple(levels), hours=tuple(counts),
                           gpu_hours=tuple(gpu_hours))


def _canonical(gpu: str) -> str:
    from costsim.catalog.gpus import find_gpu

    found = find_gpu(gpu)
    return found.name if found is not None else gpu


def variant_notes(variant: ReservationVariant) -> tuple[str, ...]:
    """A reader's summary of a variant's commitment."""
    s = variant.sizing
    sp = variant.savings_plan
    if sp is not None:
        return (f"a ${sp.usd_per_hour:,.2f}/h {variant.gpu} savings plan ({sp.term_years}y "
                f"{sp.payment.value}, {s.discount:.0%} off{' ~' if s.estimate else ''}) from "
                f"{variant.start_day}, covering {variant.level.gpus} GPUs of each hour's "
                f"demand, the optimum of the cost curve on simulated demand: saves "
                f"${variant.level.savings_usd:,.0f} a run against renting",)
    when = (f"when '{variant.at_phase}' starts ({variant.start_day} in the first replication)"
            if variant.at_phase else f"from {variant.start_day}")
    return (f"{variant.level.gpus} {variant.gpu} reserved ({s.option.value}) {when}, the "
            f"{variant.point} level of the cost curve on simulated demand: saves "
            f"${variant.level.savings_usd:,.0f} a run against renting, "
            f"{variant.level.idle_gpu_hours:,.0f} GPU-h idle",)
