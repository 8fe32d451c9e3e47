"""One way to run one phase of a scenario, as the search space holds it (:mod:`.space`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from costsim.domain.phases import Phase
from costsim.domain.plans import Commitment, OwnedPurchase, PhaseUse
from costsim.optimize.training_front import TrainingOption
from costsim.sim.prepare import PhasePrep


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseChoice:
    """One way to run one phase: its use entries, the capacity it buys, and what the screen
    prices: the simulator's preparation of it, or (a rented or reserved training run) the
    training front's rating, which runs the same layout search and pools."""

    phase: str
    label: str  # for a reader: "16×H100 spot (on-demand fallback)"
    slug: str  # for a candidate's name: "16h100-spot"
    use: PhaseUse
    prep: PhasePrep | None
    commitments: tuple[Commitment, ...] = ()
    owned: tuple[OwnedPurchase, ...] = ()
    notes: tuple[str, ...] = ()
    rated: TrainingOption | None = None  # a training option's analytic rating (the front's)


# prepares ``use`` (with the capacity it buys) for a phase alone; None when it cannot run
Probe = Callable[[Phase, PhaseUse, tuple[Commitment, ...], tuple[OwnedPurchase, ...]],
                 PhasePrep | None]
