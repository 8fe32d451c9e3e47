"""Random streams: one per replication, split by *names* (docs/simulator.md §4).

Replication r of every plan starts from ``SeedSequence(seed).spawn(replications)[r]``; each
consumer (a phase's arrivals, a pool's preemptions, an uncertainty variable) derives its own
generator from that by appending a stable hash of its name path to the spawn key. So a plan that
lacks a phase draws the same numbers for the others, ``run --plan B`` gives B what a full run
gives it, and plans are compared on the same futures. A hash, not Python's ``hash``: it must be
the same in every process and on every run (PYTHONHASHSEED varies).

Deriving a stream costs a BLAKE2b hash per name and a SeedSequence's entropy mixing (~30 µs),
and every plan asks for the same streams of a replication (that is how they share futures). So
the name hashes are memoized, and each stream's seed (the four words PCG64 is seeded with) is
derived for a block of 64 consecutive replications at once, by numpy's hash vectorized over
the block (:mod:`costsim.sim.seed_block`, ~3 µs a stream), and kept: a plan after the first
gets its streams' seeds from the cache, bit for bit those SeedSequence computes. The caches
are bounded; a miss computes the seed again, so a result never depends on what was cached (or
on how replications are split over processes or blocks).
"""

from __future__ import annotations

import functools
import hashlib
from typing import cast

import numpy as np
from numpy.random.bit_generator import ISeedSequence
from numpy.typing import DTypeLike, NDArray

from costsim.sim.seed_block import assembled_words, pcg64_words, uint32_words

# Names are a scenario's phase, pool and variable names: few, however many replications.
_NAMES_KEPT = 4096
# Stream seeds: ~10–20 streams per replication, kept for a few thousand replications (about
# 300 bytes each, ~10 MB), so every plan of a run of that size shares them; a bigger run still
# gets identical streams, computed anew per plan.
_SEEDS_KEPT = 2**15
_PCG64_WORDS = 4  # PCG64 seeds its 128-bit state and increment from four 64-bit words

StreamKey = tuple[int, tuple[int, ...], tuple[str, ...]]  # (entropy, spawn key, names)


def replication_seeds(seed: int, replications: int) -> tuple[np.random.SeedSequence, ...]:
    """The root of each replication's streams."""
    return tuple(np.random.SeedSequence(seed).spawn(replications))


@functools.lru_cache(maxsize=_NAMES_KEPT)
def _name_word(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest(), "big")


def _seed_sequence(entropy: int, spawn_key: tuple[int, ...],
                   names: tuple[str, ...]) -> np.random.SeedSequence:
    return np.random.SeedSequence(entropy=entropy,
                                  spawn_key=spawn_key + tuple(_name_word(n) for n in names))


@functools.lru_cache(maxsize=_SEEDS_KEPT)
def _pcg64_seed(key: StreamKey) -> bytes:
    """The words ``SeedSequence(...).generate_state(4, uint64)`` gives for the stream."""
    words = _seed_sequence(*key).generate_state(_PCG64_WORDS, np.uint64)
    return words.tobytes()


# Streams of one name path are derived for a block of consecutive replications at once (their
# keys differ in the last spawn-key word only): numpy's hash vectorized over the block
# (:mod:`costsim.sim.seed_block`, the same words), ~3 µs a stream where SeedSequence takes
# ~30. A block is 64 rows of 4 words (2 KB); a few thousand are kept (a run's ~10 names per
# 64 replications), a miss computes the block again (the same words).
_SEED_BLOCK = 64
_SEED_BLOCKS_KEPT = 2**12
_SEED_BLOCKS: dict[tuple[int, tuple[int, ...], tuple[str, ...], int],
                   NDArray[np.uint64]] = {}


def _pcg64_words(key: StreamKey) -> NDArray[np.uint64]:
    """:func:`_pcg64_seed`'s words as a new uint64 array, from the key's block of
    replications (keys whose last spawn-key word is below 2^32 − the block; any other key
    through SeedSequence itself)."""
    entropy, spawn_key, names = key
    last = spawn_key[-1] if spawn_key else -1
    if not 0 <= last < 2**32 - _SEED_BLOCK or entropy < 0:
        return np.frombuffer(_pcg64_seed(key), dtype=np.uint64).copy()
    base = last - last % _SEED_BLOCK
    block_key = (entropy, spawn_key[:-1], names, base)
    block = _SEED_BLOCKS.get(block_key)
    if block is None:
        # the assembled words with the last spawn-key word one column over the block (a
        # word below 2^32 is one 32-bit word, 0 included)
        prefix = assembled_words(entropy, (*spawn_key[:-1], 0))[:-1]
        name_words = [w for name in names for w in uint32_words(_name_word(name))]
        block = pcg64_words([*prefix, np.arange(base, base + _SEED_BLOCK, dtype=np.uint32),
                             *name_words], _SEED_BLOCK)
        block.flags.writeable = False
        if len(_SEED_BLOCKS) >= _SEED_BLOCKS_KEPT:
            _SEED_BLOCKS.pop(next(iter(_SEED_BLOCKS)))
        _SEED_BLOCKS[block_key] = block
    words: NDArray[np.uint64] = block[last - base].copy()
    return words


class _StreamSeed(ISeedSequence):
    """A stream's seed sequence with its PCG64 words memoized; any other request is answered by
    the SeedSequence itself, so it gives exactly what that SeedSequence would."""

    __slots__ = ("_key",)

    def __init__(self, key: StreamKey) -> None:
        self._key = key

    def generate_state(self, /, n_words: int,
                       dtype: DTypeLike = np.uint32) -> NDArray[np.uint32 | np.uint64]:
        if n_words == _PCG64_WORDS and np.dtype(dtype) == np.dtype(np.uint64):
            return _pcg64_words(self._key)
        return _seed_sequence(*self._key).generate_state(n_words, dtype)  # type: ignore[arg-type]


def stream_key(root: np.random.SeedSequence, names: tuple[str, ...]) -> StreamKey | None:
    """What identifies the stream ``names`` under ``root`` (None when the root's entropy is
    not an integer, which :func:`replication_seeds` never gives: then nothing is cached)."""
    entropy = root.entropy
    if type(entropy) is not int:
        return None
    return (entropy, tuple(root.spawn_key), names)


def named_rng(root: np.random.SeedSequence, *names: str) -> np.random.Generator:
    """The generator of the stream ``names`` (e.g. ``("phase", "train", "failures")``) under
    ``root``: the same names always give the same numbers, different names independent ones."""
    key = stream_key(root, names)
    if key is None:
        spawn_key = tuple(root.spawn_key) + tuple(_name_word(name) for name in names)
        return np.random.Generator(np.random.PCG64(
            np.random.SeedSequence(entropy=root.entropy, spawn_key=spawn_key)))
    return named_rng_of(key)


def named_rng_of(key: StreamKey) -> np.random.Generator:
    """The generator of the stream :func:`stream_key` identified."""
    # numpy's bit generators take any ISeedSequence (its documented interface); its stubs
    # name SeedSequence only
    return np.random.Generator(np.random.PCG64(cast(np.random.SeedSequence, _StreamSeed(key))))
