"""Catalog reload: compile once, reload on change or SIGHUP off the event loop, keep the old catalog if the new fails.

A reload loads and compiles the new catalog in a child process
(:mod:`logsig.daemon.compile_process`), waited for by a worker thread (:class:`CatalogWatcher`):
the event loop goes on consuming with the running catalog, answering ``/healthz`` and
``/metrics`` and heartbeating the consumer group meanwhile, and the daemon's interpreter lock
is held only while the worker deserialises the answer (with the garbage collector held off).
:meth:`CatalogWatcher.poll`, called from the runner's housekeeping, starts the reload when due
and hands over the new engine at the first poll after it finished. Any failure, a catalog
problem (:class:`~logsig.errors.CatalogError`) or anything else (``hyperscan.error``,
``MemoryError``, an unreadable file, a child process that died: ``BrokenProcessPool``), is logged
(``catalog reload failed; keeping the running catalog``) and counted
(``logsig_catalog_reloads_total{result="failure"}``), and the running catalog stays.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import structlog

from logsig.config import CatalogSettings
from logsig.daemon.compile_process import Preparer, engine_from, in_child, prepare, unpickle
from logsig.errors import CatalogError
from logsig.matchers.catalog.loader import builtin_path, catalog_files, load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.telemetry import Metrics

log = structlog.get_logger("logsig.catalog")

Fingerprint = tuple[tuple[str, int, int], ...]
WORKER_SWITCH_INTERVAL_SECONDS = 0.001
"""``sys.setswitchinterval`` while a reload compiles (Python's default is 0.005)."""


def fingerprint(paths: list[Path]) -> Fingerprint:
    """(path, mtime in ns, size in bytes) of every catalog file under ``paths``."""
    out = []
    for root in paths:
        files = catalog_files(root) if root.exists() else []
        for f in files:
            stat = f.stat() if f.exists() else f.lstat()  # a dead link: its own times
            out.append((str(f), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def settle_heap() -> None:
    """Move the long-lived catalog objects out of the garbage collector's way (``gc.freeze``):
    otherwise every full collection walks the compiled catalog's ~10^5 objects, which costs a
    large share of matching time at thousands of signatures (``bench/bench_engine.py``)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def dispose(engines: list[Engine]) -> None:
    """Free replaced engines a signature at a time (run in the worker thread).

    Freeing a 5,000-signature catalog in one go is one deallocation cascade of about 0.1 s that
    holds the GIL throughout; piece by piece, the event loop runs in between. Objects still used
    elsewhere (the in-memory compile cache, open groups) just lose a reference.
    """
    while engines:
        engine = engines.pop()
        signatures, engine.signatures = list(engine.signatures), ()
        engine.phase_two_seconds = {}
        del engine
        while signatures:
            signatures.pop()


class CatalogWatcher:
    """Loads the catalog and, every ``reload_interval_seconds`` or when forced, reloads it if
    its files changed, compiling in a child process (``preparer`` runs there; default
    :func:`~logsig.daemon.compile_process.prepare`). A failed reload is logged and counted; the
    running catalog stays. ``reloading``: a compile is under way or not yet handed over."""

    def __init__(self, settings: CatalogSettings, max_message_bytes: int, preparer: Preparer = prepare) -> None:
        self.settings = settings
        self.max_message_bytes = max_message_bytes
        self.cache = settings.compile_cache()
        self._preparer = preparer
        self._paths = ([builtin_path()] if settings.builtin else []) + list(settings.paths)
        self._fingerprint: Fingerprint = ()
        self._checked = time.monotonic()
        self._forced = False
        self._pending: Future[Engine] | None = None
        self._running: Engine | None = None
        self._retired: list[Engine] = []
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="logsig-catalog")

    def _compile(self) -> Engine:
        """Load and compile in this process (the first load, before the event loop runs)."""
        catalog = load_catalog(self.settings.paths, builtin=self.settings.builtin)
        _log_warnings(str(w) for w in catalog.warnings)
        return Engine(catalog.signatures, max_message_bytes=self.max_message_bytes, cache=self.cache)

    def _prepare(self) -> list[bytes]:
        """The catalog's :class:`~logsig.daemon.compile_process.Prepared`, pickled in parts by a child
        process (blocks this thread)."""
        return in_child(self._preparer, self.settings, self.max_message_bytes)

    def _compile_in_worker(self) -> Engine:
        """The new engine: compiled in a child process, then deserialised here with the cyclic
        garbage collector held off and the result frozen.

        A full collection holds the interpreter lock for as long as it walks the heap (unpickling
        5,000 signatures with the collector on stopped an event loop for about 0.25 s, with it off
        for about 0.013 s), and deserialising leaves no cyclic garbage. Meanwhile the switch
        interval is :data:`WORKER_SWITCH_INTERVAL_SECONDS`, so the event loop waits less for the
        lock each time it wakes.
        """
        parts = self._prepare()
        enabled, interval = gc.isenabled(), sys.getswitchinterval()
        gc.disable()
        sys.setswitchinterval(WORKER_SWITCH_INTERVAL_SECONDS)
        try:
            prepared = unpickle(parts)
            del parts
            engine = engine_from(prepared, self.max_message_bytes, self._running)
            gc.freeze()  # the new catalog's objects join the long-lived ones the collector skips
        finally:
            sys.setswitchinterval(interval)
            if enabled:
                gc.enable()
        _log_warnings(prepared.warnings)
        if prepared.cache_error is not None:
            log.warning("compiled catalog not cached; the next start compiles again", error=prepared.cache_error)
        return engine

    def load_initial(self, metrics: Metrics) -> Engine:
        """Load and compile the catalog (in this thread). Raises: CatalogError listing every problem."""
        self._fingerprint = fingerprint(self._paths)
        engine = self._compile()
        settle_heap()
        self._running = engine
        metrics.set_catalog(engine.signatures, now=time.time())
        log.info("catalog loaded", signatures=len(engine.signatures), from_cache=engine.compiled.from_disk)
        self._warn_cache()
        return engine

    def _warn_cache(self) -> None:
        if self.cache is not None and self.cache.last_error is not None:
            log.warning("compiled catalog not cached; the next start compiles again", error=self.cache.last_error)
            self.cache.last_error = None

    def force(self) -> None:
        """Reload at the next :meth:`poll`, changed or not."""
        self._forced = True

    @property
    def reloading(self) -> bool:
        """Whether a reload was started and :meth:`poll` has not yet collected its outcome."""
        return self._pending is not None

    def poll(self, metrics: Metrics) -> Engine | None:
        """The new engine if a reload finished now, else None; starts a reload when one is due.

        Never blocks on the compile: while it runs this answers None and the caller keeps
        matching with the engine it has.
        """
        if self._retired:
            self._executor.submit(dispose, self._retired)
            self._retired = []
        if self._pending is not None:
            return self._collect(metrics) if self._pending.done() else None
        if self._due():
            self._pending = self._executor.submit(self._compile_in_worker)
        return None

    def _due(self) -> bool:
        interval = self.settings.reload_interval_seconds
        now = time.monotonic()
        if not (self._forced or (interval > 0 and now - self._checked >= interval)):
            return False
        self._checked = now
        current = fingerprint(self._paths)
        if current == self._fingerprint and not self._forced:
            return False
        self._forced = False
        self._fingerprint = current
        return True

    def _collect(self, metrics: Metrics) -> Engine | None:
        future, self._pending = self._pending, None
        assert future is not None
        try:
            engine = future.result()
        except CatalogError as error:
            metrics.catalog_failed(now=time.time())
            log.error("catalog reload failed; keeping the running catalog", problems=[str(p) for p in error.problems])
            return None
        except Exception as error:  # any failure of the compile keeps the running catalog
            metrics.catalog_failed(now=time.time())
            log.error("catalog reload failed; keeping the running catalog", error=f"{type(error).__name__}: {error}")
            return None
        if self._running is not None:
            self._retired.append(self._running)  # freed by the worker at the next poll, once replaced
        self._running = engine
        metrics.set_catalog(engine.signatures, now=time.time())
        log.info("catalog reloaded", signatures=len(engine.signatures), from_cache=engine.compiled.from_disk)
        self._warn_cache()
        return engine

    def close(self) -> None:
        """Stop the worker thread (waits for a compile under way, and its child process)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


def _log_warnings(warnings: Iterable[str]) -> None:
    """Log each warning of a catalog that loaded (a user record overriding a built-in id)."""
    for warning in warnings:
        log.warning("catalog warning", problem=warning)
