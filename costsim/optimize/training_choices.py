"""A training phase's choices for the search space: the training front's options, and owned
servers.

The rented and reserved options come from :func:`costsim.optimize.training_front.training_front`
(GPU type × count × option, the phase's own framework, rated analytically with the simulator's
own layout search, :func:`costsim.sim.prepare.training_estimate`, and pools, so a configuration
memory or the offerings rule out never enters). A reservation enters only where it can pay for
the run: its whole obligation is below what the same GPUs cost on demand for the run. Owned
servers, which the front does not rate (their cost depends on the purchase date and lead time),
are added where a shipped server BOM carries the GPU, and for each server of the GPU the scenario
declares (``servers:``, as declared), for each count the front rated on demand, bought at the
scenario's start (their lead time delays a run that starts before delivery; servers delivered
after the horizon make the probe infeasible, costsim.sim.delivery), and prepared on a probe by
the simulator's own preparation.
"""

from __future__ import annotations

import math

from costsim.catalog.gpus import find_gpu
from costsim.catalog.prices import PriceBook
from costsim.catalog.servers import server_bom, server_names
from costsim.domain.phases import TrainingPhase
from costsim.domain.plans import OwnedPurchase, PhaseUse, UseEntry
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.domain.scenario import Scenario
from costsim.optimize.choice import PhaseChoice, Probe
from costsim.optimize.training_front import TrainingFront, TrainingOption, training_front
from costsim.sim.prepare import TrainingPrep
from costsim.units import SECONDS_PER_HOUR

# the options the front rates: renting, and a reservation bought for the run (1y and 3y terms;
# the payment that costs least over a whole term, all-upfront, only shifts cash)
RATED_OPTIONS = (PurchaseOption.ON_DEMAND, PurchaseOption.SPOT,
                 PurchaseOption.reserved(1, Payment.NO_UPFRONT),
                 PurchaseOption.reserved(3, Payment.NO_UPFRONT))


def training_choices(scenario: Scenario, phase: TrainingPhase, book: PriceBook, probe: Probe,
                     *, cloud: str | None, region: str | None,
                     max_p_deadline_missed: float | None
                     ) -> tuple[list[PhaseChoice], TrainingFront]:
    """Every rated option of ``phase`` the simulator can prepare, owned servers added, and
    the front they came from."""
    front = training_front(scenario, phase, book=book, options=RATED_OPTIONS,
                           frameworks=(phase.framework,),
                           max_p_deadline_missed=max_p_deadline_missed, cloud=cloud,
                           region=region)
    on_demand = {(o.gpu, o.gpus): o for o in front.options
                 if o.option is PurchaseOption.ON_DEMAND}
    choices: list[PhaseChoice] = []
    for option in front.options:
        rent = on_demand.get((option.gpu, option.gpus))
        if option.option.is_reserved and (rent is None or option.cost_usd >= rent.cost_usd):
            continue  # the term costs more than renting the run: it cannot pay
        choices.append(_choice(phase, option))
    for gpu, count in sorted(on_demand):
        for server, per_server, slug in _owned_servers(scenario).get(gpu, ()):
            owned = (OwnedPurchase(server=server, purchase=scenario.calendar.start,
                                   count=math.ceil(count / per_server)),)
            use = PhaseUse(phase=phase.name, entries=(UseEntry(gpu=gpu, count=count,
                                                               option=PurchaseOption.OWNED),))
            prep = probe(phase, use, (), owned)
            if isinstance(prep, TrainingPrep):
                choices.append(PhaseChoice(
                    phase=phase.name, slug=f"{count}{gpu.lower()}-{slug}", use=use, prep=prep,
                    owned=owned, label=f"{count}×{gpu} on {owned[0].count} owned {server} "
                    f"server(s)", notes=(_note(phase, count, gpu, prep.layout, prep.steady_s),)))
    return choices, front


def _owned_servers(scenario: Scenario) -> dict[str, list[tuple[str, int, str]]]:
    """Per GPU: (server, GPUs per server, slug) of the first shipped server carrying it
    (slug ``owned``), then of each server the scenario declares with it (slug its name)."""
    servers: dict[str, list[tuple[str, int, str]]] = {}
    for name in server_names():
        shipped = server_bom(name)
        servers.setdefault(shipped.gpu, [(name, shipped.gpu_count, "owned")])
    for declared in scenario.servers:
        found = find_gpu(declared.gpu)
        gpu = found.name if found is not None else declared.gpu
        servers.setdefault(gpu, []).append((declared.name, declared.gpu_count, declared.name))
    return servers


def _choice(phase: TrainingPhase, option: TrainingOption) -> PhaseChoice:
    tag, words = f"{option.gpus}{option.gpu.lower()}", f"{option.gpus}×{option.gpu}"
    if option.option is PurchaseOption.SPOT:
        tag, words = tag + "-spot", words + " spot (on-demand fallback)"
    elif option.option.is_reserved:
        years = option.option.term_years
        tag, words = f"{tag}-{years}y", f"{words} reserved {years}y from the run's start"
    else:
        words += " on demand"
    return PhaseChoice(phase=phase.name, label=words, slug=tag, prep=None, rated=option,
                       use=PhaseUse(phase=phase.name, entries=(option.use_entry(),)),
                       notes=(_note(phase, option.gpus, option.gpu, option.layout,
                                    option.steady_s),))


def _note(phase: TrainingPhase, gpus: int, gpu: str, layout: str, steady_s: float) -> str:
    return f"{phase.name}: {gpus}×{gpu}, {layout}, steady {steady_s / SECONDS_PER_HOUR:,.1f} h"
