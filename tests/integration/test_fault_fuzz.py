"""10^4 generated hostile records (logsig.fuzz, gzip batches, bombs included) through the real broker
and daemon: no crash, every record the decode stage refuses is on the dead-letter topic, and every
counter equals what was sent (the expected outcome of each record is the decode stage's own, offline)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from aiokafka import AIOKafkaProducer

from logsig.decode import DecodeSettings, decode_record
from logsig.fuzz import FuzzRecord, fuzz_records
from logsig.records import Origin, RawRecord
from tests.integration.daemon_proc import metric_value, start_daemon
from tests.integration.kafka_util import make_topic, read_all, wait_committed

RECORDS = 10_000


async def _produce(bootstrap: str, topic: str, records: list[tuple[bytes, bytes | None, list[tuple[str, bytes]]]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, compression_type="gzip", acks="all",
                                max_request_size=64 * 1024 * 1024)
    await producer.start()
    try:
        futures = [await producer.send(topic, v, key=k, headers=h) for v, k, h in records]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


class TestFuzz:
    async def test_ten_thousand_hostile_records(self, kafka_bootstrap: str, tmp_path: Path) -> None:
        """10,000 records of 10 hostile kinds (two bombs, a 1.1 MiB key, 300 KiB of headers): daemon alive, dead
        letters and failure counters as decoded offline."""
        topic = await make_topic(kafka_bootstrap, max_message_bytes=8 << 20)
        out, dlq = await make_topic(kafka_bootstrap), await make_topic(kafka_bootstrap, max_message_bytes=2 << 20)
        fuzzed = list(fuzz_records(RECORDS - 4, seed=7, bombs=False, key_bytes=(1024, 8192), headers=20))
        fuzzed += [FuzzRecord("huge_key", fuzzed[5].value, b"k" * (1100 * 1024)),
                   FuzzRecord("many_headers", fuzzed[6].value, None, tuple((f"h{j}", b"v" * 1024) for j in range(300)))]
        fuzzed += list(fuzz_records(10, seed=7, bomb_bytes=17 << 20, bomb_events=10_001))[-2:]
        bombs = [r for r in fuzzed if r.kind.startswith("bomb")]
        expected = Counter[str]()
        for r in fuzzed:
            result = decode_record(RawRecord(r.value, Origin(topic=topic), r.key, r.headers), DecodeSettings())
            if result.failure is not None:
                expected[result.failure.reason] += 1
        await _produce(kafka_bootstrap, topic, [(r.value, r.key, list(r.headers)) for r in fuzzed])
        daemon = start_daemon(tmp_path, {
            "kafka": {"bootstrap_servers": kafka_bootstrap, "topics": [topic], "output_topic": out,
                      "dead_letter_topic": dlq, "group_id": "g-fuzz", "fetch_timeout_ms": 200},
            "decode": {"multiline": {"enabled": False}}, "grouping": {"enabled": False}})
        try:
            await asyncio.to_thread(daemon.wait_ready, 120.0)
            await wait_committed(kafka_bootstrap, "g-fuzz", topic, daemon, timeout_s=300)
            dead = await read_all(kafka_bootstrap, dlq, sum(expected.values()), timeout_s=120)
            text = daemon.metrics()
            failed = {reason: metric_value(text, "logsig_records_failed_total", reason=reason) for reason in expected}
            consumed = metric_value(text, "logsig_records_consumed_total")
            on_topic = Counter(dict(r.headers)["logsig.reason"].decode() for r in dead)
            print(f"fuzz: {len(fuzzed)} records ({len(bombs)} bombs) consumed {consumed:.0f}; dead letters "
                  f"{len(dead)} of {sum(expected.values())} expected: {dict(sorted(on_topic.items()))}")
            assert (len(fuzzed), dict(expected), dict(expected)) == (
                consumed, {k: int(v) for k, v in failed.items()}, dict(on_topic))
            assert 0 == daemon.terminate()
        finally:
            if daemon.process.poll() is None:
                daemon.process.kill()
