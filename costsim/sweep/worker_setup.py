"""Set-up of the worker processes of the LocalCluster a sweep starts (a Dask *preload*: Dask
imports this module in each worker process and calls :func:`dask_setup`).

Ctrl-C in a terminal reaches every process of the group: the sweep's own process stops the
sweep and shuts the cluster down, which ends the workers. Left to themselves the workers would
each print a KeyboardInterrupt traceback, so they ignore SIGINT.
"""

from __future__ import annotations

import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Ignore SIGINT in this worker process (its cluster's owner ends it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
