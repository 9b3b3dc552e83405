"""The broker goes away while the daemon runs (stopped, then started again on its data and port):
the daemon stays up, reports not ready meanwhile, and goes on matching once the broker is back."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.integration.conftest import consume_records, create_topic, produce_values
from tests.integration.daemon_proc import http_get, start_daemon
from tests.integration.local_kafka import load_kafka_script
from tests.integration.stream_check import line

OUTAGE_S = 30.0


@pytest.fixture
def own_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path, str]]:
    """``(kafka script, state dir, bootstrap)`` of a broker of this test's own (the session's broker
    is shared by other tests)."""
    kafka = load_kafka_script()
    state = tmp_path_factory.mktemp("outage-broker")
    try:
        yield kafka, state, kafka.start(state, timeout_s=180.0).bootstrap
    finally:
        kafka.stop(state)


def _wait(predicate: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"{what} not seen in {timeout_s} s"
        time.sleep(0.2)


class TestBrokerGone:
    async def test_daemon_survives_the_broker_going_away_and_resumes(
            self, own_broker: tuple[Any, Path, str], tmp_path: Path) -> None:
        """Broker down for 30 s: /readyz answers 503 meanwhile and the process never exits; once the
        broker is back, /readyz is 200 again and a line sent then gets its incident."""
        kafka, state, bootstrap = own_broker
        source, output, dlq = [await create_topic(bootstrap, prefix=p) for p in ("in", "out", "dlq")]
        daemon = start_daemon(tmp_path, {
            "kafka": {"bootstrap_servers": bootstrap, "topics": [source], "output_topic": output,
                      "dead_letter_topic": dlq, "group_id": "outage", "fetch_timeout_ms": 200,
                      "retry_backoff_max_seconds": 2.0, "metadata_max_age_ms": 3000},
            "grouping": {"enabled": False}})
        try:
            daemon.wait_ready(120.0)
            kafka.stop(state)
            _wait(lambda: http_get(f"{daemon.base_url}/readyz", timeout=2.0)[0] == 503, 60.0,
                  "/readyz 503 while the broker is down")
            down_until = time.monotonic() + OUTAGE_S
            while time.monotonic() < down_until:
                assert daemon.process.poll() is None, daemon.log()
                time.sleep(0.5)
            kafka.restart(state, timeout_s=180.0)
            daemon.wait_ready(120.0)
            await produce_values(bootstrap, source, [line(7)])
            incidents = [orjson.loads(r.value) for r in await consume_records(bootstrap, output, 1, timeout_s=90.0)]
            assert ([line(7).decode()], None) == ([i["match"]["line"] for i in incidents], daemon.process.poll())
            assert 0 == daemon.terminate()
        finally:
            if daemon.process.poll() is None:
                daemon.process.kill()
