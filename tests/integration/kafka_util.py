"""Kafka helpers for the daemon's integration tests: topics, producing, reading, committed lag."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.integration.daemon_proc import DaemonProcess


async def make_topic(bootstrap: str, partitions: int = 1, max_message_bytes: int | None = None,
                     name: str | None = None) -> str:
    """A new topic (uniquely named unless ``name``), returned once every partition has a leader."""
    name = name or f"it-{time.monotonic_ns()}"
    configs = {"max.message.bytes": str(max_message_bytes)} if max_message_bytes else {}
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs)])
        deadline = time.monotonic() + 30
        while True:
            described = await admin.describe_topics([name])
            leaders = [p["leader"] for t in described for p in t["partitions"]]
            if len(leaders) == partitions and all(leader >= 0 for leader in leaders):
                return name
            assert time.monotonic() < deadline, f"topic {name} has no leaders in time"
            await asyncio.sleep(0.1)
    finally:
        await admin.close()


async def produce(bootstrap: str, topic: str, values: list[bytes],
                  keys: list[bytes | None] | None = None) -> list[tuple[int, int]]:
    """Produce ``values`` in order (keys ``k{i % 7}`` unless given); returns (partition, offset) of each."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all",
                                max_request_size=16 * 1024 * 1024)
    await producer.start()
    try:
        keys = keys if keys is not None else [f"k{i % 7}".encode() for i in range(len(values))]
        futures = [await producer.send(topic, v, key=k) for v, k in zip(values, keys, strict=True)]
        return [(m.partition, m.offset) for m in await asyncio.gather(*futures)]
    finally:
        await producer.stop()


async def read_all(bootstrap: str, topic: str, minimum: int, timeout_s: float = 60.0,
                    settle: bool = True) -> list[Any]:
    """Records of ``topic`` from the start: at least ``minimum`` (unless the deadline passes), then,
    with ``settle``, until a poll comes back empty."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                enable_auto_commit=False, group_id=None)
    await consumer.start()
    try:
        out: list[Any] = []
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=300)
            out.extend(r for batch in batches.values() for r in batch)
            if len(out) >= minimum and (not settle or not batches):
                break
        return out
    finally:
        await consumer.stop()


async def lag(bootstrap: str, group_id: str, topic: str) -> int:
    """Records of ``topic`` not yet committed by ``group_id``."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await admin.start()
    await consumer.start()
    try:
        described = await admin.describe_topics([topic])
        partitions = [TopicPartition(topic, p["partition"]) for t in described for p in t["partitions"]]
        assert partitions, f"no partitions known for {topic}"
        ends = await consumer.end_offsets(partitions)
        committed = await admin.list_consumer_group_offsets(group_id)
        return sum(ends[tp] - (committed[tp].offset if tp in committed else 0) for tp in partitions)
    finally:
        await admin.close()
        await consumer.stop()


async def wait_committed(bootstrap: str, group_id: str, topic: str, daemon: DaemonProcess,
                          timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while await lag(bootstrap, group_id, topic) > 0:
        assert daemon.process.poll() is None, daemon.log()
        assert time.monotonic() < deadline, f"offsets not committed in time\n{daemon.log()}"
        await asyncio.sleep(0.2)
