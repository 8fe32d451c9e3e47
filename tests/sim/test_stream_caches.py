"""The memoized streams and draws (issue 20) give exactly what the plain derivation gives.

A stream is ``SeedSequence(entropy, spawn_key + BLAKE2b words of its names)`` seeding PCG64
(docs/simulator.md §4); the reference below derives it without any cache.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.domain.uncertainty import Distribution, Fixed, LogNormal, Normal, Triangular, Uniform
from costsim.sim import draws as draws_module
from costsim.sim import streams as streams_module
from costsim.sim.draws import draw, draw_named
from costsim.sim.streams import named_rng, replication_seeds


def plain_rng(root: np.random.SeedSequence, *names: str) -> np.random.Generator:
    words = tuple(int.from_bytes(hashlib.blake2b(n.encode("utf-8"), digest_size=8).digest(),
                                 "big") for n in names)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        entropy=root.entropy, spawn_key=tuple(root.spawn_key) + words)))


def clear_caches() -> None:
    for module in (streams_module, draws_module):
        for value in vars(module).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


names_st = st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**64), replication=st.integers(0, 20),
       names=names_st, cold=st.booleans())
def test_a_memoized_stream_is_the_plain_stream(seed: int, replication: int, names: list[str],
                                               cold: bool) -> None:
    if cold:
        clear_caches()
    root = replication_seeds(seed, replication + 1)[replication]
    expected = plain_rng(root, *names)
    for _ in range(2):  # computed, then from the cache
        got = named_rng(root, *names)
        assert got.bit_generator.state == expected.bit_generator.state
    assert np.array_equal(got.random(4), expected.random(4))


def test_other_generators_seeded_from_a_stream_get_the_seed_sequences_words() -> None:
    root = replication_seeds(3, 2)[1]
    seed = named_rng(root, "phase", "x").bit_generator.seed_seq
    plain = plain_rng(root, "phase", "x").bit_generator.seed_seq
    assert isinstance(plain, np.random.SeedSequence)
    for n_words, dtype in ((4, np.uint64), (4, np.uint32), (2, np.uint64), (8, np.uint32)):
        assert np.array_equal(seed.generate_state(n_words, dtype),
                              plain.generate_state(n_words, dtype))
    philox = np.random.Philox(seed).random_raw(3)
    assert np.array_equal(philox, np.random.Philox(plain).random_raw(3))


def test_a_root_with_non_integer_entropy_is_derived_without_the_cache() -> None:
    root = np.random.SeedSequence([1, 2, 3]).spawn(2)[1]
    assert (named_rng(root, "a").bit_generator.state
            == plain_rng(root, "a").bit_generator.state)
    assert draw_named(LogNormal(sigma=0.3), root, "a") == draw(LogNormal(sigma=0.3),
                                                                plain_rng(root, "a"))


distributions = st.one_of(
    st.builds(Fixed, value=st.floats(-5, 5)),
    st.builds(Normal, mean=st.floats(-5, 5), sd=st.floats(0.1, 3)),
    st.builds(LogNormal, sigma=st.floats(0.01, 1)),
    st.builds(Uniform, low=st.just(0.5), high=st.just(1.5)),
    st.builds(Triangular, low=st.just(0.7), mode=st.just(1.0), high=st.just(1.5)))


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32), replication=st.integers(0, 9), name=st.text(min_size=1),
       dist=distributions, cold=st.booleans())
def test_a_memoized_draw_is_the_first_value_of_its_stream(seed: int, replication: int,
                                                          name: str, dist: Distribution,
                                                          cold: bool) -> None:
    if cold:
        clear_caches()
    root = replication_seeds(seed, 10)[replication]
    expected = draw(dist, plain_rng(root, "uncertainty", name))
    assert draw_named(dist, root, "uncertainty", name) == expected
    assert draw_named(dist, root, "uncertainty", name) == expected  # from the cache


def test_streams_and_draws_of_a_replication_are_derived_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every plan asks for the same streams of a replication: the second ask hashes nothing
    and mixes no seed."""
    clear_caches()
    made = []
    plain = np.random.SeedSequence

    def counting(*args: object, **kwargs: object) -> np.random.SeedSequence:
        made.append(1)
        return plain(*args, **kwargs)  # type: ignore[arg-type]

    root = replication_seeds(0, 5)[4]
    named_rng(root, "phase", "train", "run").random()
    draw_named(LogNormal(sigma=0.1), root, "uncertainty", "throughput_error")
    monkeypatch.setattr(streams_module.np.random, "SeedSequence", counting)
    for _ in range(5):
        named_rng(root, "phase", "train", "run").random()
        draw_named(LogNormal(sigma=0.1), root, "uncertainty", "throughput_error")
    assert made == []
