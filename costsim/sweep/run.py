"""``run_sweep``: every task of a sweep on an engine, each finished one cached at once, the
blocks of each variant summarized into ``run``'s figures (docs/sweep.md).

Each variant's plans are prepared once (a task of its own, on a worker); its blocks follow as
soon as that is done. A task found in the cache is not run again. Results do not depend on the
engine, the worker count or the order tasks finish in: a variant's replications are put in index
order before they are summarized.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from costsim.sim.montecarlo import plan_result
from costsim.sim.prepare import PreparedPlan
from costsim.sim.run_result import limit_breaches
from costsim.sweep.cache import TaskCache, decode
from costsim.sweep.engines import Engine
from costsim.sweep.results import SweepResult, SweepRow
from costsim.sweep.tasks import SweepSettings, SweepTask, SweepVariant, prep_key, task_list
from costsim.sweep.work import BlockResult, EncodedBlock, prepare_variant, simulate_task

PREP = "prep"
BLOCK = "block"
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class _Variant:
    """A variant's progress: its prepared plans, and its blocks by index."""

    preps: tuple[PreparedPlan, ...] | None = None
    prep_handle: Any = None
    blocks: dict[int, EncodedBlock] = field(default_factory=dict)  # computed this time
    cached: set[int] = field(default_factory=set)  # in the cache: loaded when summarized
    rows: tuple[SweepRow, ...] = ()

    def complete(self, blocks: int) -> bool:
        """Whether every block and the prepared plans are at hand."""
        return self.preps is not None and len(self.blocks) + len(self.cached) == blocks


def run_sweep(variants: Sequence[SweepVariant], settings: SweepSettings, engine: Engine, *,
              cache: TaskCache | None = None, progress: Progress | None = None,
              task_done: Callable[[SweepTask], None] | None = None,
              clock: Callable[[], float] | None = None) -> SweepResult:
    """Simulate every variant × block on ``engine`` and summarize each variant's plans.

    ``progress(done, total)`` counts tasks (cached ones first); ``task_done`` is called after
    each task the engine ran has been cached.
    """
    start = clock() if clock else 0.0
    tasks = task_list(variants, settings)
    per_variant = len(tasks) // len(variants) if variants else 0
    state = [_Variant() for _ in variants]
    computed = 0
    if cache is not None:
        for task in tasks:
            if cache.has(BLOCK, task.key):
                state[task.variant].cached.add(task.block)
    from_cache = sum(len(s.cached) for s in state)
    done = from_cache
    if progress:
        progress(done, len(tasks))
    pending: dict[Any, tuple[str, int, SweepTask | None]] = {}

    def own(v: int) -> Sequence[SweepTask]:
        return tasks[v * per_variant:(v + 1) * per_variant]

    def submit_blocks(v: int) -> None:
        preps: Any = state[v].prep_handle if state[v].prep_handle is not None else state[v].preps
        for task in own(v):
            if task.block not in state[v].cached:
                handle = engine.submit(simulate_task, preps, settings.seed,
                                       settings.replications, task.indices,
                                       label=f"block-{v}-{task.block}-{task.key[:16]}")
                pending[handle] = (BLOCK, v, task)

    for v, variant in enumerate(variants):
        key = prep_key(variant, settings)
        if cache is not None and cache.has(PREP, key):
            state[v].preps = _preps(cache.load(PREP, key))
            submit_blocks(v)
        else:  # prepared on a worker, also when every block is cached (the summary needs it)
            handle = engine.submit(prepare_variant, variant.scenario, settings.plans,
                                   label=f"prep-{v}-{key[:16]}")
            pending[handle] = (PREP, v, None)
    while pending:
        for handle in engine.done(pending):
            kind, v, finished = pending.pop(handle)
            if kind == PREP:
                state[v].preps = _preps(engine.result(handle))
                if cache is not None:
                    cache.store(PREP, prep_key(variants[v], settings), state[v].preps)
                state[v].prep_handle = handle
                submit_blocks(v)
            else:
                assert finished is not None
                data = engine.result(handle)
                assert isinstance(data, bytes)
                engine.release(handle)
                if cache is not None:
                    cache.store_bytes(BLOCK, finished.key, data)
                state[v].blocks[finished.block] = data
                computed += 1
                done += 1
                if task_done:
                    task_done(finished)
                if progress:
                    progress(done, len(tasks))
            if state[v].complete(per_variant):
                state[v].rows = _summarize(v, variants[v], state[v], own(v), cache)
                if state[v].prep_handle is not None:
                    engine.release(state[v].prep_handle)
                    state[v].prep_handle = None
                state[v].blocks.clear()  # summarized: the replications are no longer needed
    for v, variant in enumerate(variants):
        if not state[v].rows and state[v].complete(per_variant):  # all from the cache
            state[v].rows = _summarize(v, variant, state[v], own(v), cache)
    return SweepResult(settings=settings, rows=tuple(r for s in state for r in s.rows),
                       variants=len(variants), tasks=len(tasks), tasks_computed=computed,
                       tasks_from_cache=from_cache, engine=engine.name,
                       workers=getattr(engine, "workers", 0),
                       wall_s=(clock() - start) if clock else 0.0)


def _summarize(index: int, variant: SweepVariant, state: _Variant,
               tasks: Sequence[SweepTask], cache: TaskCache | None) -> tuple[SweepRow, ...]:
    """One row per prepared plan, from the variant's blocks in block order (those from the
    cache read now, one variant at a time: a resumed sweep never holds them all)."""
    assert state.preps is not None
    for task in tasks:  # the variant's own
        if task.block in state.cached:
            assert cache is not None
            state.blocks[task.block] = cache.load_bytes(BLOCK, task.key)
    ordered = [_block(decode(state.blocks[b])) for b in sorted(state.blocks)]
    rows = []
    for p, prep in enumerate(state.preps):
        result = plan_result(prep, [rep for block in ordered for rep in block[p]])
        breaches = tuple(limit_breaches(result, prep.scenario.risk)) if result.feasible else ()
        rows.append(SweepRow(variant=index, label=variant.label, name=variant.name,
                             overrides=variant.overrides, result=result,
                             limit_breaches=breaches))
    return tuple(rows)


def _preps(value: object) -> tuple[PreparedPlan, ...]:
    assert isinstance(value, tuple)
    return value


def _block(value: object) -> BlockResult:
    assert isinstance(value, tuple)
    return value
