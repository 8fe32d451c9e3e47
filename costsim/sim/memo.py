"""Keys for memoizing the preparation's pure engine calls across plans (issue 20).

The optimizer prepares hundreds of probe and candidate plans that share the same engine
questions (a replica of Llama-3-8B on an L4 under the same SLO; a training run of the same
phase on the same GPUs), and the performance model answers each the same way every time: a
pure function of frozen values. Those answers are memoized by value (frozen dataclasses hash
by value), so a hit returns the very object a cold computation returned, and equal questions
asked through different but equal objects (a probe's copy of a phase, the scenario's own)
share it.

The assumption blocks the catalog loads once (:class:`~costsim.domain.performance.
PerfDefaults`, :class:`~costsim.domain.performance.ServingAssumptions`) hold mappings and do not
hash; they enter a key by identity through :class:`Same`, which keeps the object alive while the
entry lives, so its ``id`` cannot be reused by another object while the key exists. A caller
with an equal but distinct defaults object only misses the memo (and computes anew).
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Same(Generic[T]):
    """A memo key part equal only to a key of the very same object (by identity)."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value  # held: the id stays this object's while the key lives

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.value is self.value

    def __repr__(self) -> str:
        return f"Same({type(self.value).__name__} at {id(self.value):#x})"
