"""SIGTERM while the broker is gone mid-delivery, against a real broker stopped under the daemon: the
drain is cut at ``shutdown_timeout_seconds`` (or at once on a second signal), exit code 1, and the log
says what was not delivered or committed."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import create_topic, produce_values
from tests.integration.daemon_proc import DaemonProcess, start_daemon
from tests.integration.local_kafka import load_kafka_script
from tests.integration.stream_check import line

LINES = 40_000
EXIT_DEADLINE_S = 90.0


@pytest.fixture
def own_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path, str]]:
    """``(kafka script, state dir, bootstrap)`` of a broker of this test's own (it is stopped mid-test)."""
    kafka = load_kafka_script()
    state = tmp_path_factory.mktemp("gone-broker")
    try:
        yield kafka, state, kafka.start(state, timeout_s=180.0).bootstrap
    finally:
        kafka.stop(state)


def _exit_code(daemon: DaemonProcess) -> int:
    """Wait for the daemon to exit (it is killed past :data:`EXIT_DEADLINE_S`, failing the test)."""
    deadline = time.monotonic() + EXIT_DEADLINE_S
    while daemon.process.poll() is None:
        if time.monotonic() > deadline:
            daemon.process.kill()
            raise AssertionError(f"logsig still running {EXIT_DEADLINE_S} s after SIGTERM:\n{daemon.log()}")
        time.sleep(0.2)
    return daemon.process.returncode


def _events(daemon: DaemonProcess, prefix: str) -> list[dict[str, Any]]:
    """The daemon's JSON log events whose message starts with ``prefix``."""
    lines = [json.loads(t) for t in daemon.log_path.read_text(errors="replace").splitlines() if t.startswith("{")]
    return [e for e in lines if str(e.get("event", "")).startswith(prefix)]


async def _daemon_mid_delivery(own_broker: tuple[Any, Path, str], tmp_path: Path,
                               shutdown_timeout_seconds: float) -> DaemonProcess:
    """A daemon reading :data:`LINES` matching lines, its broker stopped once it has consumed some."""
    kafka, state, bootstrap = own_broker
    source, output, dlq = [await create_topic(bootstrap, prefix=p) for p in ("in", "out", "dlq")]
    daemon = start_daemon(tmp_path, {
        "kafka": {"bootstrap_servers": bootstrap, "topics": [source], "output_topic": output,
                  "dead_letter_topic": dlq, "group_id": "gone", "fetch_timeout_ms": 200,
                  "retry_backoff_max_seconds": 2.0},
        "grouping": {"enabled": False}, "shutdown_timeout_seconds": shutdown_timeout_seconds})
    daemon.wait_ready(120.0)
    await produce_values(bootstrap, source, [line(n) for n in range(LINES)])
    daemon.wait_metric("logsig_records_consumed_total", 1, timeout_s=90.0)
    kafka.stop(state)
    return daemon


class TestBrokerGoneAtStop:
    async def test_sigterm_ends_within_the_shutdown_timeout(self, own_broker: tuple[Any, Path, str],
                                                           tmp_path: Path) -> None:
        """Broker stopped mid-delivery, then SIGTERM: the daemon exits 1 after logging the drain was cut
        short by the timeout."""
        daemon = await _daemon_mid_delivery(own_broker, tmp_path, shutdown_timeout_seconds=5.0)
        daemon.process.send_signal(signal.SIGTERM)
        code = _exit_code(daemon)
        assert (1, ["shutdown_timeout_seconds (5 s) passed"]) == (
            code, [e["reason"] for e in _events(daemon, "drain cut short")]), daemon.log()

    async def test_second_sigterm_ends_the_drain_at_once(self, own_broker: tuple[Any, Path, str],
                                                         tmp_path: Path) -> None:
        """With a ten-minute shutdown timeout, a second SIGTERM makes the daemon exit 1 saying so."""
        daemon = await _daemon_mid_delivery(own_broker, tmp_path, shutdown_timeout_seconds=600.0)
        daemon.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + EXIT_DEADLINE_S
        while not _events(daemon, "signal received; draining"):
            assert time.monotonic() < deadline, daemon.log()
            time.sleep(0.1)
        daemon.process.send_signal(signal.SIGTERM)
        code = _exit_code(daemon)
        assert (1, ["a second stop signal"]) == (code, [e["reason"] for e in _events(daemon, "drain cut short")]), \
            daemon.log()
