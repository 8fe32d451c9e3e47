"""The block derivation of stream seeds (issue 20) gives numpy's SeedSequence words, bit for
bit: for any integer entropy, spawn key and names, alone or as any row of a block."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.sim import streams as streams_module
from costsim.sim.seed_block import assembled_words, pcg64_words
from costsim.sim.streams import _name_word, _pcg64_words

words_st = st.one_of(st.integers(0, 3), st.integers(0, 2**32 - 1), st.integers(2**32, 2**64),
                     st.just(2**32 - 1), st.just(2**32))
entropy_st = st.one_of(st.integers(0, 2**32 - 1), st.integers(0, 2**130), st.just(0))


def numpy_words(entropy: int, spawn_key: tuple[int, ...]) -> np.ndarray:
    return np.random.SeedSequence(entropy, spawn_key=spawn_key).generate_state(4, np.uint64)


@settings(max_examples=300, deadline=None)
@given(entropy=entropy_st, spawn_key=st.lists(words_st, max_size=6))
def test_one_key_gives_numpys_words(entropy: int, spawn_key: list[int]) -> None:
    got = pcg64_words(assembled_words(entropy, spawn_key), 1)[0]
    assert got.tobytes() == numpy_words(entropy, tuple(spawn_key)).tobytes()


@settings(max_examples=60, deadline=None)
@given(entropy=entropy_st, head=st.lists(words_st, max_size=2),
       tail=st.lists(words_st, max_size=4), base=st.integers(0, 2**32 - 9))
def test_a_block_gives_each_rows_words(entropy: int, head: list[int], tail: list[int],
                                       base: int) -> None:
    """One column varying over the block (each row one word), the others shared."""
    rows = np.arange(base, base + 8, dtype=np.uint32)
    prefix = assembled_words(entropy, (*head, 0))[:-1]
    rest = assembled_words(0, tail)[4:] if tail else []
    block = pcg64_words([*prefix, rows, *rest], rows.size)
    for i, v in enumerate(rows.tolist()):
        assert block[i].tobytes() == numpy_words(entropy, (*head, v, *tail)).tobytes()


@settings(max_examples=60, deadline=None)
@given(entropy=entropy_st, root=st.lists(st.integers(0, 2**32 + 5), min_size=0, max_size=3),
       names=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3),
       cold=st.booleans())
def test_a_streams_seed_is_the_seed_sequences_words_cold_or_from_its_block(
        entropy: int, root: list[int], names: list[str], cold: bool) -> None:
    if cold:
        streams_module._SEED_BLOCKS.clear()
    key = (entropy, tuple(root), tuple(names))
    want = numpy_words(entropy, (*root, *(_name_word(n) for n in names)))
    got = _pcg64_words(key)
    assert got.tobytes() == want.tobytes()
    got[0] = 0  # a copy: the kept block is untouched
    assert _pcg64_words(key).tobytes() == want.tobytes()


def test_replication_streams_equal_whichever_replication_asks_first() -> None:
    """The replications of one block, asked in any order, after a cold start or not."""
    roots = [(0, (r,), ("phase", "serve", "spot")) for r in (63, 64, 0, 130, 1, 127)]
    streams_module._SEED_BLOCKS.clear()
    first = [_pcg64_words(k).tobytes() for k in roots]
    streams_module._SEED_BLOCKS.clear()
    again = [_pcg64_words(k).tobytes() for k in reversed(roots)][::-1]
    assert first == again
    for (entropy, spawn, names), got in zip(roots, first, strict=True):
        assert got == numpy_words(entropy, (*spawn, *(_name_word(n) for n in names))).tobytes()
