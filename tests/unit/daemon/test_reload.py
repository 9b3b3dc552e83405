"""Catalog reload: on change or when forced; a broken catalog keeps the running one."""

import json
import os
from pathlib import Path

from prometheus_client import CollectorRegistry

from logsig.config import CatalogSettings
from logsig.daemon.reload import CatalogWatcher
from logsig.telemetry import Metrics


def _write(path: Path, regex: str, mtime: int) -> None:
    path.write_text(json.dumps({"id": "site/boom", "signature": "boom", "regex": regex}))
    os.utime(path, (mtime, mtime))


class TestCatalogWatcher:
    def test_reload_on_change_and_keep_old_on_error(self, tmp_path: Path) -> None:
        """A changed file gives a new engine; a broken one is counted and the old engine stays."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        watcher = CatalogWatcher(CatalogSettings(builtin=False, paths=[path]), 65536)
        first = watcher.load_initial(metrics)
        assert watcher.poll(metrics) is None
        watcher.force()
        assert watcher.poll(metrics) is not None
        _write(path, "(broken", 2_000)
        watcher.force()
        assert watcher.poll(metrics) is None
        assert 0.0 == registry.get_sample_value("logsig_catalog_reload_success")
        assert 1.0 == registry.get_sample_value("logsig_catalog_reloads_total", {"result": "failure"})
        _write(path, "bang", 3_000)
        watcher.force()
        engine = watcher.poll(metrics)
        assert engine is not None and engine is not first
        assert ["bang"] == [s.regex for s in engine.signatures]
        assert 1.0 == registry.get_sample_value("logsig_catalog_reload_success")

    def test_interval_polls_without_force(self, tmp_path: Path) -> None:
        """With a reload interval of ~0 seconds a changed file is picked up by poll alone."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = CatalogWatcher(CatalogSettings(builtin=False, paths=[path], reload_interval_seconds=1e-9), 65536)
        watcher.load_initial(metrics)
        assert watcher.poll(metrics) is None
        _write(path, "bang", 2_000)
        assert watcher.poll(metrics) is not None
