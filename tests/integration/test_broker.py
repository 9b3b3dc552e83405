"""Round trip through the real broker: idempotent producer, consumer group, committed offsets."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

Helper = Callable[..., Awaitable[Any]]


async def _end_offsets(
    bootstrap: str, partitions: list[TopicPartition]
) -> dict[TopicPartition, int]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        return dict(await consumer.end_offsets(partitions))
    finally:
        await consumer.stop()


async def _committed(bootstrap: str, group_id: str) -> dict[TopicPartition, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group_id)
        return {partition: meta.offset for partition, meta in offsets.items()}
    finally:
        await admin.close()


class TestBrokerRoundTrip:
    async def test_idempotent_producer_writes_each_value_once_in_order(
        self, new_topic: Helper, produce: Helper, consume: Helper
    ) -> None:
        """Values sent with acks=all land once each, at consecutive offsets, read back in order."""
        topic = await new_topic()
        values = [f"line-{index}".encode() for index in range(25)]

        sent = await produce(topic, values)
        records = await consume(topic, len(values))

        assert list(range(len(values))) == [meta.offset for meta in sent]
        assert values == [record.value for record in records]

    async def test_group_commit_reaches_end_offsets(
        self, kafka_bootstrap: str, new_topic: Helper, produce: Helper, consume: Helper
    ) -> None:
        """A group that reads every record and commits has committed offset == end offset."""
        topic = await new_topic(partitions=2)
        partitions = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        await produce(topic, [b"a0", b"a1", b"a2"], partition=0)
        await produce(topic, [b"b0", b"b1"], partition=1)
        group_id = f"group-{topic}"

        expected_values = [b"a0", b"a1", b"a2", b"b0", b"b1"]
        expected_ends = {partitions[0]: 3, partitions[1]: 2}

        records = await consume(topic, 5, group_id=group_id, commit=True)

        end_offsets = await _end_offsets(kafka_bootstrap, partitions)
        assert expected_values == sorted(record.value for record in records)
        assert expected_ends == end_offsets
        assert end_offsets == await _committed(kafka_bootstrap, group_id)
