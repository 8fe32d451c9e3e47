"""The task list and the cache keys: fixed by the inputs, never by the workers."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from costsim.sweep.tasks import SweepSettings, SweepVariant, blocks, task_key, task_list


@given(replications=st.integers(1, 5000), size=st.integers(1, 50))
def test_blocks_cover_every_replication_once_in_order(replications: int, size: int) -> None:
    cut = blocks(replications, size)
    assert [i for block in cut for i in block] == list(range(replications))
    assert all(len(block) == size for block in cut[:-1])


def test_every_input_of_a_result_is_in_its_key(variants: list[SweepVariant],
                                               settings: SweepSettings) -> None:
    variant = variants[0]
    key = task_key(variant, 0, settings)
    assert task_key(variant, 0, settings) == key
    changed = [
        task_key(variants[1], 0, settings),
        task_key(variant, 1, settings),
        task_key(dataclasses.replace(variant, resolved={**variant.resolved, "name": "x"}), 0,
                 settings),
        task_key(dataclasses.replace(variant, referenced_sha256={"a.csv": "1" * 64}), 0,
                 settings),
        task_key(dataclasses.replace(variant, overrides={"x": 1}), 0, settings),
        *(task_key(variant, 0, dataclasses.replace(settings, **change)) for change in (
            {"seed": 8}, {"replications": 13}, {"block_size": 6}, {"plans": None},
            {"costsim_version": "0.2"}, {"price_book": "another"})),
    ]
    assert key not in changed
    assert len(set(changed)) == len(changed)


def test_the_label_and_name_do_not_change_a_key(variants: list[SweepVariant],
                                                settings: SweepSettings) -> None:
    variant = variants[0]
    renamed = dataclasses.replace(variant, label="other", name="other")
    assert task_key(renamed, 0, settings) == task_key(variant, 0, settings)


def test_the_task_list_is_variants_by_blocks(variants: list[SweepVariant],
                                            settings: SweepSettings) -> None:
    tasks = task_list(variants, settings)
    assert [(t.variant, t.block, len(t.indices)) for t in tasks] == [
        (0, 0, 5), (0, 1, 5), (0, 2, 2), (1, 0, 5), (1, 1, 5), (1, 2, 2)]
    assert len({t.key for t in tasks}) == 6
