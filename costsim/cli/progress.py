"""The progress bar of ``run``, ``compare``, ``optimize`` and ``sweep``: one tqdm bar on stderr
over every plan, with an ETA.

The simulator reports ``progress(done, total)`` per plan; the bar adds the plans up, so a
four-plan run of 200 replications shows 0..800. It is drawn only when stderr is a terminal (never
in a pipe or a log file, and never on stdout, where ``--json`` writes).
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

# tqdm's default, with the ETA named: "ETA 03:12" (tqdm's {remaining}, from the measured rate)
BAR_FORMAT = ("{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed} elapsed, ETA {remaining}, "
              "{rate_fmt}{postfix}]")


class RunProgress:
    """A callable ``progress(done, total)`` for ``simulate_scenario``, drawing one bar."""

    def __init__(self, plans: int | None, replications: int, *,
                 enabled: bool | None = None, unit: str = "rep",
                 desc: str = "simulating", expected_s: float | None = None) -> None:
        self._offset = 0
        self._last_done = 0
        self._last_total = 0
        self._bar: Any = None
        if enabled is None:
            enabled = sys.stderr.isatty()
        if enabled:
            from tqdm import tqdm  # here: `costsim --help` never loads it

            # plans None: not known ahead (optimize simulates the finalists the screen picks)
            total = None if plans is None else plans * replications
            # the bar's ETA ("<remaining") comes from the rate measured so far; until the
            # first plan reports, the up-front estimate stands in for it
            self._bar = tqdm(total=total, unit=unit, file=sys.stderr, desc=desc, leave=False,
                             dynamic_ncols=True, bar_format=BAR_FORMAT if total else None)
            if expected_s is not None:
                from costsim.cli.work_notice import duration_text

                self._bar.set_postfix_str(f"expected {duration_text(expected_s)} in all")

    @property
    def done(self) -> int:
        """Replications finished so far, over every plan."""
        return self._offset + self._last_done

    def __call__(self, done: int, total: int) -> None:
        if self._last_total and self._last_done >= self._last_total:
            # the previous plan finished: this call is the next plan's first
            self._offset += self._last_total
            self._last_done = 0
        step = done - self._last_done
        self._last_done, self._last_total = done, total
        if self._bar is not None and step > 0:
            self._bar.update(step)

    def close(self) -> None:
        """Remove the bar (the table or JSON follows on a clean terminal)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
