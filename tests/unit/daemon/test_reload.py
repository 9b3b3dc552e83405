"""Catalog reload: on change or when forced, compiled in a child process waited for off the caller's thread; any
failure keeps the running catalog."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import pickle
import threading
import time
import weakref
from pathlib import Path

import hyperscan
import pytest
from prometheus_client import CollectorRegistry

from logsig.batch import RecordBatch, batch_of_records
from logsig.config import CatalogSettings
from logsig.daemon import runner
from logsig.daemon.compile_process import Prepared, Preparer, prepare
from logsig.daemon.offsets import OffsetTracker
from logsig.daemon.reload import CatalogWatcher
from logsig.daemon.runner import Daemon
from logsig.decode.settings import DecodeSettings
from logsig.errors import CatalogError
from logsig.matchers.engine import compiled as compiled_module
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline
from logsig.telemetry import Metrics
from logsig.testing import FakeSource, RecordingSink, fresh_metrics, make_record
from tests.unit.daemon import child_fakes

DEADLINE_SECONDS = 60.0


def _write(path: Path, regex: str, mtime: int) -> None:
    path.write_text(json.dumps({"id": "site/boom", "signature": "boom", "regex": regex, "category": "runtime_error",
                                "root_cause": "It broke."}))
    os.utime(path, (mtime, mtime))


def settle(watcher: CatalogWatcher, metrics: Metrics) -> Engine | None:
    """Poll until the reload that the first poll starts (if any) is handed over or has failed."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    engine = watcher.poll(metrics)
    while engine is None and watcher.reloading and time.monotonic() < deadline:
        time.sleep(0.005)
        engine = watcher.poll(metrics)
    return engine


def _watcher(path: Path, preparer: Preparer = prepare, **settings: object) -> CatalogWatcher:
    return CatalogWatcher(CatalogSettings(builtin=False, paths=[path], cache_max_entries=0, **settings), 65536,
                          preparer)


class TestCatalogWatcher:
    def test_reload_on_change_and_keep_old_on_error(self, tmp_path: Path) -> None:
        """A changed file gives a new engine; a broken one is counted and the old engine stays."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        watcher = _watcher(path)
        first = watcher.load_initial(metrics)
        assert settle(watcher, metrics) is None
        watcher.force()
        assert settle(watcher, metrics) is not None
        _write(path, "(broken", 2_000)
        watcher.force()
        assert settle(watcher, metrics) is None
        assert 0.0 == registry.get_sample_value("logsig_catalog_reload_success")
        assert 1.0 == registry.get_sample_value("logsig_catalog_reloads_total", {"result": "failure"})
        _write(path, "bang", 3_000)
        watcher.force()
        engine = settle(watcher, metrics)
        assert engine is not None and engine is not first
        assert ["bang"] == [s.regex for s in engine.signatures]
        assert 1.0 == registry.get_sample_value("logsig_catalog_reload_success")

    def test_interval_polls_without_force(self, tmp_path: Path) -> None:
        """With a reload interval of ~0 seconds a changed file is picked up by poll alone."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = _watcher(path, reload_interval_seconds=1e-9)
        watcher.load_initial(metrics)
        assert settle(watcher, metrics) is None
        _write(path, "bang", 2_000)
        assert settle(watcher, metrics) is not None

    def test_poll_does_not_wait_for_the_compile_which_runs_in_another_thread(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """While the compile is held, poll answers None at once; released, the next polls hand the engine over."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = _watcher(path)
        watcher.load_initial(metrics)
        release, threads = threading.Event(), []
        prepare_now = watcher._prepare

        def held() -> list[bytes]:
            threads.append(threading.get_ident())
            assert release.wait(DEADLINE_SECONDS)
            return prepare_now()

        monkeypatch.setattr(watcher, "_prepare", held)
        _write(path, "bang", 2_000)
        watcher.force()
        answers = [watcher.poll(metrics) for _ in range(3)]
        reloading = watcher.reloading
        release.set()
        engine = settle(watcher, metrics)
        assert ([None, None, None], True, ["bang"], False) == (
            answers, reloading, [s.regex for s in engine.signatures] if engine else [],
            threading.get_ident() in threads)

    @pytest.mark.parametrize("preparer", [child_fakes.vectorscan_fails, child_fakes.out_of_memory,
                                          child_fakes.disk_gone, child_fakes.dies],
                             ids=["hyperscan", "memory", "os", "child-died"])
    def test_any_failure_of_the_child_process_keeps_the_running_catalog(
            self, tmp_path: Path, preparer: Preparer) -> None:
        """Not only catalog problems: a Vectorscan error, any other exception or a dead child is a counted failed reload."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        watcher = _watcher(path, preparer)
        first = watcher.load_initial(metrics)
        _write(path, "bang", 2_000)
        watcher.force()
        outcome = settle(watcher, metrics)
        assert (None, 1.0, 0.0, False, ["boom"]) == (
            outcome, registry.get_sample_value("logsig_catalog_reloads_total", {"result": "failure"}),
            registry.get_sample_value("logsig_catalog_reload_success"), watcher.reloading,
            [s.regex for s in first.signatures])

    def test_catalog_problems_found_in_the_child_are_logged_with_each_problem(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A CatalogError raised in the child comes back with its problems, which the failure's log line lists."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = _watcher(path)
        watcher.load_initial(metrics)
        _write(path, "(broken", 2_000)
        watcher.force()
        outcome = settle(watcher, metrics)
        logged = capsys.readouterr().out
        assert (None, True, True) == (outcome, "catalog reload failed; keeping the running catalog" in logged,
                                      "site/boom: regex: does not compile" in logged)

    def test_a_failed_reload_logs_every_problem_of_a_record(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A record missing its signature and holding a regex that does not compile logs both problems."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = _watcher(path)
        watcher.load_initial(metrics)
        path.write_text(json.dumps({"id": "site/boom", "regex": "(broken", "category": "runtime_error",
                                    "root_cause": "It broke."}))
        os.utime(path, (2_000, 2_000))
        watcher.force()
        outcome = settle(watcher, metrics)
        logged = capsys.readouterr().out
        assert (None, True, True) == (outcome, "site/boom: signature: Field required" in logged,
                                      "site/boom: regex: does not compile: missing )" in logged)

    def test_a_record_catalog_check_refuses_is_refused_at_start_and_reload(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """An id that is not <domain>/<slug> stops the first load and fails a reload, which keeps the old catalog."""
        path = tmp_path / "site.json"
        record = {"id": "SiteBoom", "signature": "boom", "regex": "boom", "category": "runtime_error",
                  "root_cause": "It broke."}
        path.write_text(json.dumps(record))
        with pytest.raises(CatalogError, match=f"{path}: SiteBoom: id: id is not <domain>/<slug>"):
            _watcher(path).load_initial(Metrics(CollectorRegistry()))
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = _watcher(path)
        first = watcher.load_initial(metrics)
        path.write_text(json.dumps(record))
        os.utime(path, (2_000, 2_000))
        watcher.force()
        outcome = settle(watcher, metrics)
        logged = capsys.readouterr().out
        assert (None, True, ["site/boom"]) == (outcome, "SiteBoom: id: id is not <domain>/<slug>" in logged,
                                               [s.id for s in first.signatures])

    def test_a_warning_of_the_catalog_is_logged_and_the_catalog_loads(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A record overriding a built-in id loads, at start and on reload, with a logged warning naming it."""
        path = tmp_path / "site.json"
        record = {"id": "cuda/torch-oom", "signature": "boom", "regex": "boom", "category": "runtime_error",
                  "root_cause": "It broke."}
        path.write_text(json.dumps(record))
        os.utime(path, (1_000, 1_000))
        metrics = Metrics(CollectorRegistry())
        watcher = CatalogWatcher(CatalogSettings(paths=[path], cache_max_entries=0), 65536, prepare)
        first = watcher.load_initial(metrics)
        at_start = capsys.readouterr().out
        path.write_text(json.dumps({**record, "regex": "bang"}))
        os.utime(path, (2_000, 2_000))
        watcher.force()
        engine = settle(watcher, metrics)
        on_reload = capsys.readouterr().out
        words = f"{path}: cuda/torch-oom: overrides the built-in signature"
        assert (["boom"], ["bang"], True, True) == (
            [s.regex for s in first.signatures if s.id == "cuda/torch-oom"],
            [s.regex for s in engine.signatures if s.id == "cuda/torch-oom"] if engine else None,
            words in at_start, words in on_reload)

    def test_an_answer_that_does_not_verify_keeps_the_running_catalog(self, tmp_path: Path) -> None:
        """A compiled form that belongs to other regexes than the signatures it came with is a failed reload."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        watcher = _watcher(path)
        watcher.load_initial(metrics)
        _write(path, "bang", 2_000)
        other = prepare(CatalogSettings(builtin=False, paths=[path], cache_max_entries=0), 65536)
        _write(path, "bam", 3_000)
        mismatched = Prepared(prepare(watcher.settings, 65536).signatures, other.payload)
        compiled_module.clear_cache()
        watcher._prepare = lambda: [pickle.dumps(mismatched)]  # type: ignore[method-assign]
        watcher.force()
        outcome = settle(watcher, metrics)
        assert (None, 1.0) == (outcome, registry.get_sample_value("logsig_catalog_reloads_total",
                                                                   {"result": "failure"}))

    def test_the_compile_runs_in_another_process(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A compile that would fail in the daemon's process does not touch the reload, which compiles elsewhere."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = _watcher(path)
        watcher.load_initial(metrics)

        def failing(_key: str, _regexes: list[str]) -> None:
            raise hyperscan.error("compiled in the daemon's process")

        monkeypatch.setattr(compiled_module, "_build", failing)
        compiled_module.clear_cache()
        _write(path, "bang", 2_000)
        watcher.force()
        engine = settle(watcher, metrics)
        assert ["bang"] == ([s.regex for s in engine.signatures] if engine else [])

    def test_unchanged_regexes_keep_their_compiled_confirmers(self, tmp_path: Path) -> None:
        """After a reload the confirmer of a signature whose regex did not change is the running one, RE2 compiled."""
        path, other = tmp_path / "site.json", tmp_path / "other.json"
        _write(path, "boom", 1_000)
        other.write_text(json.dumps({"id": "site/bang", "signature": "bang", "regex": "bang", "category": "runtime_error", "root_cause": "It broke."}))
        metrics = Metrics(CollectorRegistry())
        watcher = CatalogWatcher(CatalogSettings(builtin=False, paths=[tmp_path], cache_max_entries=0), 65536)
        first = watcher.load_initial(metrics)
        _write(path, "bam", 2_000)
        watcher.force()
        engine = settle(watcher, metrics)
        kept = {s.regex: c for s, c in zip(engine.signatures, engine.compiled.confirmers, strict=True)} if engine else {}
        old = dict(zip([s.regex for s in first.signatures], first.compiled.confirmers, strict=True))
        assert (True, ["site/bang"]) == (kept["bang"] is old["bang"],
                                         [m.signature.id for m in engine.match("bang")] if engine else [])

    def test_worker_compile_restores_the_collector_state(self, tmp_path: Path) -> None:
        """The collector, held off during the worker's compile, is enabled again afterwards."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = _watcher(path)
        watcher.load_initial(metrics)
        _write(path, "bang", 2_000)
        watcher.force()
        engine = settle(watcher, metrics)
        assert (True, ["bang"]) == (gc.isenabled(), [s.regex for s in engine.signatures] if engine else [])


class _GatedSource(FakeSource):
    """A FakeSource whose script may hold conditions: a callable step is waited for (empty polls) until true."""

    async def poll(self) -> RecordBatch:
        """An empty batch while the next step is an unmet condition, else the FakeSource's next step."""
        step = self.script[0] if self.script else None
        if callable(step):
            await asyncio.sleep(0.002)
            if step():
                self.script.pop(0)
            return batch_of_records([])
        return await super().poll()


class TestReloadInTheDaemon:
    async def test_daemon_consumes_with_the_old_catalog_while_the_new_one_compiles(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Records polled during a held compile are matched by the running catalog; after it, by the new one."""
        monkeypatch.setattr(runner, "LAG_INTERVAL_SECONDS", 0.0)
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = fresh_metrics()
        watcher = _watcher(path)
        pipeline = Pipeline(watcher.load_initial(metrics), DecodeSettings())
        started, release = threading.Event(), threading.Event()
        prepare_now = watcher._prepare

        def held() -> list[bytes]:
            started.set()
            assert release.wait(DEADLINE_SECONDS)
            return prepare_now()

        monkeypatch.setattr(watcher, "_prepare", held)

        def change_catalog() -> bool:
            _write(path, "bang", 2_000)
            daemon.request_reload()
            return True

        def new_catalog_running() -> bool:
            return [s.regex for s in daemon.pipeline.engine.signatures] == ["bang"]

        sink = RecordingSink()
        source = _GatedSource([
            [make_record("boom", 0)], change_catalog, started.is_set,
            [make_record("boom", 1), make_record("bang", 2)], lambda: release.set() or True, new_catalog_running,
            [make_record("boom", 3), make_record("bang", 4)]], {("logs", 0)})
        daemon = Daemon(source, pipeline, [sink], OffsetTracker(), metrics, watcher=watcher,
                        retry_backoff_max_seconds=0.01)
        source.when_done = daemon.stop_event.set
        await asyncio.wait_for(daemon.run(), timeout=DEADLINE_SECONDS)
        assert ([(0, "boom"), (1, "boom"), (4, "bang")], {("logs", 0): 5}) == (
            [(d.event.origin.offset, d.matches[0].signature.regex) for d in sink.incidents()], source.committed())

    async def test_a_failed_reload_leaves_the_daemon_matching_with_the_old_catalog(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A Vectorscan error in the reload's compile is counted; the old catalog goes on matching."""
        monkeypatch.setattr(runner, "LAG_INTERVAL_SECONDS", 0.0)
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = fresh_metrics()
        watcher = _watcher(path, child_fakes.vectorscan_fails)
        pipeline = Pipeline(watcher.load_initial(metrics), DecodeSettings())

        def change_catalog() -> bool:
            _write(path, "bang", 2_000)
            daemon.request_reload()
            return True

        def reload_failed() -> bool:
            return metrics.registry.get_sample_value("logsig_catalog_reloads_total", {"result": "failure"}) == 1.0

        sink = RecordingSink()
        source = _GatedSource([change_catalog, reload_failed, [make_record("boom", 0), make_record("bang", 1)]],
                              {("logs", 0)})
        daemon = Daemon(source, pipeline, [sink], OffsetTracker(), metrics, watcher=watcher,
                        retry_backoff_max_seconds=0.01)
        source.when_done = daemon.stop_event.set
        await asyncio.wait_for(daemon.run(), timeout=DEADLINE_SECONDS)
        assert [(0, "boom")] == [(d.event.origin.offset, d.matches[0].signature.regex) for d in sink.incidents()]


class TestDispose:
    def test_replaced_engine_is_freed_by_the_worker_after_the_next_poll(self, tmp_path: Path) -> None:
        """Once a reload handed the new engine over, the next poll has the worker thread free the old one."""
        path = tmp_path / "site.json"
        _write(path, "boom", 1_000)
        metrics = Metrics(CollectorRegistry())
        watcher = _watcher(path)
        freed_in: list[int] = []
        weakref.finalize(watcher.load_initial(metrics), lambda: freed_in.append(threading.get_ident()))
        _write(path, "bang", 2_000)
        watcher.force()
        new = settle(watcher, metrics)
        kept = list(freed_in)
        watcher.poll(metrics)
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not freed_in and time.monotonic() < deadline:
            time.sleep(0.005)
        assert ([], 1, False, ["bang"]) == (kept, len(freed_in), threading.get_ident() in freed_in,
                                            [s.regex for s in new.signatures] if new else [])
