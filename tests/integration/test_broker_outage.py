"""A broker that is not there yet: logsig waits, stays alive and unready, then works when it appears."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson

from logsig.matchers.catalog.loader import load_catalog
from tests.integration.daemon_proc import free_port, http_get, start_daemon
from tests.integration.kafka_util import make_topic, produce, read_all
from tests.integration.local_kafka import load_kafka_script

SEED_ID = "llm/vllm-cuda-oom-during-prefill"


async def _wait_for(predicate, timeout_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not predicate():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.1)


class TestBrokerOutage:
    async def test_daemon_waits_for_a_late_broker(self, tmp_path: Path) -> None:
        """With no broker, logsig retries with backoff (alive, not ready); once one starts it consumes."""
        port = free_port()
        settings = {"kafka": {"bootstrap_servers": f"127.0.0.1:{port}", "topics": ["late-logs"],
                              "output_topic": "late-incidents", "dead_letter_topic": "late-dlq",
                              "retry_backoff_max_seconds": 1.0, "fetch_timeout_ms": 200},
                    "grouping": {"enabled": False}}
        daemon = start_daemon(tmp_path, settings)
        kafka = load_kafka_script()
        state = tmp_path / "late-broker"
        try:
            await _wait_for(lambda: "retrying" in daemon.log())
            assert daemon.process.poll() is None
            assert 200 == http_get(f"{daemon.base_url}/healthz")[0]
            assert 503 == http_get(f"{daemon.base_url}/readyz")[0]
            bootstrap = str(kafka.start(state, port=port).bootstrap)
            for name in ("late-logs", "late-incidents", "late-dlq"):
                await make_topic(bootstrap, name=name)
            await asyncio.to_thread(daemon.wait_ready, 120.0)
            oom = load_catalog().by_id()[SEED_ID].signature
            await produce(bootstrap, "late-logs", [oom.encode()])
            incidents = [orjson.loads(r.value) for r in await read_all(bootstrap, "late-incidents", 1)]
            assert ["cuda/torch-oom"] == [i["signature"]["id"] for i in incidents]  # a plain line: server unknown
            assert 0 == daemon.terminate()
        finally:
            if daemon.process.poll() is None:
                daemon.process.kill()
            kafka.stop(state)

    async def test_sigterm_while_waiting_for_the_broker_exits_cleanly(self, tmp_path: Path) -> None:
        """A SIGTERM during the reconnect backoff stops the daemon with exit code 0."""
        settings = {"kafka": {"bootstrap_servers": f"127.0.0.1:{free_port()}", "retry_backoff_max_seconds": 5.0}}
        daemon = start_daemon(tmp_path, settings)
        await _wait_for(lambda: "retrying" in daemon.log())
        assert 0 == daemon.terminate(timeout_s=30)
