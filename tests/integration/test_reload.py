"""Catalog reload on SIGHUP in `logsig run` against the real broker: the new catalog matches; a broken one
is refused and the running catalog goes on matching."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import orjson

from tests.integration.conftest import consume_records, create_topic, produce_values
from tests.integration.daemon_proc import DaemonProcess, metric_value, start_daemon

DEADLINE_S = 90.0


def _catalog(path: Path, sig_id: str, regex: str) -> None:
    path.write_text(json.dumps({"id": sig_id, "signature": regex, "regex": regex, "category": "runtime_error", "root_cause": "It broke."}))


async def _daemon(bootstrap: str, tmp_path: Path) -> tuple[DaemonProcess, str, str, Path]:
    topic, out, dlq = [await create_topic(bootstrap) for _ in range(3)]
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    _catalog(catalog / "site.json", "site/boom", "boom happened")
    settings: dict[str, Any] = {
        "kafka": {"bootstrap_servers": bootstrap, "topics": [topic], "output_topic": out, "dead_letter_topic": dlq,
                  "group_id": f"g-{topic}", "fetch_timeout_ms": 200},
        "catalog": {"builtin": False, "paths": [str(catalog)], "cache_dir": str(tmp_path / "cache")}}
    return start_daemon(tmp_path, settings), topic, out, catalog


def _reloads(daemon: DaemonProcess, result: str, count: float) -> None:
    """Poll until ``logsig_catalog_reloads_total{result}`` reaches ``count``."""
    daemon.wait_metric("logsig_catalog_reloads_total", count, timeout_s=DEADLINE_S, result=result)


async def _incident_ids(bootstrap: str, out: str, count: int) -> list[str]:
    records = await consume_records(bootstrap, out, count, timeout_s=DEADLINE_S)
    return [orjson.loads(r.value or b"{}")["signature"]["id"] for r in records]


class TestReloadOnSighup:
    async def test_the_reloaded_catalog_matches(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """After SIGHUP with a changed file, a line of the new signature gives an incident of it."""
        daemon, topic, out, catalog = await _daemon(kafka_bootstrap, tmp_path)
        try:
            daemon.wait_ready()
            _catalog(catalog / "site.json", "site/bang", "bang happened")
            daemon.process.send_signal(signal.SIGHUP)
            _reloads(daemon, "success", 2)
            await produce_values(kafka_bootstrap, topic, [b"boom happened here", b"bang happened here"])
            assert (["site/bang"], 1.0) == (await _incident_ids(kafka_bootstrap, out, 1),
                                            metric_value(daemon.metrics(), "logsig_catalog_reload_success"))
        finally:
            assert 0 == daemon.terminate()

    async def test_a_broken_catalog_is_refused_and_the_running_one_goes_on(
            self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """A regex that does not compile fails the reload (counted, logged); the old signature still matches."""
        daemon, topic, out, catalog = await _daemon(kafka_bootstrap, tmp_path)
        try:
            daemon.wait_ready()
            _catalog(catalog / "site.json", "site/bang", "(bang")
            daemon.process.send_signal(signal.SIGHUP)
            _reloads(daemon, "failure", 1)
            await produce_values(kafka_bootstrap, topic, [b"boom happened here"])
            ids = await _incident_ids(kafka_bootstrap, out, 1)
            deadline = time.monotonic() + DEADLINE_S
            while "catalog reload failed" not in daemon.log_path.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            failed = [json.loads(line) for line in daemon.log_path.read_text().splitlines()
                      if "catalog reload failed" in line]
            assert (["site/boom"], 0.0, 1) == (
                ids, metric_value(daemon.metrics(), "logsig_catalog_reload_success"),
                sum(1 for e in failed if any("site/bang: regex: does not compile" in p for p in e["problems"])))
        finally:
            assert 0 == daemon.terminate()
