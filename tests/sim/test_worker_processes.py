"""Worker processes of a parallel run end quietly on Ctrl-C: the parent, not each worker, reports
the interruption (a terminal sends SIGINT to the whole process group)."""

from __future__ import annotations

import signal
from concurrent.futures import ProcessPoolExecutor

from costsim.sim.montecarlo import quiet_on_interrupt


def _sigint_handler() -> object:
    return signal.getsignal(signal.SIGINT)


def test_a_worker_takes_sigint_s_default_action_not_a_keyboardinterrupt() -> None:
    with ProcessPoolExecutor(max_workers=1, initializer=quiet_on_interrupt) as pool:
        assert pool.submit(_sigint_handler).result() == signal.SIG_DFL
    with ProcessPoolExecutor(max_workers=1) as pool:  # what Python gives a worker otherwise
        assert pool.submit(_sigint_handler).result() == signal.default_int_handler
