"""Stream seeds for a block of replications at once: numpy's ``SeedSequence`` hash, vectorized
(issue 20).

A stream's generator is PCG64 seeded from ``SeedSequence(entropy, spawn_key = replication's
key + name words).generate_state(4, uint64)`` (:mod:`costsim.sim.streams`). numpy derives it in
~30 µs a stream (the entropy mixing and the state hash run word by word in a Python-level
loop), ~10 streams a replication, and every replication asks for the same names. The hash is
fixed arithmetic on 32-bit words (M. E. O'Neill's seed_seq_fe, as numpy's
``bit_generator.pyx`` implements it for its default pool of 4 words), so the streams of one
name path for a block of consecutive replications (their keys differ in the last spawn-key
word only) are computed together here, each operation on the block's words as one uint32
array (products wrap modulo 2^32 as the C code's ``uint32_t`` do). The words are those
numpy gives for each key, bit for bit (tests/sim/test_seed_block.py compares them with
``SeedSequence`` over entropies, spawn keys and names of every length), so a replication's
stream is the same whichever block computed it, cold or cached, alone or on a worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

POOL_SIZE = 4  # numpy's DEFAULT_POOL_SIZE
_INIT_A = 0x43B0D7E5
_MULT_A = 0x931E8875
_INIT_B = 0x8B51F9DD
_MULT_B = 0x58F38DED
_MIX_MULT_L = 0xCA01F9DD
_MIX_MULT_R = 0x4973F715
_XSHIFT = 16  # half a 32-bit word
_MASK32 = 0xFFFFFFFF


def uint32_words(value: int) -> list[int]:
    """numpy's ``_int_to_uint32_array``: the 32-bit words of a non-negative integer, least
    significant first ([0] for 0)."""
    if value < 0:
        raise ValueError("expected non-negative integer")
    if value == 0:
        return [0]
    words = []
    while value > 0:
        words.append(value & _MASK32)
        value >>= 32
    return words


def assembled_words(entropy: int, spawn_key: Sequence[int]) -> list[int]:
    """``SeedSequence.get_assembled_entropy`` for an integer entropy: the entropy's words,
    padded with zeros to the pool size when there is a spawn key, then each spawn-key
    element's words."""
    run = uint32_words(entropy)
    spawn = [w for part in spawn_key for w in uint32_words(part)]
    if spawn and len(run) < POOL_SIZE:
        run = run + [0] * (POOL_SIZE - len(run))
    return run + spawn


Word = int | NDArray[Any]  # one word for every row (a Python int), or a uint32 array


def _mul(x: Word, c: int) -> Word:
    """x · c modulo 2^32 (a uint32 array's product wraps)."""
    return (x * c) & _MASK32 if isinstance(x, int) else x * c


def _hashmix(value: Word, hash_const: int) -> tuple[Word, int]:
    """numpy's ``hashmix``: the mixed value and the next hash constant."""
    value = value ^ hash_const
    hash_const = (hash_const * _MULT_A) & _MASK32
    value = _mul(value, hash_const)
    return value ^ (value >> _XSHIFT), hash_const


def _mix(x: Word, y: Word) -> Word:
    """numpy's ``mix``: (L·x − R·y) modulo 2^32, its high half folded into the low."""
    left, right = _mul(x, _MIX_MULT_L), _mul(y, _MIX_MULT_R)
    if isinstance(left, int) and isinstance(right, int):
        result: Word = (left - right) & _MASK32
    else:  # uint32 arrays wrap; a Python int operand is a uint32 here (< 2^32)
        result = left - right
    return result ^ (result >> _XSHIFT)


def pcg64_words(columns: Sequence[Word], size: int) -> NDArray[np.uint64]:
    """``SeedSequence.generate_state(4, uint64)`` for ``size`` assembled entropy arrays given
    column by column (a column: one word shared by every row, as a Python int, or a uint32
    array of ``size`` words): a (size, 4) uint64 array, row i the seed of the i-th array.
    Words shared by every row are hashed once, as Python integers modulo 2^32."""
    with np.errstate(over="ignore"):
        hash_const = _INIT_A
        mixer: list[Word] = []
        for i in range(POOL_SIZE):
            value, hash_const = _hashmix(columns[i] if i < len(columns) else 0, hash_const)
            mixer.append(value)
        for i_src in range(POOL_SIZE):
            for i_dst in range(POOL_SIZE):
                if i_src != i_dst:
                    hashed, hash_const = _hashmix(mixer[i_src], hash_const)
                    mixer[i_dst] = _mix(mixer[i_dst], hashed)
        for i_src in range(POOL_SIZE, len(columns)):
            for i_dst in range(POOL_SIZE):
                hashed, hash_const = _hashmix(columns[i_src], hash_const)
                mixer[i_dst] = _mix(mixer[i_dst], hashed)
        state = np.empty((size, 2 * POOL_SIZE), dtype=np.uint32)
        out_const = _INIT_B
        for i_dst in range(2 * POOL_SIZE):
            value = mixer[i_dst % POOL_SIZE] ^ out_const
            out_const = (out_const * _MULT_B) & _MASK32
            value = _mul(value, out_const)
            state[:, i_dst] = value ^ (value >> _XSHIFT)
    # pairs of 32-bit words, little-endian first, as numpy views them as uint64
    low = state[:, 0::2].astype(np.uint64)
    high = state[:, 1::2].astype(np.uint64)
    words: NDArray[np.uint64] = low | (high << np.uint64(32))
    return words
