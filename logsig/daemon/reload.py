"""Catalog reload: compile once, reload on change or SIGHUP, keep the old catalog if the new fails."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import structlog

from logsig.config import CatalogSettings
from logsig.errors import CatalogError
from logsig.matchers.catalog.loader import builtin_path, catalog_files, load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.telemetry import Metrics

log = structlog.get_logger("logsig.catalog")

Fingerprint = tuple[tuple[str, int, int], ...]


def fingerprint(paths: list[Path]) -> Fingerprint:
    """(path, mtime in ns, size in bytes) of every catalog file under ``paths``."""
    out = []
    for root in paths:
        files = catalog_files(root) if root.exists() else []
        for f in files:
            stat = f.stat()
            out.append((str(f), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def settle_heap() -> None:
    """Move the long-lived catalog objects out of the garbage collector's way (``gc.freeze``):
    otherwise every full collection walks the compiled catalog's ~10^5 objects, which costs a
    large share of matching time at thousands of signatures (``bench/bench_engine.py``)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class CatalogWatcher:
    """Loads the catalog and, every ``reload_interval_seconds`` or when forced, reloads it if
    its files changed. A failed reload is logged and counted; the running catalog stays."""

    def __init__(self, settings: CatalogSettings, max_message_bytes: int) -> None:
        self.settings = settings
        self.max_message_bytes = max_message_bytes
        self.cache = settings.compile_cache()
        self._paths = ([builtin_path()] if settings.builtin else []) + list(settings.paths)
        self._fingerprint: Fingerprint = ()
        self._checked = time.monotonic()
        self._forced = False

    def _compile(self) -> Engine:
        catalog = load_catalog(self.settings.paths, builtin=self.settings.builtin)
        engine = Engine(catalog.signatures, max_message_bytes=self.max_message_bytes, cache=self.cache)
        settle_heap()
        return engine

    def load_initial(self, metrics: Metrics) -> Engine:
        """Load and compile the catalog. Raises: CatalogError listing every problem."""
        self._fingerprint = fingerprint(self._paths)
        engine = self._compile()
        metrics.set_catalog(engine.signatures, now=time.time())
        log.info("catalog loaded", signatures=len(engine.signatures))
        return engine

    def force(self) -> None:
        """Reload at the next :meth:`poll`, changed or not."""
        self._forced = True

    def poll(self, metrics: Metrics) -> Engine | None:
        """A new engine if the catalog was reloaded now, else None."""
        interval = self.settings.reload_interval_seconds
        now = time.monotonic()
        due = interval > 0 and now - self._checked >= interval
        if not (due or self._forced):
            return None
        self._checked = now
        current = fingerprint(self._paths)
        if current == self._fingerprint and not self._forced:
            return None
        self._forced = False
        self._fingerprint = current
        try:
            engine = self._compile()
        except CatalogError as error:
            metrics.catalog_failed(now=time.time())
            log.error("catalog reload failed; keeping the running catalog", problems=[str(p) for p in error.problems])
            return None
        metrics.set_catalog(engine.signatures, now=time.time())
        log.info("catalog reloaded", signatures=len(engine.signatures))
        return engine
