"""Plans: how each phase gets its GPUs, and what capacity the plan commits to or buys.

A plan says, per phase, which GPU and purchase option to use (``use``), and which capacity it
buys ahead: reservations (``commitments``, the whole obligation is owed) and servers (``owned``).
A ``use`` entry with a reserved or owned option draws on that capacity; work beyond it goes to
``spill``. ``count`` in ``use`` and ``commitments`` is GPUs (rounded up to whole
instances); in ``owned`` it is servers. A ``use`` entry without ``count`` is elastic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from costsim.domain.api_pricing import ApiUse
from costsim.domain.pricing import Payment, PurchaseOption
from costsim.errors import ScenarioError

if TYPE_CHECKING:  # annotations only: domain/commitments imports this module's MAX_GPUS
    from costsim.domain.commitments import CapacityBlock, SavingsPlan

MAX_GPUS = 100_000  # above the largest published training cluster (Llama 3: 16,384 H100s) × 6
MAX_SERVERS = 10_000
# How far a request bucket's traffic shares over a fleet may sum from 1: the tolerance the
# phases' own request shares get (domain/phases.py), room for shares written to 6 decimals.
TRAFFIC_SUM_TOLERANCE = 1e-6


@dataclass(frozen=True, slots=True, kw_only=True)
class Autoscale:
    """Serving autoscaler: replica bounds, target utilization and scale-up delay.

    None means the documented default (docs/simulator.md), so a plan states only what it changes.
    """

    min_replicas: int = 1
    max_replicas: int | None = None
    target_utilization: float | None = None
    scale_up_delay_s: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.min_replicas <= MAX_GPUS:
            raise ScenarioError("", "autoscale.min", f"must be 0..{MAX_GPUS}, got "
                                f"{self.min_replicas}")
        if self.max_replicas is not None and not (
                max(1, self.min_replicas) <= self.max_replicas <= MAX_GPUS):
            raise ScenarioError("", "autoscale.max", f"must be >= max(1, min) = "
                                f"{max(1, self.min_replicas)} and <= {MAX_GPUS}, got "
                                f"{self.max_replicas}")
        if self.target_utilization is not None and not 0.05 <= self.target_utilization <= 1:
            raise ScenarioError("", "autoscale.target_utilization",
                                f"must be in [0.05, 1], got {self.target_utilization}")
        if self.scale_up_delay_s is not None and not 0 <= self.scale_up_delay_s <= 86_400:
            raise ScenarioError("", "autoscale.scale_up_delay_s",
                                f"must be in [0, 86400] s, got {self.scale_up_delay_s}")


@dataclass(frozen=True, slots=True, kw_only=True)
class UseEntry:
    """One GPU type used by a phase, with its purchase option and what takes the overflow.

    ``spill`` takes work beyond a reserved/owned ``count``; ``fallback`` takes over when spot
    capacity is preempted; ``spot_share`` splits an elastic fleet between spot and ``option``.
    ``traffic`` (serving) is the share of each request bucket, in the phase's ``requests``
    order, this entry serves (None: the simulator routes each bucket whole to the cheapest
    entry); over a fleet each bucket's shares add up to 1 (:class:`PhaseUse`).
    ``api`` (with option ``api``, a serving phase's only entry) calls a pay-per-token API
    instead of running GPUs; ``gpu`` is then empty.
    """

    gpu: str
    option: PurchaseOption = PurchaseOption.ON_DEMAND
    count: int | None = None
    spill: PurchaseOption | None = None
    fallback: PurchaseOption | None = None
    spot_share: float | None = None
    cloud: str | None = None
    region: str | None = None
    autoscale: Autoscale | None = None
    traffic: tuple[float, ...] | None = None
    api: ApiUse | None = None

    def __post_init__(self) -> None:
        self._check_api()
        if self.traffic is not None:
            if not self.traffic:
                raise ScenarioError("", "traffic", "needs one share per request bucket, got none")
            for k, share in enumerate(self.traffic):
                if not (math.isfinite(share) and 0 <= share <= 1):
                    raise ScenarioError("", "traffic", f"each share must be in [0, 1], got "
                                        f"{share} for requests[{k}]")
        if self.count is not None and not 1 <= self.count <= MAX_GPUS:
            raise ScenarioError("", "count", f"must be 1..{MAX_GPUS} GPUs, got {self.count}")
        if self.spot_share is not None and not (
                math.isfinite(self.spot_share) and 0 <= self.spot_share <= 1):
            raise ScenarioError("", "spot_share", f"must be in [0, 1], got {self.spot_share}")
        capacity_bound = self.option.is_reserved or self.option is PurchaseOption.OWNED
        if self.spill is not None and not capacity_bound:
            raise ScenarioError("", "spill", f"spills work beyond reserved or owned capacity; "
                                f"option '{self.option}' has no such limit")
        if self.spill is not None and (self.spill.is_reserved or
                                       self.spill is PurchaseOption.OWNED):
            raise ScenarioError("", "spill", f"must be on-demand or spot, got '{self.spill}'")
        if self.fallback is not None and self.option is not PurchaseOption.SPOT:
            raise ScenarioError("", "fallback", "a fallback backs spot capacity; option is "
                                f"'{self.option}'")
        if self.fallback is not None and self.fallback is not PurchaseOption.ON_DEMAND:
            raise ScenarioError("", "fallback", f"must be on-demand, got '{self.fallback}'")

    def _check_api(self) -> None:
        """Option ``api`` goes with a provider and no GPU keys; a provider with option api."""
        is_api = self.option is PurchaseOption.API
        if is_api and self.api is None:
            raise ScenarioError("", "provider", "option 'api' needs a provider (e.g. together; "
                                "docs/pricing.md lists the shipped ones)")
        if not is_api and self.api is not None:
            raise ScenarioError("", "provider", f"a provider goes with option 'api', got "
                                f"option '{self.option}'")
        if not is_api:
            return
        for key in ("count", "spill", "fallback", "spot_share", "cloud", "region",
                    "autoscale", "traffic"):
            if getattr(self, key) is not None:
                raise ScenarioError("", key, "has no meaning for option 'api' (the provider "
                                    "runs the GPUs; its rate limit bounds the requests)")
        if self.gpu:
            raise ScenarioError("", "gpu", f"option 'api' runs on the provider's hardware; "
                                f"leave gpu out (got '{self.gpu}')")

    @property
    def is_api(self) -> bool:
        """Whether this entry calls a pay-per-token API."""
        return self.api is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseUse:
    """How one phase runs in a plan: one entry, or several GPU types for a serving fleet."""

    phase: str
    entries: tuple[UseEntry, ...]

    def __post_init__(self) -> None:
        if not self.entries:
            raise ScenarioError("", f"use.{self.phase}", "needs at least one GPU entry")
        if len(self.entries) > 1 and any(entry.is_api for entry in self.entries):
            raise ScenarioError("", f"use.{self.phase}.fleet", "an 'api' entry serves the "
                                "phase alone; it cannot be part of a fleet")
        gpus = [entry.gpu for entry in self.entries]
        if len(set(gpus)) != len(gpus):
            raise ScenarioError("", f"use.{self.phase}.fleet", f"names a GPU twice: {gpus}")
        self._check_traffic()

    @property
    def api(self) -> ApiUse | None:
        """The API the phase calls (an ``api`` entry is the phase's only one), else None."""
        return self.entries[0].api

    @property
    def routed(self) -> bool:
        """Whether the entries state their traffic shares (else the simulator routes)."""
        return self.entries[0].traffic is not None

    def _check_traffic(self) -> None:
        """All entries state ``traffic`` or none does (a partial split has no one reading: the
        rest of a bucket would go where?), one share per bucket each, and each bucket's shares
        add up to 1."""
        given = [entry.traffic is not None for entry in self.entries]
        if not any(given):
            return
        if not all(given):
            j = given.index(False)
            raise ScenarioError("", f"fleet.{j}", "gives no traffic shares: when one entry of "
                                "a fleet gives them, every entry must (all or none)")
        lengths = [len(entry.traffic or ()) for entry in self.entries]
        for j, length in enumerate(lengths):
            if length != lengths[0]:
                raise ScenarioError("", f"fleet.{j}.traffic", f"has {length} shares, entry 0 "
                                    f"has {lengths[0]}: one per request bucket")
        for k in range(lengths[0]):
            total = math.fsum((entry.traffic or ())[k] for entry in self.entries)
            if abs(total - 1) > TRAFFIC_SUM_TOLERANCE:
                raise ScenarioError("", "fleet", f"the traffic shares of requests[{k}] add up "
                                    f"to {total:g} over the fleet; they must add up to 1")


def check_commitment_term(term_years: int) -> None:
    """A commitment's term (a reservation's, a savings plan's) is 1 or 3 years."""
    if term_years not in (1, 3):
        raise ScenarioError("", "commitments.term", f"must be 1y or 3y, got {term_years}y")


@dataclass(frozen=True, slots=True, kw_only=True)
class Commitment:
    """A reservation the plan buys: ``count`` GPUs of one type for a term from ``start``."""

    gpu: str
    count: int
    term_years: int
    payment: Payment
    start: date
    cloud: str | None = None
    region: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_GPUS:
            raise ScenarioError("", "commitments.count", f"must be 1..{MAX_GPUS} GPUs, got "
                                f"{self.count}")
        check_commitment_term(self.term_years)

    @property
    def option(self) -> PurchaseOption:
        """The purchase option string of this commitment."""
        return PurchaseOption.reserved(self.term_years, self.payment)


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedPurchase:
    """Servers the plan buys: ``count`` servers of a catalog BOM, bought on ``purchase``.

    Parts left None keep the server's BOM; ``life_years`` None keeps its useful life.
    """

    server: str
    count: int
    purchase: date
    life_years: float | None = None
    ram_gib: int | None = None
    nvme_tb: float | None = None
    cpu_cores: int | None = None
    nic_gbps: float | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_SERVERS:
            raise ScenarioError("", "owned.count", f"must be 1..{MAX_SERVERS} servers, got "
                                f"{self.count}")
        if self.life_years is not None and not 0.5 <= self.life_years <= 15:
            raise ScenarioError("", "owned.life_years", f"must be in [0.5, 15], got "
                                f"{self.life_years}")
        for key, high in (("ram_gib", 65_536), ("nvme_tb", 1_000), ("cpu_cores", 1_024),
                          ("nic_gbps", 12_800)):
            value = getattr(self, key)
            if value is not None and not 0 < value <= high:
                raise ScenarioError("", f"owned.{key}", f"must be in (0, {high}], got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """A candidate procurement plan."""

    name: str
    uses: tuple[PhaseUse, ...]
    commitments: tuple[Commitment, ...] = ()
    owned: tuple[OwnedPurchase, ...] = ()
    cloud: str | None = None
    region: str | None = None
    # spend-based savings plans and fixed-window capacity blocks (domain/commitments.py)
    savings_plans: tuple[SavingsPlan, ...] = ()
    capacity_blocks: tuple[CapacityBlock, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ScenarioError("", "plans.name", "a plan needs a non-empty name")
        phases = [use.phase for use in self.uses]
        if len(set(phases)) != len(phases):
            raise ScenarioError("", f"plans.{self.name}.use", f"names a phase twice: {phases}")

    def use_of(self, phase: str) -> PhaseUse:
        """The use entry of ``phase`` (the scenario checks that every phase has one)."""
        for use in self.uses:
            if use.phase == phase:
                return use
        raise KeyError(phase)
