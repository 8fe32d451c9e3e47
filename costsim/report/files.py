"""Writing a report's files: atomically (a temporary file renamed over the target), and only
inside the report folder.

A reader never sees half a file: each file is written to a temporary name in the same folder,
flushed to disk, then renamed over its target (``os.replace`` is atomic on POSIX and Windows).
An interrupted write (Ctrl-C included) removes its temporary file.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPORT_FILE_MODE = 0o644


def write_atomic(out_dir: Path, relative: str, data: bytes) -> Path:
    """Write ``data`` to ``out_dir/relative`` atomically; return the path written.

    Raises:
        ValueError: ``relative`` leads outside ``out_dir`` (an absolute path, ``..``, or a
            sub-folder that is a link elsewhere).
        NotADirectoryError: ``out_dir`` is not an existing folder.
    """
    if not out_dir.is_dir():
        raise NotADirectoryError(f"report folder {out_dir} does not exist")
    root = out_dir.resolve()
    target = out_dir / relative
    if Path(relative).is_absolute() or ".." in Path(relative).parts:
        raise ValueError(f"refusing to write {relative!r} outside the report folder {out_dir}")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.parent.resolve().is_relative_to(root):
        raise ValueError(f"refusing to write {target}: its folder leads outside {out_dir}")
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                     suffix=".tmp")
    try:
        os.fchmod(fd, REPORT_FILE_MODE)  # mkstemp makes it private; a report is for sharing
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)  # replaces a link itself, never what it points to
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    return target


def json_bytes(document: Mapping[str, Any]) -> bytes:
    """A JSON document as written to disk: indented, UTF-8, no NaN or infinity."""
    return (json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()
