"""Where ``costsim run`` (and ``optimize``) writes its report, and how it gets there whole or
not at all.

DESIGN §7/§11: ``--out`` naming an existing folder is an error (exit 2, nothing touched) unless
``--force``; the report is written into a hidden sibling folder and renamed into place at the
end, so an interrupted run (Ctrl-C, a crash) leaves no half-written report behind. ``--force``
replaces only a folder that is empty or holds a costsim report (its ``summary.json``): it never
deletes a folder of someone's other files (``--out . --force``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from costsim.errors import InputError

REPORTS_DIR = Path("reports")
# A costsim report folder holds one of these (run's summary, optimize's answer); --force
# replaces only such folders (or empty ones).
REPORT_MARKERS = ("summary.json", "optimize.json")


def default_out_dir(scenario: Path, now: dt.datetime, kind: str = "") -> Path:
    """``reports/<scenario file stem>[-<kind>]-<UTC timestamp>`` (``kind``: the command when
    it is not ``run``, e.g. ``optimize``); a second run within the same second gets ``-2``,
    ``-3``, … rather than an error."""
    stamp = now.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    base = REPORTS_DIR / "-".join(part for part in (scenario.stem, kind, stamp) if part)
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


def check_out_dir(out: Path, force: bool) -> None:
    """Refuse an ``--out`` the run may not write (before anything is simulated).

    Raises:
        InputError: ``out`` exists (without ``--force``), is a file, or is a folder that is not a
            costsim report; or its parent is not a folder.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise InputError("--out", str(out), "exists and is not a folder; name a new folder")
    if out.exists():
        if not force:
            raise InputError("--out", str(out), "the folder exists; name a new one, or add "
                             "--force to replace the report in it")
        if any(out.iterdir()) and not any((out / m).is_file() for m in REPORT_MARKERS):
            raise InputError("--out", str(out), "the folder is not a costsim report (no "
                             f"{' or '.join(REPORT_MARKERS)}); --force replaces only report "
                             "folders")
    parent = out.absolute().parent
    if parent.exists() and not parent.is_dir():
        raise InputError("--out", str(out), f"{parent} is not a folder")
    check_writable(out, parent)


def check_writable(out: Path, parent: Path) -> None:
    """Make and remove a folder where the report's folders will be made (the deepest folder of
    ``out``'s parents that exists): a read-only or pseudo file system (``/proc``) fails here,
    before the simulation, not after it."""
    existing = next((folder for folder in (parent, *parent.parents) if folder.exists()), None)
    if existing is None or not existing.is_dir():
        raise InputError("--out", str(out), f"{existing or parent} is not a folder")
    try:
        probe = tempfile.mkdtemp(prefix=".costsim-probe-", dir=existing)
        os.rmdir(probe)
    except OSError as exc:
        raise InputError("--out", str(out), f"cannot write a folder in {existing} "
                         f"({exc.strerror or exc}); name a folder you may write to") from None


@contextmanager
def staged_out_dir(out: Path, force: bool) -> Iterator[Path]:
    """A fresh temporary folder beside ``out`` to write into; renamed to ``out`` when the block
    ends normally, removed (and ``out`` untouched) when it raises, Ctrl-C included."""
    check_out_dir(out, force)
    parent = out.absolute().parent
    created = [folder for folder in (parent, *parent.parents) if not folder.exists()]
    parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        yield staging
        _move_into_place(staging, out, force)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in created:  # deepest first: the folders this run made for --out
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty
        raise


def _move_into_place(staging: Path, out: Path, force: bool) -> None:
    """Rename ``staging`` to ``out``; with --force the old report is moved aside first and
    deleted only once the new one is in place."""
    check_out_dir(out, force)  # it may have appeared while the run simulated
    if not out.exists():
        staging.rename(out)
        return
    retired = out.with_name(f".{out.name}.replaced-{os.getpid()}")
    shutil.rmtree(retired, ignore_errors=True)
    out.rename(retired)
    try:
        staging.rename(out)
    except BaseException:
        retired.rename(out)
        raise
    shutil.rmtree(retired, ignore_errors=True)
