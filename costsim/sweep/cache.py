"""The result cache of a sweep, inside its ``--out`` folder (docs/sweep.md "Cache").

One file per finished task (and one per variant's prepared plans), named by the task's key
(:func:`costsim.sweep.tasks.task_key`), written the moment the task finishes: to a temporary
name, flushed to disk, then renamed into place, so an interrupted sweep leaves only whole
entries, and ``--resume`` reuses exactly the tasks whose inputs are unchanged. Entries are
pickled (the results are the simulator's frozen dataclasses) and zlib-compressed; the cache is
read only from a folder this sweep wrote, never from a scenario's files.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import tempfile
import zlib
from pathlib import Path

CACHE_DIR = "cache"
_KEY = re.compile(r"^[0-9a-f]{64}$")
# zlib level 1: replications are mostly float arrays that compress ~2-3x at any level; higher
# levels cost CPU on the sweep's own process for a few percent of disk
_LEVEL = 1


class TaskCache:
    """Finished results by key, as files under ``root/cache/``."""

    def __init__(self, root: Path) -> None:
        self.folder = root / CACHE_DIR

    def _path(self, kind: str, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.folder / f"{kind}-{key}.pickle.z"

    def has(self, kind: str, key: str) -> bool:
        """Whether an entry for ``key`` is stored."""
        return self._path(kind, key).is_file()

    def load(self, kind: str, key: str) -> object:
        """The stored entry (FileNotFoundError when there is none)."""
        return decode(self.load_bytes(kind, key))

    def load_bytes(self, kind: str, key: str) -> bytes:
        """The stored entry as written (:func:`encode`'s bytes)."""
        return self._path(kind, key).read_bytes()

    def store(self, kind: str, key: str, value: object) -> Path:
        """Write ``value`` under ``key`` atomically; return its path."""
        return self.store_bytes(kind, key, encode(value))

    def store_bytes(self, kind: str, key: str, data: bytes) -> Path:
        """Write an entry already encoded (by a worker) atomically; return its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return write_atomic(self._path(kind, key), data)


def encode(value: object) -> bytes:
    """A result as a cache entry holds it: pickled, zlib-compressed. Workers encode their
    blocks themselves, so the sweep's own process — which on a small machine shares the cores
    with the workers — only moves bytes (about a third of the pickle) and decodes each block
    once, when it summarizes the variant."""
    return zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), _LEVEL)


def decode(data: bytes) -> object:
    """The result :func:`encode` encoded."""
    return pickle.loads(zlib.decompress(data))


def write_atomic(target: Path, data: bytes) -> Path:
    """Write ``data`` to ``target`` whole or not at all: a temporary file in the same folder,
    flushed to disk, renamed over the target."""
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    return target
