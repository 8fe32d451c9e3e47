"""Moving a plan's data between clouds (docs/pricing.md "Data moved between clouds").

The rule: the plan's data — the data set, and the retained checkpoints of the training phases
that have ended — follows the work. It starts on the cloud of the first phase (uploading it
there is free: clouds charge no ingress); when a phase, in the scenario's phase order, runs on a
cloud the data is not on, the data is copied there at the phase's start, and the *source*
cloud bills its internet egress for every GB (``costsim/data/storage_prices.csv``, first tier;
the monthly free allowance is left to the plan's own ``egress_gb_per_month`` line, so a move
pays the rate on all of its GB). A serving phase whose fleet spans clouds gets a copy on each.
Owned servers send at $0 per GB (transit is bundled with colocation, the same file). A plan
whose phases share one cloud (a scenario that pins one) moves nothing.

Pure functions: :func:`data_moves` reads the prepared plan (which cloud each phase runs on);
:func:`book_data_moves` books one replication's moves as ``data-transfer`` ledger lines, one per
move, named ``data move SRC → DST``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from costsim.catalog.servers import OWNED_CLOUD
from costsim.catalog.storage import storage_price
from costsim.domain.calendar import Calendar
from costsim.domain.pricing import PurchaseOption
from costsim.sim.capacity import EntrySource
from costsim.sim.ledger import Category, Component, LedgerBook, line_key
from costsim.sim.pools import CommitmentPool


@dataclass(frozen=True, slots=True, kw_only=True)
class DataMove:
    """The plan's data copied from one cloud to another when ``phase`` starts."""

    phase: str
    from_cloud: str
    to_cloud: str
    usd_per_gb: float  # the source cloud's first-tier internet egress
    source: str  # where the rate comes from
    effective_date: str
    estimate: bool  # the rate is the documented fallback (a cloud without a stored price)

    @property
    def pool(self) -> str:
        """The ledger line's ``pool``: the move it pays for."""
        return f"data move {self.from_cloud} → {self.to_cloud}"


def entry_clouds(source: EntrySource, commitments: Sequence[CommitmentPool]) -> tuple[str, ...]:
    """The clouds a use entry's work runs on: its rented or implied-reserved pool's (the plan's
    commitment of its GPU; ``owned`` for owned servers) first, then its spill and fallback
    pools' (work there needs the data too)."""
    main: str | None = None
    pool = source.rental or source.implied_commitment
    if pool is not None:
        main = pool.offering.cloud
    elif source.entry.option is PurchaseOption.OWNED:
        main = OWNED_CLOUD
    elif source.bounded:
        main = next((c.offering.cloud for c in commitments if c.gpu == source.gpu), None)
    others = (p.offering.cloud for p in (source.spill, source.fallback) if p is not None)
    return tuple(dict.fromkeys(c for c in (main, *others) if c is not None))


def data_moves(phase_clouds: Sequence[tuple[str, Sequence[str]]]) -> tuple[DataMove, ...]:
    """The moves of a plan whose phases (in phase order) run on ``phase_clouds`` (each phase's
    clouds, its main entry's first)."""
    moves: list[DataMove] = []
    here: str | None = None
    for phase, clouds in phase_clouds:
        if not clouds:
            continue
        if here is None:
            here = clouds[0]
        for cloud in dict.fromkeys(clouds):
            if cloud != here:
                price = storage_price(here)
                moves.append(DataMove(phase=phase, from_cloud=here, to_cloud=cloud,
                                      usd_per_gb=price.egress_usd_per_gb,
                                      source=f"{here} internet egress ({price.tier}): "
                                             f"{price.source}",
                                      effective_date=price.effective_date,
                                      estimate=price.estimate))
        here = clouds[0]
    return tuple(moves)


def moved_gb(dataset_gb: float, checkpoints_retained: int,
             checkpoints: Sequence[tuple[float, float]], at_s: float) -> float:
    """GB (10^9 bytes) a move at ``at_s`` copies: the data set and the retained checkpoints of
    the training runs that ended by then (``checkpoints``: (end_s, bytes of one checkpoint))."""
    return dataset_gb + sum(checkpoints_retained * size / 1e9
                            for end_s, size in checkpoints if end_s <= at_s)


def book_data_moves(moves: Sequence[DataMove], starts_s: Mapping[str, float | None], *,
                    dataset_gb: float, checkpoints_retained: int,
                    checkpoints: Sequence[tuple[float, float]], calendar: Calendar,
                    book: LedgerBook) -> None:
    """Book each move whose phase started within the horizon: GB × the source's rate, in the
    month the phase starts, on a ``data-transfer`` line of that phase."""
    for move in moves:
        start = starts_s.get(move.phase)
        if start is None or not 0 <= start < calendar.horizon_s:
            continue
        gb = moved_gb(dataset_gb, checkpoints_retained, checkpoints, start)
        amount = round(gb * move.usd_per_gb, 2)
        if amount <= 0:
            continue
        book.spend(line_key(move.phase, move.pool, "", "", Category.DATA_TRANSFER,
                            Component.NETWORK),
                   calendar.month_index(start), amount)
