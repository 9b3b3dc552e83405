"""Fixtures for tests against a real Kafka broker.

``kafka_bootstrap`` is ``LOGSIG_TEST_BOOTSTRAP`` when set, else a broker started once per session
by ``deploy/local/kafka.py`` in ``LOGSIG_TEST_STATE_DIR`` (or a temporary dir) and stopped at the
end. ``new_topic``, ``produce`` and ``consume`` return async helpers bound to that broker; each
opens its own clients inside the calling test's event loop. Every test under this folder is
marked ``integration``.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import RecordMetadata

from tests.integration.local_kafka import load_kafka_script

HERE = Path(__file__).resolve().parent
BROKER_START_TIMEOUT_S = 180.0
TOPIC_READY_TIMEOUT_S = 30.0

NewTopicFn = Callable[..., Awaitable[str]]
ProduceFn = Callable[..., Awaitable[list[RecordMetadata]]]
ConsumeFn = Callable[..., Awaitable[list[ConsumerRecord[bytes, bytes]]]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test collected from tests/integration as ``integration``."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Bootstrap address ``"host:port"`` of the session's broker."""
    given = os.environ.get("LOGSIG_TEST_BOOTSTRAP")
    if given:
        yield given
        return
    kafka = load_kafka_script()
    state_dir = Path(os.environ.get("LOGSIG_TEST_STATE_DIR") or tmp_path_factory.mktemp("kafka"))
    broker = kafka.start(state_dir, timeout_s=BROKER_START_TIMEOUT_S)
    try:
        yield str(broker.bootstrap)
    finally:
        kafka.stop(state_dir)


async def create_topic(bootstrap: str, partitions: int = 1, prefix: str = "it") -> str:
    """Create a uniquely named topic with ``partitions`` partitions (RF 1) and return its name.

    Returns once every partition has a leader; raises AssertionError past the deadline.
    """
    name = f"{prefix}-{uuid.uuid4().hex[:12]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, replication_factor=1)])
        deadline = time.monotonic() + TOPIC_READY_TIMEOUT_S
        while not _has_leaders(await admin.describe_topics([name]), partitions):
            assert time.monotonic() < deadline, f"topic {name} has no leaders in time"
            await asyncio.sleep(0.1)
    finally:
        await admin.close()
    return name


def _has_leaders(described: list[dict[str, Any]], partitions: int) -> bool:
    found = [p for topic in described if topic["error_code"] == 0 for p in topic["partitions"]]
    return len(found) == partitions and all(p["leader"] >= 0 for p in found)


async def produce_values(bootstrap: str, topic: str, values: list[bytes],
                         partition: int | None = None) -> list[RecordMetadata]:
    """Send ``values`` in order with an idempotent producer (acks=all); return their metadata."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all")
    await producer.start()
    try:
        sent = [await producer.send(topic, value, partition=partition) for value in values]
        return list(await asyncio.gather(*sent))
    finally:
        await producer.stop()


async def consume_records(bootstrap: str, topic: str, count: int, timeout_s: float = 30.0,
                          group_id: str | None = None,
                          commit: bool = False) -> list[ConsumerRecord[bytes, bytes]]:
    """Read ``topic`` from the earliest offset until ``count`` records or ``timeout_s`` seconds.

    With ``group_id`` the consumer joins that group; ``commit`` commits the positions reached.
    Returns the records in arrival order (possibly fewer than ``count`` at the deadline).
    """
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group_id,
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    try:
        records: list[ConsumerRecord[bytes, bytes]] = []
        deadline = time.monotonic() + timeout_s
        while len(records) < count and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=200, max_records=count - len(records))
            records.extend(record for batch in batches.values() for record in batch)
        if commit:
            await consumer.commit()
        return records
    finally:
        await consumer.stop()


@pytest.fixture
def new_topic(kafka_bootstrap: str) -> NewTopicFn:
    """``await new_topic(partitions=1)`` creates a fresh topic and returns its name."""
    return lambda partitions=1, prefix="it": create_topic(kafka_bootstrap, partitions, prefix)


@pytest.fixture
def produce(kafka_bootstrap: str) -> ProduceFn:
    """``await produce(topic, values, partition=None)`` sends values; see ``produce_values``."""
    return lambda topic, values, partition=None: produce_values(
        kafka_bootstrap, topic, values, partition)


@pytest.fixture
def consume(kafka_bootstrap: str) -> ConsumeFn:
    """``await consume(topic, count, timeout_s=30, group_id=None, commit=False)``; see above."""
    return lambda topic, count, **options: consume_records(kafka_bootstrap, topic, count, **options)
