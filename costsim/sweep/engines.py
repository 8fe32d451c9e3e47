"""Where a sweep's tasks run: a Dask cluster (local or remote) or a local process pool.

``--scheduler local`` starts a Dask ``LocalCluster`` of K single-threaded worker processes (the
simulator is pure Python: threads would share one interpreter lock); an address connects to a
running scheduler. Without the ``distributed`` extra, ``local`` falls back to
``concurrent.futures.ProcessPoolExecutor`` and says so in one line. Both run the same functions
on the same arguments, so the results are the same (docs/sweep.md "Engine").
"""

from __future__ import annotations

import concurrent.futures as cf
import queue
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from costsim.errors import InputError
from costsim.sim.montecarlo import quiet_on_interrupt

LOCAL = "local"
DASK = "dask"
PROCESS_POOL = "process-pool"
# A remote scheduler that does not answer in this time is reported, not waited on forever.
CONNECT_TIMEOUT_S = 10
FALLBACK_NOTICE = ("costsim sweep: the 'distributed' extra is not installed (pip install "
                   "'costsim[distributed]'); running on a local process pool instead of Dask")


class Engine(Protocol):
    """Submits functions, says which have finished, hands results back."""

    name: str  # "dask" | "process-pool" (sweep JSON "engine")

    def submit(self, fn: Callable[..., Any], *args: Any, label: str) -> Any:
        """Start ``fn(*args)``; an argument may be the handle of a finished task."""

    def done(self, pending: Iterable[Any]) -> set[Any]:
        """Block until at least one of ``pending`` (every task submitted and not yet returned
        here) has finished; return those finished."""

    def result(self, handle: Any) -> Any:
        """The finished task's value (its exception re-raised)."""

    def release(self, handle: Any) -> None:
        """Forget a task whose value is no longer needed."""

    def close(self) -> None:
        """Stop the workers this engine started (a remote cluster is left running)."""


Handle = TypeVar("Handle")


class _FinishedQueue:
    """Tasks in the order they finish, told by their done-callbacks: waiting for the next one
    costs the same whether ten tasks are pending or ten thousand (``wait(FIRST_COMPLETED)``
    would visit every pending task each time)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def watch(self, handle: Handle) -> Handle:
        handle.add_done_callback(self._queue.put)  # type: ignore[attr-defined]
        return handle

    def next(self) -> set[Any]:
        """At least one finished task, and any others finished by then."""
        finished: set[Any] = set()
        while not finished:
            try:
                # a timeout, so that Ctrl-C is seen at once on every platform
                finished.add(self._queue.get(timeout=0.5))
            except queue.Empty:
                continue
        while True:
            try:
                finished.add(self._queue.get_nowait())
            except queue.Empty:
                return finished


class ProcessPoolEngine:
    """``concurrent.futures.ProcessPoolExecutor`` with ``workers`` processes."""

    name = PROCESS_POOL

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool = cf.ProcessPoolExecutor(max_workers=workers, initializer=quiet_on_interrupt)
        self._finished = _FinishedQueue()

    def submit(self, fn: Callable[..., Any], *args: Any, label: str) -> cf.Future[Any]:
        # a finished handle among the arguments is passed on as its value
        values = [a.result() if isinstance(a, cf.Future) else a for a in args]
        return self._finished.watch(self._pool.submit(fn, *values))

    def done(self, pending: Iterable[Any]) -> set[Any]:
        return self._finished.next()

    def result(self, handle: Any) -> Any:
        return handle.result()

    def release(self, handle: Any) -> None:
        """Nothing to do: the value lives in the handle until it is dropped."""

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class DaskEngine:
    """A ``distributed.Client`` on a running scheduler, or on a LocalCluster started at the
    first task (a resumed sweep whose tasks are all cached starts no cluster)."""

    name = DASK

    def __init__(self, connect: Callable[[], tuple[Any, Any]], workers: int | None = None
                 ) -> None:
        self._connect = connect
        self._client: Any = None
        self._cluster: Any = None
        self._finished = _FinishedQueue()
        self.workers = workers if workers is not None else len(self.client.scheduler_info().get(
            "workers", {}))

    @property
    def client(self) -> Any:
        """The client, connected (or its cluster started) on first use."""
        if self._client is None:
            self._client, self._cluster = self._connect()
        return self._client

    def submit(self, fn: Callable[..., Any], *args: Any, label: str) -> Any:
        # an explicit key: Dask would otherwise hash every argument (the scenario) per task
        return self._finished.watch(self.client.submit(fn, *args, key=label, pure=False))

    def done(self, pending: Iterable[Any]) -> set[Any]:
        return self._finished.next()

    def result(self, handle: Any) -> Any:
        return handle.result()

    def release(self, handle: Any) -> None:
        handle.release()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def open_engine(scheduler: str, workers: int) -> tuple[Engine, str | None]:
    """The engine ``--scheduler`` names, and the notice to print when it fell back.

    Raises:
        InputError: an address was given but the extra is not installed, or no scheduler
            answered there.
    """
    try:
        import distributed
    except ImportError:
        if scheduler != LOCAL:
            raise InputError("--scheduler", scheduler, "connecting to a Dask cluster needs the "
                             "'distributed' extra: pip install 'costsim[distributed]'") from None
        return ProcessPoolEngine(workers), FALLBACK_NOTICE
    if scheduler == LOCAL:
        def start() -> tuple[Any, Any]:
            cluster = distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                dashboard_address=None, preload=["costsim.sweep.worker_setup"],
                silence_logs=50)  # logging.CRITICAL: stderr is for the progress bar
            return distributed.Client(cluster), cluster

        return DaskEngine(start, workers), None

    def connect() -> tuple[Any, Any]:
        return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT_S), None

    try:
        return DaskEngine(connect), None  # connects now: a wrong address fails before any work
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise InputError("--scheduler", scheduler, f"no Dask scheduler answered there within "
                         f"{CONNECT_TIMEOUT_S} s ({exc}); start one with `dask scheduler` or "
                         "use --scheduler local") from None
