"""A training phase's choices for the search space: GPU type × count × purchase option.

Interim generator until ``training_front`` (costsim/optimize/training_front.py) lands: the same
grid, prepared by the simulator's own preparation on a probe (memory, layout, offering), so a
choice enters only when ``run`` could simulate it.

* counts: the phase's fixed layout's count, else powers of two from a quarter to twice each
  count the scenario's plans give (fewer GPUs are cheaper per token but slower; the deadline
  and the screen decide);
* options: on demand; spot with an on-demand fallback; a reservation bought when the phase
  starts, only where the run could pay for the term (the run's steady wall time is at least the
  term's hours × r_c / r_od, the utilization at which a commitment breaks even); owned servers
  where a shipped server BOM carries the GPU, bought at the scenario's start (their lead time
  delays a run that starts before delivery).
"""

from __future__ import annotations

import math

from costsim.catalog.gpus import gpu_catalog
from costsim.catalog.prices import PriceBook
from costsim.catalog.servers import server_bom, server_names
from costsim.domain.phases import TrainingPhase
from costsim.domain.plans import OwnedPurchase, PhaseUse, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.optimize.choice import PhaseChoice, Probe
from costsim.sim.prepare import TrainingPrep
from costsim.units import SECONDS_PER_HOUR

RESERVED_TERMS = (1, 3)


def training_counts(scenario: Scenario, phase: TrainingPhase) -> tuple[int, ...]:
    """GPU counts to try for ``phase``."""
    if phase.layout is not None:
        return (phase.layout.gpus,)
    given = {e.count for p in scenario.plans for e in p.use_of(phase.name).entries
             if e.count is not None} or {8}
    counts: set[int] = set()
    for c in given:
        counts.add(c)
        k = 1
        while k <= 2 * c:
            if k * 4 >= c:
                counts.add(k)
            k *= 2
    return tuple(sorted(counts))


def training_choices(scenario: Scenario, phase: TrainingPhase, book: PriceBook, probe: Probe,
                     *, cloud: str | None, region: str | None) -> list[PhaseChoice]:
    """Every (GPU type, count, option) of ``phase`` the simulator can prepare."""
    del book, cloud, region  # the probe rents where the plan does
    servers: dict[str, str] = {}
    for name in server_names():
        servers.setdefault(server_bom(name).gpu, name)  # the first shipped server of each GPU
    choices: list[PhaseChoice] = []
    for spec in gpu_catalog():
        gpu = spec.name
        for count in training_counts(scenario, phase):
            use = _use(phase, gpu, count, PurchaseOption.ON_DEMAND)
            base = probe(phase, use, (), ())
            if not isinstance(base, TrainingPrep):
                continue
            tag = f"{count}{gpu.lower()}"
            words = f"{count}×{gpu}"
            note = (f"{phase.name}: {words}, {base.layout}, steady "
                    f"{base.steady_s / SECONDS_PER_HOUR:,.1f} h",)
            choices.append(PhaseChoice(phase=phase.name, label=f"{words} on demand", slug=tag,
                                       use=use, prep=base, notes=note))
            spot = _use(phase, gpu, count, PurchaseOption.SPOT, fallback=PurchaseOption.ON_DEMAND)
            prep = probe(phase, spot, (), ())
            if prep is not None:
                choices.append(PhaseChoice(phase=phase.name, slug=tag + "-spot", use=spot,
                                           label=f"{words} spot (on-demand fallback)",
                                           prep=prep, notes=note))
            for term in RESERVED_TERMS:
                option = PurchaseOption.reserved(term, Payment.NO_UPFRONT)
                reserved = _use(phase, gpu, count, option)
                prep = probe(phase, reserved, (), ())
                if not isinstance(prep, TrainingPrep) or not _pays(prep):
                    continue
                choices.append(PhaseChoice(phase=phase.name, slug=f"{tag}-{term}y", use=reserved,
                                           label=f"{words} reserved {term}y from the run's start",
                                           prep=prep, notes=note))
            server = servers.get(gpu)
            if server is not None:
                per_server = server_bom(server).gpu_count
                owned = (OwnedPurchase(server=server, count=math.ceil(count / per_server),
                                       purchase=scenario.calendar.start),)
                mine = _use(phase, gpu, count, PurchaseOption.OWNED)
                prep = probe(phase, mine, (), owned)
                if prep is not None:
                    choices.append(PhaseChoice(
                        phase=phase.name, slug=f"{tag}-owned", use=mine, prep=prep, owned=owned,
                        label=f"{words} on {owned[0].count} owned {server} servers",
                        notes=note))
    return choices


def _use(phase: TrainingPhase, gpu: str, count: int, option: PurchaseOption,
         fallback: PurchaseOption | None = None) -> PhaseUse:
    return PhaseUse(phase=phase.name, entries=(UseEntry(gpu=gpu, count=count, option=option,
                                                        fallback=fallback),))


def _pays(prep: TrainingPrep) -> bool:
    """Whether a reservation for the run could cost less than renting it: its steady time is
    at least the break-even utilization (r_c / r_od) of the term."""
    pool = prep.source.implied_commitment
    if pool is None:
        return False
    terms = pool.terms
    break_even_h = terms.term_hours * terms.effective_usd_per_hour / terms.on_demand_usd_per_hour
    return prep.steady_s / SECONDS_PER_HOUR >= break_even_h
