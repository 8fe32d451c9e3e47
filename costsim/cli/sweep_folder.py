"""The ``--out`` folder of a sweep: new, or an interrupted sweep's to resume (DESIGN §7).

Unlike ``run``'s report, a sweep writes into its folder while it works (each finished task is
cached there at once, so an interruption loses nothing finished), so the folder is created at
the start and marked as a sweep's; ``--resume`` continues only a marked folder, and a folder
that exists without ``--resume`` is refused before anything is loaded or written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from costsim.cli.report_folder import check_writable
from costsim.errors import InputError

# A sweep folder holds this file from its first moment; --resume continues only such folders.
SWEEP_MARKER = "sweep-inputs.json"


def check_sweep_out(out: Path, resume: bool) -> None:
    """Refuse an ``--out`` the sweep may not use.

    Raises:
        InputError: ``out`` exists without ``--resume``; it is not a folder; with ``--resume``
            it is a folder that no sweep made.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise InputError("--out", str(out), "exists and is not a folder; name a new folder")
    if not out.exists():
        parent = out.absolute().parent
        if parent.exists() and not parent.is_dir():
            raise InputError("--out", str(out), f"{parent} is not a folder")
        check_writable(out, parent)  # before any variant is loaded or simulated
        return
    if not resume:
        raise InputError("--out", str(out), "the folder exists; name a new one, or add "
                         "--resume to finish the sweep in it")
    if not (out / SWEEP_MARKER).is_file():
        raise InputError("--out", str(out), f"the folder is not a costsim sweep (no "
                         f"{SWEEP_MARKER}); --resume continues only a sweep's folder")


def open_sweep_out(out: Path, resume: bool, inputs: Mapping[str, Any]) -> None:
    """Create (or, resuming, reuse) the sweep folder and mark it as a sweep's."""
    from costsim.sweep.cache import write_atomic

    check_sweep_out(out, resume)  # it may have appeared while the variants loaded
    out.mkdir(parents=True, exist_ok=resume)
    if not (out / SWEEP_MARKER).is_file():
        write_atomic(out / SWEEP_MARKER,
                     (json.dumps(dict(inputs), indent=2) + "\n").encode("utf-8"))
