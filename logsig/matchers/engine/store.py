"""Compiled catalogs on disk: one verified file per fingerprint, written atomically, bounded.

An entry is ``<directory>/<key>.compiled``: :data:`MAGIC`, the SHA-256 of the payload (32
bytes), then the payload (:mod:`logsig.matchers.engine.compiled` writes and checks it). A file
that is truncated, has flipped bytes or the wrong magic fails :meth:`CompileCache.read`, which
deletes it and answers None, so the caller rebuilds: an entry is never trusted unverified.

Writes go to a temporary file in the same directory, then ``os.replace`` (atomic on POSIX), so
a reader never sees half an entry and concurrent writers of the same key leave one whole file.
After each write the least recently used entries beyond ``max_entries`` are removed (a read
refreshes an entry's modification time).

The default directory is ``logsig/compiled`` under the user's cache directory
(``platformdirs.user_cache_dir``: ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

import platformdirs

MAGIC = b"logsig-compiled\n"
SUFFIX = ".compiled"
_DIGEST_BYTES = 32


def default_cache_dir() -> Path:
    """``<user cache dir>/logsig/compiled`` (``$XDG_CACHE_HOME/logsig/compiled`` on Linux)."""
    return Path(platformdirs.user_cache_dir("logsig")) / "compiled"


class CompileCache:
    """A directory of compiled catalogs, at most ``max_entries`` (oldest used pruned first).

    OSError while reading is a miss; while writing it is swallowed (the cache is an optimisation:
    a read-only or full disk must not stop matching) and recorded in ``last_error``.
    """

    def __init__(self, directory: Path, max_entries: int = 8) -> None:
        self.directory = Path(directory)
        self.max_entries = max(1, max_entries)
        self.last_error: str | None = None

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` (hex) lives."""
        return self.directory / f"{key}{SUFFIX}"

    def read(self, key: str) -> bytes | None:
        """The verified payload stored for ``key``, or None (absent, or damaged and now removed)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        header = len(MAGIC) + _DIGEST_BYTES
        payload = data[header:]
        if data[: len(MAGIC)] != MAGIC or hashlib.sha256(payload).digest() != data[len(MAGIC):header]:
            self.discard(key)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return payload

    def write(self, key: str, payload: bytes) -> bool:
        """Store ``payload`` for ``key`` atomically, then prune; False if the disk refused."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".tmp", dir=self.directory)
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(MAGIC + hashlib.sha256(payload).digest() + payload)
                os.chmod(temporary, 0o644)  # readable by others, as a file written with open()
                os.replace(temporary, self.path(key))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
            self.prune()
        except OSError as error:
            self.last_error = f"cannot write the compile cache in {self.directory}: {error}"
            return False
        return True

    def discard(self, key: str) -> None:
        """Remove the entry for ``key`` if there is one."""
        with contextlib.suppress(OSError):
            self.path(key).unlink()

    def entries(self) -> list[Path]:
        """The entry files, most recently used first."""
        try:
            found = [p for p in self.directory.iterdir() if p.suffix == SUFFIX]
        except OSError:
            return []
        return sorted(found, key=_mtime, reverse=True)

    def prune(self) -> None:
        """Remove the least recently used entries beyond ``max_entries``."""
        for stale in self.entries()[self.max_entries:]:
            with contextlib.suppress(OSError):
                stale.unlink()


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
