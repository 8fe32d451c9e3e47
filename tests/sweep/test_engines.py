"""The engines: a Dask LocalCluster of 2 workers, of 1 worker, and the process pool the sweep
falls back to without the extra, give identical rows (DESIGN §11: same seed, same results,
whatever the number of workers)."""

from __future__ import annotations

import sys

import pytest

from costsim.errors import InputError
from costsim.sweep.engines import FALLBACK_NOTICE, open_engine
from costsim.sweep.run import run_sweep
from costsim.sweep.tasks import SweepSettings, SweepVariant

from .conftest import InProcessEngine


def _rows(engine_args: tuple[str, int], variants: list[SweepVariant],
          settings: SweepSettings) -> tuple[str, tuple[object, ...]]:
    engine, _ = open_engine(*engine_args)
    try:
        result = run_sweep(variants, settings, engine)
    finally:
        engine.close()
    return result.engine, result.rows


@pytest.mark.slow
def test_dask_with_two_workers_one_worker_and_the_fallback_pool_agree(
        variants: list[SweepVariant], settings: SweepSettings,
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    expected = run_sweep(variants, settings, InProcessEngine()).rows
    assert _rows(("local", 2), variants, settings) == ("dask", expected)
    assert _rows(("local", 1), variants, settings) == ("dask", expected)
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the extra were not installed
    assert _rows(("local", 2), variants, settings) == ("process-pool", expected)


def test_without_the_extra_local_falls_back_with_a_notice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    engine, notice = open_engine("local", 1)
    engine.close()
    assert engine.name == "process-pool"
    assert notice == FALLBACK_NOTICE
    assert "\n" not in FALLBACK_NOTICE


def test_without_the_extra_an_address_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(InputError, match=r"--scheduler: tcp://h:8786: .*costsim\[distributed\]"):
        open_engine("tcp://h:8786", 1)


@pytest.mark.slow
def test_an_address_runs_the_sweep_on_that_cluster(variants: list[SweepVariant],
                                                   settings: SweepSettings) -> None:
    distributed = pytest.importorskip("distributed")
    expected = run_sweep(variants, settings, InProcessEngine()).rows
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        engine, notice = open_engine(cluster.scheduler_address, 1)
        try:
            result = run_sweep(variants, settings, engine)
        finally:
            engine.close()
    assert notice is None
    assert (result.engine, result.workers, result.rows) == ("dask", 1, expected)


def test_an_address_where_no_scheduler_answers_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setattr("costsim.sweep.engines.CONNECT_TIMEOUT_S", 1)
    with pytest.raises(InputError, match=r"--scheduler: tcp://127.0.0.1:9: no Dask scheduler"):
        open_engine("tcp://127.0.0.1:9", 1)
