"""Outputs the broker refuses as too large are shrunk, never dropped; when even a minimal one is
refused, logsig stops committing and says so (/readyz 503, logsig_delivery_blocked 1) until the
topic takes it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from tests.integration.daemon_proc import http_get, metric_value, start_daemon
from tests.integration.faults import line_numbers, oom_lines, wait_for
from tests.integration.kafka_util import lag, make_topic, produce, read_all, wait_committed


async def _set_max_message_bytes(bootstrap: str, topic: str, size: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                  {"max.message.bytes": str(size)})])
    finally:
        await admin.close()


class TestOversizedOutputs:
    async def test_small_topic_shrinks_then_blocks_and_loses_nothing(self, kafka_bootstrap: str,
                                                                     tmp_path: Path) -> None:
        """A 3,000-byte topic takes 40 shrunk incidents (one of a 1.1 MiB key); at 200 bytes delivery blocks
        uncommitted; raised again, every incident arrives."""
        topic = await make_topic(kafka_bootstrap, max_message_bytes=4 << 20)
        out, dlq = await make_topic(kafka_bootstrap, max_message_bytes=3000), await make_topic(kafka_bootstrap)
        await produce(kafka_bootstrap, topic, oom_lines(0, 40), keys=[None] * 39 + [b"k" * (1100 * 1024)])
        daemon = start_daemon(tmp_path, {
            "kafka": {"bootstrap_servers": kafka_bootstrap, "topics": [topic], "output_topic": out,
                      "dead_letter_topic": dlq, "group_id": "g-sizes", "fetch_timeout_ms": 200,
                      "retry_backoff_max_seconds": 1.0},
            "grouping": {"enabled": False}})
        try:
            await asyncio.to_thread(daemon.wait_ready, 120.0)
            await wait_committed(kafka_bootstrap, "g-sizes", topic, daemon)
            first = [r.value for r in await read_all(kafka_bootstrap, out, 40)]
            shrunk = metric_value(daemon.metrics(), "logsig_outputs_shrunk_total", kind="incident")
            print(f"3,000-byte topic: {len(first)} incidents written, {shrunk:.0f} after a shrink step")
            assert list(range(40)) == sorted(set(line_numbers(first)))
            assert 40 == shrunk

            await _set_max_message_bytes(kafka_bootstrap, out, 200)
            await produce(kafka_bootstrap, topic, oom_lines(100, 3))
            await asyncio.to_thread(daemon.wait_metric, "logsig_delivery_blocked", 1)
            status, body = http_get(f"{daemon.base_url}/readyz")
            assert (503, True, True) == (status, "max.message.bytes" in body, 0 < await lag(kafka_bootstrap, "g-sizes",
                                                                                        topic))
            await _set_max_message_bytes(kafka_bootstrap, out, 1_048_588)
            await wait_committed(kafka_bootstrap, "g-sizes", topic, daemon)
            await wait_for(lambda: metric_value(daemon.metrics(), "logsig_delivery_blocked") == 0, "unblocked")
            after = [r.value for r in await read_all(kafka_bootstrap, out, 43)]
            print(f"200-byte topic: blocked, /readyz 503; raised: {len(after) - len(first)} more incidents written")
            assert [100, 101, 102] == sorted(set(line_numbers(after)) - set(range(40)))
            assert 0 == daemon.terminate()
        finally:
            if daemon.process.poll() is None:
                daemon.process.kill()
