"""Random streams: one per replication, split by *names* (docs/simulator.md §4).

Replication r of every plan starts from ``SeedSequence(seed).spawn(replications)[r]``; each
consumer (a phase's arrivals, a pool's preemptions, an uncertainty variable) derives its own
generator from that by appending a stable hash of its name path to the spawn key. So a plan that
lacks a phase draws the same numbers for the others, ``run --plan B`` gives B what a full run
gives it, and plans are compared on the same futures. A hash, not Python's ``hash``: it must be
the same in every process and on every run (PYTHONHASHSEED varies).
"""

from __future__ import annotations

import hashlib

import numpy as np


def replication_seeds(seed: int, replications: int) -> tuple[np.random.SeedSequence, ...]:
    """The root of each replication's streams."""
    return tuple(np.random.SeedSequence(seed).spawn(replications))


def _name_word(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest(), "big")


def named_rng(root: np.random.SeedSequence, *names: str) -> np.random.Generator:
    """The generator of the stream ``names`` (e.g. ``("phase", "train", "failures")``) under
    ``root``: the same names always give the same numbers, different names independent ones."""
    key = tuple(root.spawn_key) + tuple(_name_word(name) for name in names)
    return np.random.Generator(np.random.PCG64(
        np.random.SeedSequence(entropy=root.entropy, spawn_key=key)))
