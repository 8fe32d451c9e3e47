"""What a sweep computes: its variants, its tasks, and the identity of each (docs/sweep.md).

A task is one variant × one block of replication indices. Blocks have a fixed size that does
not depend on the worker count, and replication r of every plan uses the stream ``run`` gives it
(``SeedSequence(seed).spawn(replications)[r]``, DESIGN §7), so the task list and every figure are
the same on one worker or fifty, in any order, and a variant equal to the scenario reproduces
``run``. A task's key hashes everything its result depends on, so a cache never serves a result
computed from other inputs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from costsim.domain.scenario import Scenario

# Replications per task. Ten keeps a task near 0.1 s of simulation per plan (a flagship
# replication takes ~9 ms, docs/sweep.md) — long beside a Dask task's ~1 ms overhead, short enough
# that an interrupted sweep loses little and a 200-replication variant spreads over 20 tasks.
DEFAULT_BLOCK_SIZE = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepVariant:
    """One resolved, validated variant: what it overrides, the scenario it gives, and the
    identity of its inputs (the resolved scenario, every file it references, the overrides)."""

    label: str
    overrides: Mapping[str, Any]  # key path → value, in the order given (JSON-able)
    name: str = ""  # a sweep file's name for the variant ("": none); results only
    scenario: Scenario
    resolved: Mapping[str, Any] = field(repr=False)  # the variant's scenario, every default filled
    referenced_sha256: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def identity(self) -> str:
        """SHA-256 of the variant's resolved inputs: equal for two variants that resolve to the
        same scenario with the same referenced files and overrides."""
        return _sha256({"resolved": self.resolved, "referenced": dict(self.referenced_sha256),
                        "overrides": dict(self.overrides)})


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepSettings:
    """What every task shares: the plans, the random streams, and the software and price book
    the results come from (the CLI passes the book's identity in; engines read no files)."""

    seed: int
    replications: int
    plans: tuple[str, ...] | None = None  # None: every plan of each variant
    block_size: int = DEFAULT_BLOCK_SIZE
    costsim_version: str = ""
    price_book: str = ""  # the book's identity: its date and a hash of its rows

    def __post_init__(self) -> None:
        if self.replications < 1:
            raise ValueError(f"replications must be >= 1, got {self.replications}")
        if self.block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {self.block_size}")


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepTask:
    """Replications ``indices`` of every chosen plan of variant ``variant``."""

    variant: int
    block: int
    indices: range
    key: str  # the cache key: hash of everything the result depends on


def blocks(replications: int, block_size: int) -> tuple[range, ...]:
    """``range(replications)`` cut into blocks of ``block_size`` (the last may be shorter)."""
    return tuple(range(start, min(start + block_size, replications))
                 for start in range(0, replications, block_size))


def task_key(variant: SweepVariant, block: int, settings: SweepSettings) -> str:
    """The cache key of a block of a variant."""
    return _sha256({"variant": variant.identity, "block": block,
                    "block_size": settings.block_size, "seed": settings.seed,
                    "replications": settings.replications,
                    "plans": list(settings.plans) if settings.plans is not None else None,
                    "costsim_version": settings.costsim_version,
                    "price_book": settings.price_book})


def prep_key(variant: SweepVariant, settings: SweepSettings) -> str:
    """The cache key of a variant's prepared plans (no draw: seeds do not enter it)."""
    return _sha256({"variant": variant.identity,
                    "plans": list(settings.plans) if settings.plans is not None else None,
                    "costsim_version": settings.costsim_version,
                    "price_book": settings.price_book})


def task_list(variants: Sequence[SweepVariant], settings: SweepSettings) -> tuple[SweepTask, ...]:
    """Every task of the sweep, variant by variant, block by block."""
    cut = blocks(settings.replications, settings.block_size)
    return tuple(SweepTask(variant=v, block=b, indices=indices,
                           key=task_key(variant, b, settings))
                 for v, variant in enumerate(variants) for b, indices in enumerate(cut))


def _sha256(document: Mapping[str, Any]) -> str:
    # sort_keys: the same inputs hash the same whatever order a mapping was built in;
    # default=str: dates and paths in a resolved scenario hash by their text
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str,
                      allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
