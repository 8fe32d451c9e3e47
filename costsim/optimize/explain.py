"""What the optimizer tells a reader: the plan-level time–cost front and the choice in a sentence
or two a finance reader follows (what the plan buys, what it costs, what it saves against the
best hand-written plan and where the saving comes from), its amounts in the scenario's display
currency (costsim.domain.currency)."""

from __future__ import annotations

from collections.abc import Sequence

from costsim.domain.currency import USD, Currency
from costsim.domain.display import money_estimate
from costsim.domain.plans import Plan, UseEntry
from costsim.domain.pricing import PurchaseOption
from costsim.optimize.pareto import pareto_mask
from costsim.optimize.result import Objective, Origin, RankedPlan
from costsim.sim.results import estimate_sentence

# phases whose cost differs by less than this share of the saving are not named as its source
_MINOR_SHARE = 0.05


def pareto_front(ranked: Sequence[RankedPlan]) -> tuple[RankedPlan, ...]:
    """Candidates within the limits that no other beats on both the objective cost and the P90
    finish time (:func:`costsim.optimize.pareto.pareto_mask`), fastest first."""
    fit = [r for r in ranked if r.within_limits and r.objective_usd is not None
           and r.result.finish_s is not None]
    times = [r.result.finish_s.p90 if r.result.finish_s else 0.0 for r in fit]
    costs = [r.objective_usd or 0.0 for r in fit]
    mask = pareto_mask(times, costs)
    front = [(t, c, r) for t, c, r, on in zip(times, costs, fit, mask, strict=True) if on]
    return tuple(r for _, _, r in sorted(front, key=lambda x: (x[0], x[1], x[2].result.name)))


def _money(usd: float, currency: Currency) -> str:
    """A USD figure to whole units of the display currency (``$1,234``, ``€1,136``)."""
    return f"${usd:,.0f}" if currency.is_usd else money_estimate(currency.amount(usd), currency)


def explain(best: RankedPlan | None, ranked: Sequence[RankedPlan], objective: Objective,
            currency: Currency = USD) -> str:
    """One or two sentences on the choice, its amounts in ``currency``."""
    if best is None:
        return ("No candidate plan is feasible within the limits; each plan's reasons are "
                "listed with it.")
    assert best.objective_usd is not None
    text = _choice(best, ranked, objective, currency)
    estimated = best.result.estimated_inputs
    if estimated:
        text += " It " + estimate_sentence(estimated).removeprefix("it ") + "."
    return text


def _mark(ranked: RankedPlan) -> str:
    """``~`` after a plan's figures when they rest on an estimated price (docs/pricing.md)."""
    return "~" if ranked.result.estimated_inputs else ""


def _choice(best: RankedPlan, ranked: Sequence[RankedPlan], objective: Objective,
            currency: Currency) -> str:
    """The choice against the search's runner-up or the best hand-written plan."""
    assert best.objective_usd is not None
    plan = best.candidate.plan
    text = (f"'{plan.name}' {buys(plan)}: {_money(best.objective_usd, currency)}{_mark(best)} "
            f"({objective.value} of {best.result.replications} simulated futures)")
    hand = [r for r in ranked if r.candidate.origin is Origin.HAND_WRITTEN and r.within_limits]
    if best.candidate.origin is Origin.HAND_WRITTEN:
        found = [r for r in ranked if r.within_limits
                 and r.candidate.origin is not Origin.HAND_WRITTEN]
        text += "; no plan the search found costs less"
        if found and found[0].objective_usd is not None:
            gap = found[0].objective_usd - best.objective_usd
            text += (f" (the closest, '{found[0].result.name}', "
                     + ("costs the same" if gap < 0.005
                        else f"costs {_money(gap, currency)} more") + ")")
        return text + "."
    if not hand or hand[0].objective_usd is None:
        return text + ", and none of the scenario's own plans is feasible within the limits."
    rival = hand[0]
    assert rival.objective_usd is not None
    saving = rival.objective_usd - best.objective_usd
    share = saving / rival.objective_usd if rival.objective_usd else 0.0
    either = "~" if _mark(best) or _mark(rival) else ""
    text += (f", {_money(saving, currency)}{either} ({share:.0%}) less than the best "
             f"hand-written plan '{rival.result.name}' "
             f"({_money(rival.objective_usd, currency)}{_mark(rival)}).")
    sources = _sources(best, rival, saving, currency)
    reserved = _reservation(best, ranked, currency)
    if sources or reserved:
        text += " The saving comes from " + _join([*sources, *reserved]) + "."
    return text


def _reservation(best: RankedPlan, ranked: Sequence[RankedPlan],
                 currency: Currency = USD) -> list[str]:
    """What a reservation variant's commitment saves against its finalist renting the same
    demand."""
    if best.candidate.origin is not Origin.RESERVATION or best.objective_usd is None:
        return []
    parent_name = best.result.name.split("+rsv-")[0].split("+sp-")[0]
    parent = next((r for r in ranked if r.result.name == parent_name), None)
    if parent is None or parent.objective_usd is None:
        return []
    bought = best.candidate.plan.savings_plans[len(parent.candidate.plan.savings_plans):]
    if bought:
        sp = bought[0]
        return [f"a ${sp.usd_per_hour:,.2f}/h {sp.family} savings plan for {sp.term_years}y "
                f"from {sp.start.isoformat()}, sized on the simulated demand, which saves "
                f"${parent.objective_usd - best.objective_usd:,.0f}{_mark(best)} against "
                "renting it"]
    added = best.candidate.plan.commitments[len(parent.candidate.plan.commitments):]
    if not added:
        return []
    c = added[0]
    years = "a year" if c.term_years == 1 else f"{c.term_years} years"
    return [f"reserving {c.count} {c.gpu} for {years} from {c.start.isoformat()}, the level "
            "the simulated demand uses enough hours to pay for, which saves "
            f"{_money(parent.objective_usd - best.objective_usd, currency)}{_mark(best)} "
            "against renting it"]


def buys(plan: Plan) -> str:
    """What ``plan`` buys, phase by phase, and the capacity it commits to."""
    parts = [f"{use.phase} on " + " + ".join(_entry(e) for e in use.entries)
             for use in plan.uses]
    grouped: dict[tuple[str, int, str], dict[str, int]] = {}
    for c in plan.commitments:  # one line per GPU, term and payment: counts by start date
        starts = grouped.setdefault((c.gpu, c.term_years, c.payment.value), {})
        starts[c.start.isoformat()] = starts.get(c.start.isoformat(), 0) + c.count
    for (gpu, term, payment), starts in grouped.items():
        years = "a year" if term == 1 else f"{term} years"
        dates = _join([f"{n} from {day}" for day, n in sorted(starts.items())])
        parts.append(f"{gpu} reserved for {years} ({payment}): {dates}")
    for sp in plan.savings_plans:
        covers = sp.family or f"any GPU on {sp.cloud}"
        parts.append(f"a ${sp.usd_per_hour:,.2f}/h savings plan on {covers} for "
                     f"{sp.term_years}y ({sp.payment.value}) from {sp.start.isoformat()}")
    for b in plan.capacity_blocks:
        parts.append(f"a capacity block of {b.count} {b.gpu} on {b.cloud} for {b.days} days "
                     f"from {b.start.isoformat()}")
    for o in plan.owned:
        parts.append(f"{o.count} {o.server} server(s) bought on {o.purchase.isoformat()}")
    return "runs " + "; ".join(parts)


def _entry(entry: UseEntry) -> str:
    if entry.api is not None:
        return f"the {entry.api.provider} API (pay per token)"
    count = f"{entry.count}×" if entry.count is not None and not entry.option.is_reserved else ""
    option = {PurchaseOption.ON_DEMAND: "on demand", PurchaseOption.OWNED: "owned servers",
              PurchaseOption.SPOT: "spot"}.get(entry.option, "reserved")
    if entry.spill is not None:
        option += f" (the rest {entry.spill.value.replace('-', ' ')})"
    return f"{count}{entry.gpu} {option}"


def _sources(best: RankedPlan, rival: RankedPlan, saving: float,
             currency: Currency = USD) -> list[str]:
    """The phases where the saving comes from, by their ledger costs."""
    if best.result.ledger is None or rival.result.ledger is None or saving <= 0:
        return []
    mine, theirs = best.result.ledger.by_phase(), rival.result.ledger.by_phase()
    diffs = sorted(((theirs.get(p, 0.0) - mine.get(p, 0.0), p) for p in {*mine, *theirs}),
                   reverse=True)
    parts = []
    for diff, phase in diffs:
        if diff <= _MINOR_SHARE * saving:
            continue
        if not phase:
            parts.append(f"{_money(diff, currency)} less for what the plan buys for all phases "
                         "(reservations, servers, storage, transfer)")
            continue
        use = _use_text(best.candidate.plan, phase)
        parts.append(f"{phase} on {use}, {_money(diff, currency)} less" if use
                     else f"{phase}, {_money(diff, currency)} less")
    return parts[:3]


def _use_text(plan: Plan, phase: str) -> str:
    for use in plan.uses:
        if use.phase == phase:
            return " + ".join(_entry(e) for e in use.entries)
    return ""


def _join(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
