"""Kafka sink: an idempotent aiokafka producer (acks=all) for incidents and dead letters."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from logsig.config import KafkaSettings
from logsig.daemon.kafka_common import client_options
from logsig.errors import SinkError


@dataclass(frozen=True, slots=True)
class OutRecord:
    """A record to produce: ``timestamp_ms`` None lets the broker/producer stamp it."""

    topic: str
    value: bytes
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp_ms: int | None = None


class KafkaSink:
    """Produces batches and waits until the broker acknowledged every record."""

    def __init__(self, settings: KafkaSettings) -> None:
        self.settings = settings
        self._producer: AIOKafkaProducer | None = None

    async def start(self) -> None:
        """Connect. Raises: KafkaError (or OSError) if the broker is unreachable."""
        producer = AIOKafkaProducer(enable_idempotence=True, acks="all",
                                    linger_ms=self.settings.linger_ms,
                                    max_request_size=self.settings.max_request_bytes, **client_options(self.settings))
        try:
            await producer.start()
        except BaseException:
            await producer.stop()
            raise
        self._producer = producer

    async def send_all(self, records: list[OutRecord]) -> None:
        """Produce ``records`` and wait for every acknowledgement.

        Raises:
            SinkError: (retriable) if any record was not acknowledged; the caller retries the batch
            and commits nothing meanwhile.
        """
        if not records:
            return
        if self._producer is None:
            raise SinkError("Kafka sink not started", retriable=True)
        try:
            futures = [await self._producer.send(r.topic, r.value, key=r.key, headers=list(r.headers),
                                                 timestamp_ms=r.timestamp_ms) for r in records]
            await asyncio.gather(*futures)
        except KafkaError as error:
            raise SinkError(f"produce failed: {error!r}", retriable=True) from error

    async def stop(self) -> None:
        """Flush and close."""
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None
